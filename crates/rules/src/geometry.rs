//! Boards, points, directions and the precomputed tables every other layer uses.
//!
//! A point is numbered `row * cols + col`, with row 0 at White's side (`a1` is point 0), so a
//! set of points is a `u64` on every board (at most 45 points).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use thiserror::Error;

/// A set of points: bit `p` is point `p`.
pub type Bitboard = u64;

/// Iterates over the points of a bitboard, lowest first.
#[inline]
pub fn points(mut bb: Bitboard) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if bb == 0 {
            None
        } else {
            let p = bb.trailing_zeros() as u8;
            bb &= bb - 1;
            Some(p)
        }
    })
}

/// The 12 boards of the paper, as (rows, columns).
pub const SUPPORTED: [(u8, u8); 12] = [
    (3, 3),
    (3, 5),
    (5, 3),
    (3, 7),
    (7, 3),
    (5, 5),
    (3, 9),
    (9, 3),
    (5, 7),
    (7, 5),
    (5, 9),
    (9, 5),
];

/// Input text as an error quotes it: whole up to 40 characters, else its start and how
/// long it was (a 100 kB argument is not echoed back whole).
pub fn clipped(text: &str) -> String {
    const MOST: usize = 40;
    match text.char_indices().nth(MOST) {
        None => text.to_string(),
        Some((end, _)) => format!("{}... ({} characters)", &text[..end], text.chars().count()),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoardError {
    #[error("malformed board '{0}': expected RxC such as 5x9")]
    Malformed(String),
    #[error(
        "unsupported board {rows}x{cols}: supported boards are {}",
        supported_list()
    )]
    Unsupported { rows: usize, cols: usize },
}

fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(r, c)| format!("{r}x{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One of the supported boards. Cheap to copy; its tables are built once per process.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Board(u8);

impl Board {
    pub const STANDARD: Board = Board(10);

    pub fn new(rows: usize, cols: usize) -> Result<Board, BoardError> {
        SUPPORTED
            .iter()
            .position(|&(r, c)| r as usize == rows && c as usize == cols)
            .map(|i| Board(i as u8))
            .ok_or(BoardError::Unsupported { rows, cols })
    }

    pub fn all() -> impl Iterator<Item = Board> {
        (0..SUPPORTED.len() as u8).map(Board)
    }

    #[inline]
    pub fn rows(self) -> usize {
        SUPPORTED[self.0 as usize].0 as usize
    }

    #[inline]
    pub fn cols(self) -> usize {
        SUPPORTED[self.0 as usize].1 as usize
    }

    #[inline]
    pub fn size(self) -> usize {
        self.rows() * self.cols()
    }

    /// The same game turned on its side (5x9 and 9x5).
    pub fn transposed(self) -> Board {
        Board::new(self.cols(), self.rows())
            .expect("every supported board's transpose is supported")
    }

    /// The precomputed tables of this board.
    #[inline]
    pub fn geometry(self) -> &'static Geometry {
        static ALL: OnceLock<Vec<Geometry>> = OnceLock::new();
        &ALL.get_or_init(|| Board::all().map(Geometry::build).collect())[self.0 as usize]
    }

    #[inline]
    pub fn point(self, col: usize, row: usize) -> u8 {
        (row * self.cols() + col) as u8
    }

    #[inline]
    pub fn col_of(self, p: u8) -> usize {
        p as usize % self.cols()
    }

    #[inline]
    pub fn row_of(self, p: u8) -> usize {
        p as usize / self.cols()
    }

    /// Strong points connect in 8 directions: (column + row) even, `a1` strong.
    #[inline]
    pub fn is_strong(self, p: u8) -> bool {
        (self.col_of(p) + self.row_of(p)).is_multiple_of(2)
    }

    /// Where point `p` lands on the transposed board (column and row exchanged).
    pub fn transpose_point(self, p: u8) -> u8 {
        self.geometry().transpose[p as usize]
    }

    /// A set of points carried to the transposed board.
    pub fn transpose_set(self, set: Bitboard) -> Bitboard {
        let t = &self.geometry().transpose;
        points(set).fold(0, |acc, p| acc | 1 << t[p as usize])
    }

    /// The point's name, such as `e3`.
    pub fn point_name(self, p: u8) -> String {
        let mut s = String::with_capacity(2);
        self.push_point_name(p, &mut s);
        s
    }

    /// Appends the name of point `p` to `out` (no allocation beyond `out`'s own).
    pub fn push_point_name(self, p: u8, out: &mut String) {
        out.push((b'a' + self.col_of(p) as u8) as char);
        // Rows run from 1 to 9 (boards have at most 9 rows).
        out.push((b'1' + self.row_of(p) as u8) as char);
    }

    /// Parses a point name such as `e3` on this board.
    pub fn parse_point(self, s: &str) -> Option<u8> {
        let mut chars = s.chars();
        let c = chars.next()?;
        if !c.is_ascii_lowercase() {
            return None;
        }
        let col = (c as u8 - b'a') as usize;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let row: usize = digits.parse().ok()?;
        if digits.starts_with('0') || row == 0 || row > self.rows() || col >= self.cols() {
            return None;
        }
        Some(self.point(col, row - 1))
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows(), self.cols())
    }
}

