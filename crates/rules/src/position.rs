//! A position: two bitboards, the side to move and the board; its text form and the
//! initial position of every board.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::geometry::{Bitboard, Board, BoardError};

/// A side; "white" and "black" in text (records, answers, the command line).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    White,
    Black,
}

impl Color {
    #[inline]
    pub fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// The colour as one byte in stored records and messages: 0 White, 1 Black.
    pub fn byte(self) -> u8 {
        match self {
            Color::White => 0,
            Color::Black => 1,
        }
    }

    /// The colour `byte` stands for, as `byte` writes it.
    pub fn from_byte(byte: u8) -> Option<Color> {
        match byte {
            0 => Some(Color::White),
            1 => Some(Color::Black),
            _ => None,
        }
    }

    /// The colour `name` names ("white" or "black"), as `name` writes it.
    pub fn from_name(name: &str) -> Option<Color> {
        match name {
            "white" => Some(Color::White),
            "black" => Some(Color::Black),
            _ => None,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a position's text was refused. Its rows are named by rank as the board numbers them
/// (rank 1 is the bottom row, the text's last), and its columns by file letter, so an error
/// names the point it is about as a move would.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PositionError {
    #[error("empty position: expected rows separated by '/', a space and 'w' or 'b'")]
    Empty,
    #[error("missing side to move: add ' w' or ' b' after the rows")]
    MissingSide,
    #[error("wrong side to move '{0}': expected 'w' or 'b'")]
    BadSide(String),
    #[error("unexpected text after the side to move: '{0}'")]
    Trailing(String),
    /// `col` counts from 1 at file a.
    #[error("unknown character '{ch}' at {} (rank {rank}): expected 'W', 'B' or '.'", point_at(*col, *rank))]
    UnknownChar { rank: usize, col: usize, ch: char },
    /// `top` is the rank of the text's first row, the one the others are measured against.
    #[error(
        "ragged rows: rank {rank} has {len} points but rank {top} (the top row) has {expected}"
    )]
    Ragged {
        rank: usize,
        top: usize,
        len: usize,
        expected: usize,
    },
    #[error("empty rank {rank}")]
    EmptyRow { rank: usize },
    #[error(transparent)]
    Board(#[from] BoardError),
}

/// A point's name in an error: file and rank (`b2`) where the column has a letter, else
/// the column's number (a malformed row can be longer than the alphabet).
fn point_at(col: usize, rank: usize) -> String {
    match u8::try_from(col) {
        Ok(c @ 1..=26) => format!("{}{rank}", char::from(b'a' + c - 1)),
        _ => format!("column {col}"),
    }
}

/// A position: which points hold White and Black pieces, who moves, on which board.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    board: Board,
    side: Color,
    white: Bitboard,
    black: Bitboard,
}

impl Position {
    /// A position from its parts; `white` and `black` must be disjoint sets of the board's points.
    pub fn from_parts(board: Board, white: Bitboard, black: Bitboard, side: Color) -> Position {
        Position::checked_parts(board, white, black, side)
            .expect("pieces must be disjoint points of the board")
    }

    /// A position from parts read from outside (a store, a message): `None` unless `white`
    /// and `black` are disjoint sets of the board's points.
    pub fn checked_parts(
        board: Board,
        white: Bitboard,
        black: Bitboard,
        side: Color,
    ) -> Option<Position> {
        let all = board.geometry().all;
        (white & black == 0 && (white | black) & !all == 0).then_some(Position {
            board,
            side,
            white,
            black,
        })
    }

    /// The initial position (docs/RULES.md): White below the middle row, Black above it, the
    /// middle row alternating from Black on `a` with its centre empty, the right half the left
    /// turned.
    pub fn initial(board: Board) -> Position {
        let (rows, cols) = (board.rows(), board.cols());
        let mid = rows / 2;
        let (mut white, mut black) = (0u64, 0u64);
        for row in 0..rows {
            for col in 0..cols {
                let bit = 1u64 << board.point(col, row);
                if row < mid {
                    white |= bit;
                } else if row > mid {
                    black |= bit;
                } else if col < cols / 2 {
                    if col % 2 == 0 {
                        black |= bit
                    } else {
                        white |= bit
                    }
                } else if col > cols / 2 {
                    // Turned 180 degrees with colours swapped: mirror column c is black
                    // exactly when column cols-1-c is white.
                    if (cols - 1 - col) % 2 == 0 {
                        white |= bit
                    } else {
                        black |= bit
                    }
                }
            }
        }
        Position::from_parts(board, white, black, Color::White)
    }

    #[inline]
    pub fn board(&self) -> Board {
        self.board
    }

    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    #[inline]
    pub fn white(&self) -> Bitboard {
        self.white
    }

    #[inline]
    pub fn black(&self) -> Bitboard {
        self.black
    }