/// In answers and records, a board is its name (`5x9`).
impl serde::Serialize for Board {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Board {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Board, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({self})")
    }
}

impl FromStr for Board {
    type Err = BoardError;

    fn from_str(s: &str) -> Result<Board, BoardError> {
        let malformed = || BoardError::Malformed(clipped(s));
        let number = |t: &str| {
            let plain = !t.is_empty() && t.len() <= 2 && t.bytes().all(|b| b.is_ascii_digit());
            if plain && !t.starts_with('0') {
                t.parse::<usize>().map_err(|_| malformed())
            } else {
                Err(malformed())
            }
        };
        let (r, c) = s.split_once('x').ok_or_else(malformed)?;
        Board::new(number(r)?, number(c)?)
    }
}

/// The 8 directions, ordered so that `d ^ 4` is the opposite of `d`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    N = 0,
    NE = 1,
    E = 2,
    SE = 3,
    S = 4,
    SW = 5,
    W = 6,
    NW = 7,
}

impl Direction {
    pub const ALL: [Direction; 8] = [
        Direction::N,
        Direction::NE,
        Direction::E,
        Direction::SE,
        Direction::S,
        Direction::SW,
        Direction::W,
        Direction::NW,
    ];

    /// (column step, row step); north is towards Black, up the board.
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Direction::N => (0, 1),
            Direction::NE => (1, 1),
            Direction::E => (1, 0),
            Direction::SE => (1, -1),
            Direction::S => (0, -1),
            Direction::SW => (-1, -1),
            Direction::W => (-1, 0),
            Direction::NW => (-1, 1),
        }
    }

    pub const fn is_diagonal(self) -> bool {
        (self as usize) % 2 == 1
    }
}

/// No neighbour in that direction (off the board, or a diagonal from a weak point).
pub const NONE: u8 = u8::MAX;

/// Precomputed tables of one board.
#[derive(Debug)]
pub struct Geometry {
    pub board: Board,
    /// Every point of the board.
    pub all: Bitboard,
    /// `neighbour[p][d]`: the point one step from `p` in direction `d` along a line, or `NONE`.
    pub neighbour: [[u8; 8]; 64],
    /// Points with a neighbour in direction `d`: the sources a shift in `d` keeps.
    pub has_neighbour: [Bitboard; 8],
    /// `row_step * cols + col_step` of each direction.
    pub shift: [i32; 8],
    /// `ray[p][d]`: the points along the line from `p` in direction `d`, `p` excluded.
    pub ray: [[Bitboard; 8]; 64],
    /// `step1[p][d]`: the point one step from `p` in direction `d` along a line, as a
    /// bitboard (0 where there is none).
    pub step1: [[Bitboard; 8]; 64],
    /// `index1[p][d]`, `index2[p][d]`: the point one and two steps from `p` in direction `d`,
    /// or 63 (never a point: every board has at most 45) where there is none.
    pub index1: [[u8; 8]; 64],
    pub index2: [[u8; 8]; 64],
    /// `transpose[p]`: where `p` lands on the transposed board.
    pub transpose: [u8; 64],
    /// `adjacent[p]`: every point one step from `p` along a line.
    pub adjacent: [Bitboard; 64],
}

impl Geometry {
    fn build(board: Board) -> Geometry {
        // Point 63 stands for "no point" in `index1`/`index2`: no board may reach it.
        assert!(board.size() < 63, "boards have at most 45 points");
        let (rows, cols) = (board.rows() as i32, board.cols() as i32);
        let mut g = Geometry {
            board,
            all: 0,
            neighbour: [[NONE; 8]; 64],
            has_neighbour: [0; 8],
            shift: [0; 8],
            ray: [[0; 8]; 64],
            step1: [[0; 8]; 64],
            adjacent: [0; 64],
            transpose: [0; 64],
            index1: [[63; 8]; 64],
            index2: [[63; 8]; 64],
        };
        for d in Direction::ALL {
            let (dc, dr) = d.delta();
            g.shift[d as usize] = dr * cols + dc;
        }
        let turned = Board::new(board.cols(), board.rows())
            .expect("every supported board's transpose is supported");
        for p in 0..board.size() as u8 {
            g.transpose[p as usize] = turned.point(board.row_of(p), board.col_of(p));
            g.all |= 1 << p;
            let strong = board.is_strong(p);
            let (c, r) = (board.col_of(p) as i32, board.row_of(p) as i32);
            for d in Direction::ALL {
                if d.is_diagonal() && !strong {
                    continue;
                }
                let (dc, dr) = d.delta();
                let (nc, nr) = (c + dc, r + dr);
                if (0..cols).contains(&nc) && (0..rows).contains(&nr) {
                    g.neighbour[p as usize][d as usize] = (nr * cols + nc) as u8;
                    g.has_neighbour[d as usize] |= 1 << p;
                    g.adjacent[p as usize] |= 1 << (nr * cols + nc);
                }
            }
        }
        for p in 0..board.size() {
            for d in 0..8 {
                let mut q = g.neighbour[p][d];
                let mut k = 0;
                while q != NONE {
                    g.ray[p][d] |= 1 << q;
                    match k {
                        0 => {
                            g.step1[p][d] = 1 << q;
                            g.index1[p][d] = q;
                        }
                        1 => {
                            g.index2[p][d] = q;
                        }
                        _ => {}
                    }
                    k += 1;
                    q = g.neighbour[q as usize][d];
                }
            }
        }
        g
    }

    /// Whether moving along direction `d` increases the point number (N, NE, E, NW).
    #[inline(always)]
    pub const fn ascending(d: usize) -> bool {
        matches!(d, 0 | 1 | 2 | 7)
    }

    /// The leading run of `ray` (points from some `p` in direction `d`) that lies in `set`:
    /// the pieces an approach or withdrawal along that line removes.
    #[inline(always)]
    pub fn leading_run(ray: Bitboard, d: usize, set: Bitboard) -> Bitboard {
        let blockers = ray & !set;
        if blockers == 0 {
            ray
        } else if Geometry::ascending(d) {
            // Points of the ray below its first blocker.
            ray & ((blockers & blockers.wrapping_neg()) - 1)
        } else {
            // Points of the ray above its first (highest) blocker.
            let h = 63 - blockers.leading_zeros();
            ray & !((2u64 << h) - 1)
        }
    }

    /// Moves every point of `bb` one step in direction `d`, dropping those with no neighbour
    /// there (so diagonals only move strong points).
    #[inline(always)]
    pub fn step(&self, bb: Bitboard, d: usize) -> Bitboard {
        // A rotation by the shift (taken mod 64) is the shift, as no point that has a
        // neighbour in `d` is carried past either end; unlike a shift by a signed amount, it
        // needs no branch.
        (bb & self.has_neighbour[d]).rotate_left(self.shift[d] as u32)
    }

    #[inline(always)]
    pub fn neighbour(&self, p: u8, d: usize) -> u8 {
        self.neighbour[p as usize][d]
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn long_input_is_quoted_by_its_start() {
        assert_eq!(clipped("5x9"), "5x9");
        let long = "W".repeat(100_000);
        let shown = format!("{}", "x".parse::<Board>().map(|_| ()).unwrap_err());
        assert_eq!(shown, "malformed board 'x': expected RxC such as 5x9");
        let shown = long.parse::<Board>().unwrap_err().to_string();
        assert!(shown.len() < 120, "{shown}");
        assert!(shown.contains("... (100000 characters)"), "{shown}");
    }
    use super::*;

    #[test]
    fn every_supported_board_parses_and_others_are_refused() {
        for (r, c) in SUPPORTED {
            let b: Board = format!("{r}x{c}").parse().unwrap();
            assert_eq!((b.rows(), b.cols()), (r as usize, c as usize));
            assert_eq!(b.transposed().transposed(), b);
        }
        assert_eq!(
            "7x7".parse::<Board>(),
            Err(BoardError::Unsupported { rows: 7, cols: 7 })
        );
        assert!(matches!(
            "5by9".parse::<Board>(),
            Err(BoardError::Malformed(_))
        ));
        assert!(matches!(
            "x9".parse::<Board>(),
            Err(BoardError::Malformed(_))
        ));
    }

    #[test]
    fn point_names_round_trip() {
        for b in Board::all() {
            for p in 0..b.size() as u8 {
                assert_eq!(b.parse_point(&b.point_name(p)), Some(p));
            }
        }
        let b = Board::STANDARD;
        assert_eq!(b.parse_point("e3"), Some(b.point(4, 2)));
        assert_eq!(b.parse_point("j1"), None);
        assert_eq!(b.parse_point("a6"), None);
        assert_eq!(b.parse_point("a0"), None);
        assert_eq!(b.parse_point("a01"), None);
    }

    #[test]
    fn strong_points_have_eight_lines_weak_points_four() {
        let g = Board::STANDARD.geometry();
        let e3 = Board::STANDARD.parse_point("e3").unwrap();
        let d3 = Board::STANDARD.parse_point("d3").unwrap();
        assert!(Board::STANDARD.is_strong(e3));
        assert_eq!(
            g.neighbour[e3 as usize]
                .iter()
                .filter(|&&n| n != NONE)
                .count(),
            8
        );
        assert_eq!(
            g.neighbour[d3 as usize]
                .iter()
                .filter(|&&n| n != NONE)
                .count(),
            4
        );
        // Corners are strong with three lines.
        assert_eq!(g.neighbour[0].iter().filter(|&&n| n != NONE).count(), 3);
    }

    #[test]
    fn step_matches_the_neighbour_table() {
        for b in Board::all() {
            let g = b.geometry();
            for p in 0..b.size() as u8 {
                for d in 0..8 {
                    let n = g.neighbour(p, d);
                    let expect = if n == NONE { 0 } else { 1u64 << n };
                    assert_eq!(g.step(1 << p, d), expect, "{b} point {p} dir {d}");
                }
            }
        }
    }
}