    #[inline]
    pub fn pieces(&self, c: Color) -> Bitboard {
        match c {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    /// The side to move's pieces.
    #[inline]
    pub fn us(&self) -> Bitboard {
        self.pieces(self.side)
    }

    /// The opponent's pieces.
    #[inline]
    pub fn them(&self) -> Bitboard {
        self.pieces(self.side.opponent())
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.white | self.black
    }

    #[inline]
    pub fn empty(&self) -> Bitboard {
        self.board.geometry().all & !self.occupied()
    }

    #[inline]
    pub fn piece_count(&self) -> u32 {
        self.occupied().count_ones()
    }

    /// The position after the side to move's piece went from `from` to `to` and the pieces of
    /// `captured` were removed; the other side is then to move.
    #[inline]
    pub fn after(&self, from: u8, to: u8, captured: Bitboard) -> Position {
        let (us, them) = (self.us() ^ (1 << from) ^ (1 << to), self.them() & !captured);
        let (white, black) = match self.side {
            Color::White => (us, them),
            Color::Black => (them, us),
        };
        Position {
            board: self.board,
            side: self.side.opponent(),
            white,
            black,
        }
    }

    /// The same position on the transposed board (5x9 and 9x5 are one game turned on its
    /// side): every point's column and row exchanged.
    pub fn transposed(&self) -> Position {
        let b = self.board;
        Position {
            board: b.transposed(),
            side: self.side,
            white: b.transpose_set(self.white),
            black: b.transpose_set(self.black),
        }
    }

    /// The same pieces with the other side to move.
    pub fn with_side(&self, side: Color) -> Position {
        Position { side, ..*self }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Built in a buffer and written once: jobs and answers carry many positions, and a
        // write per point was most of their encoding.
        let b = self.board;
        let mut text = [0u8; 2 * 64 + 2];
        let mut len = 0;
        for row in (0..b.rows()).rev() {
            for col in 0..b.cols() {
                let bit = 1u64 << b.point(col, row);
                text[len] = if self.white & bit != 0 {
                    b'W'
                } else if self.black & bit != 0 {
                    b'B'
                } else {
                    b'.'
                };
                len += 1;
            }
            text[len] = if row > 0 { b'/' } else { b' ' };
            len += 1;
        }
        text[len] = if self.side == Color::White {
            b'w'
        } else {
            b'b'
        };
        len += 1;
        f.write_str(std::str::from_utf8(&text[..len]).expect("the text is ASCII"))
    }
}

/// In records and answers, a position is its text.
impl serde::Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Position, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({self})")
    }
}

impl FromStr for Position {
    type Err = PositionError;

    fn from_str(s: &str) -> Result<Position, PositionError> {
        let s = s.trim();
        // The common case in one pass without allocation (checkers parse millions of
        // positions); anything irregular goes the careful way below for its error.
        if let Some(pos) = parse_plain(s.as_bytes()) {
            return Ok(pos);
        }
        if s.is_empty() {
            return Err(PositionError::Empty);
        }
        let mut parts = s.split_whitespace();
        let rows_text = parts.next().ok_or(PositionError::Empty)?;
        let side = match parts.next() {
            None => return Err(PositionError::MissingSide),
            Some("w") => Color::White,
            Some("b") => Color::Black,
            Some(other) => return Err(PositionError::BadSide(other.to_string())),
        };
        if let Some(extra) = parts.next() {
            return Err(PositionError::Trailing(crate::geometry::clipped(extra)));
        }
        let rows: Vec<&str> = rows_text.split('/').collect();
        let expected = rows[0].chars().count();
        // The text's rows run from the top: its i-th is rank (rows - i).
        let top = rows.len();
        for (i, row) in rows.iter().enumerate() {
            let rank = top - i;
            let len = row.chars().count();
            if len == 0 {
                return Err(PositionError::EmptyRow { rank });
            }
            if len != expected {
                return Err(PositionError::Ragged {
                    rank,
                    top,
                    len,
                    expected,
                });
            }
            if let Some((col, ch)) = row
                .chars()
                .enumerate()
                .find(|(_, ch)| !matches!(ch, 'W' | 'B' | '.'))
            {
                return Err(PositionError::UnknownChar {
                    rank,
                    col: col + 1,
                    ch,
                });
            }
        }
        let board = Board::new(rows.len(), expected)?;
        let (mut white, mut black) = (0u64, 0u64);
        for (i, row) in rows.iter().enumerate() {
            let r = board.rows() - 1 - i;
            for (col, ch) in row.bytes().enumerate() {
                let bit = 1u64 << board.point(col, r);
                match ch {
                    b'W' => white |= bit,
                    b'B' => black |= bit,
                    _ => {}
                }
            }
        }
        Ok(Position {
            board,
            side,
            white,
            black,
        })
    }
}

/// `ROWS SIDE` exactly as written by `Display`: rows of `W`, `B` and `.` of equal length
/// separated by `/`, one space, `w` or `b`. `None` for anything else, including valid
/// text written differently (extra spaces), which `from_str` then parses the careful way.
fn parse_plain(s: &[u8]) -> Option<Position> {
    let (&side, rest) = s.split_last()?;
    let side = match side {
        b'w' => Color::White,
        b'b' => Color::Black,
        _ => return None,
    };
    let rows_text = rest.strip_suffix(b" ")?;
    let cols = rows_text
        .iter()
        .position(|&b| b == b'/')
        .unwrap_or(rows_text.len());
    let rows = rows_text.len().checked_add(1)? / (cols + 1);
    if cols == 0 || rows * (cols + 1) != rows_text.len() + 1 {
        return None;
    }
    let board = Board::new(rows, cols).ok()?;
    let (mut white, mut black) = (0u64, 0u64);
    for (i, row) in rows_text.chunks(cols + 1).enumerate() {
        let r = rows - 1 - i;
        if row.len() == cols + 1 && row[cols] != b'/' {
            return None;
        }
        for (col, &ch) in row[..cols].iter().enumerate() {
            let bit = 1u64 << board.point(col, r);
            match ch {
                b'W' => white |= bit,
                b'B' => black |= bit,
                b'.' => {}
                _ => return None,
            }
        }
    }
    Some(Position {
        board,
        side,
        white,
        black,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_parser_agrees_with_the_careful_one() {
        for text in [
            "BBB/B.W/WWW w",
            "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW b",
            "BBB/BBB/BBB/BBB/B.W/WWW/WWW/WWW/WWW w",
        ] {
            let fast = parse_plain(text.as_bytes()).unwrap();
            assert_eq!(fast.to_string(), text);
        }
        // Irregular text is left to the careful parser (and its errors).
        for text in [
            "BBB/B.W/WW w",
            "BBB/B.W/WWW  w",
            "BBB/B.W/WWW x",
            "BBB/B.X/WWW w",
            "BBB//WWW w",
            "BBBB/B.WW/WWWW w",
            "/ w",
            " w",
            "w",
            "",
            "BB/BB w",
        ] {
            assert!(parse_plain(text.as_bytes()).is_none(), "{text:?}");
        }
    }

    #[test]
    fn initial_positions_match_the_rules() {
        let expect = [
            ("3x3", "BBB/B.W/WWW w"),
            ("3x7", "BBBBBBB/BWB.WBW/WWWWWWW w"),
            ("5x5", "BBBBB/BBBBB/BW.BW/WWWWW/WWWWW w"),
            ("5x9", "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w"),
            ("9x3", "BBB/BBB/BBB/BBB/B.W/WWW/WWW/WWW/WWW w"),
            ("7x5", "BBBBB/BBBBB/BBBBB/BW.BW/WWWWW/WWWWW/WWWWW w"),
        ];
        for (board, text) in expect {
            let b: Board = board.parse().unwrap();
            assert_eq!(Position::initial(b).to_string(), text);
        }
        // Equal material on every board.
        for b in Board::all() {
            let p = Position::initial(b);
            assert_eq!(p.white().count_ones(), p.black().count_ones(), "{b}");
            assert_eq!(p.empty().count_ones(), 1);
        }
    }

    #[test]
    fn text_round_trips() {
        let s = "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w";
        let p: Position = s.parse().unwrap();
        assert_eq!(p.to_string(), s);
        assert_eq!(p, Position::initial(Board::STANDARD));
    }

    #[test]
    fn malformed_text_names_the_problem() {
        use PositionError::*;
        let cases: [(&str, PositionError); 8] = [
            ("", Empty),
            ("BBB/B.W/WWW", MissingSide),
            ("BBB/B.W/WWW x", BadSide("x".into())),
            ("BBB/B.W/WWW w extra", Trailing("extra".into())),
            (
                "BBB/B.W/WW w",
                Ragged {
                    rank: 1,
                    top: 3,
                    len: 2,
                    expected: 3,
                },
            ),
            (
                "BBB/BxW/WWW w",
                UnknownChar {
                    rank: 2,
                    col: 2,
                    ch: 'x',
                },
            ),
            ("BBB//WWW w", EmptyRow { rank: 2 }),
            (
                "BBBB/B..W/WWWW w",
                Board(BoardError::Unsupported { rows: 3, cols: 4 }),
            ),
        ];
        for (text, err) in cases {
            assert_eq!(text.parse::<Position>(), Err(err), "{text:?}");
        }
        // The words name ranks as the board does: the text's first row is the top rank.
        let said = |t: &str| t.parse::<Position>().unwrap_err().to_string();
        assert_eq!(
            said("BBB/BxW/WWW w"),
            "unknown character 'x' at b2 (rank 2): expected 'W', 'B' or '.'"
        );
        assert_eq!(
            said("BBB/B.W/WW w"),
            "ragged rows: rank 1 has 2 points but rank 3 (the top row) has 3"
        );
        assert_eq!(
            said("x/B/W w"),
            "unknown character 'x' at a3 (rank 3): expected 'W', 'B' or '.'"
        );
    }
}
