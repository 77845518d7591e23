//! What the pages draw, as JSON: a board's points and lines, a position's pieces, and each
//! legal move step by step (where it goes, how it captures, what each step takes), so the
//! page can walk a capture chain click by click without knowing the rules.

use serde::Serialize;

use fanorona_rules::geometry::{Board, NONE, points};
use fanorona_rules::movegen::Capture;
use fanorona_rules::moves::{Move, legal_moves};
use fanorona_rules::position::Position;

#[derive(Serialize)]
pub struct PointView {
    pub index: u8,
    pub name: String,
    pub col: usize,
    /// Counted from White's side (row 0 at the bottom).
    pub row: usize,
}

#[derive(Serialize)]
pub struct BoardView {
    pub name: String,
    pub rows: usize,
    pub cols: usize,
    pub points: Vec<PointView>,
    /// Each line between neighbouring points once, as (lower index, higher index).
    pub lines: Vec<(u8, u8)>,
}

pub fn board(board: Board) -> BoardView {
    let g = board.geometry();
    let mut lines = Vec::new();
    for p in 0..board.size() as u8 {
        for &q in &g.neighbour[p as usize] {
            if q != NONE && q > p {
                lines.push((p, q));
            }
        }
    }
    BoardView {
        name: board.to_string(),
        rows: board.rows(),
        cols: board.cols(),
        points: (0..board.size() as u8)
            .map(|p| PointView {
                index: p,
                name: board.point_name(p),
                col: board.col_of(p),
                row: board.row_of(p),
            })
            .collect(),
        lines,
    }
}

/// The pieces, one character a point in index order: `W`, `B` or `.`.
pub fn cells(pos: &Position) -> String {
    let board = pos.board();
    (0..board.size() as u8)
        .map(|p| {
            let bit = 1u64 << p;
            if pos.white() & bit != 0 {
                'W'
            } else if pos.black() & bit != 0 {
                'B'
            } else {
                '.'
            }
        })
        .collect()
}

#[derive(Serialize)]
pub struct MoveView {
    pub notation: String,
    pub from: u8,
    /// The points the piece steps to, in order.
    pub path: Vec<u8>,
    /// How each step captures: "A" (approach), "W" (withdrawal) or "" (paika).
    pub kinds: Vec<&'static str>,
    /// The pieces each step captures.
    pub captures: Vec<Vec<u8>>,
    /// The position after the move.
    pub after: String,
}

/// Every legal move of `pos`, step by step.
pub fn moves(pos: &Position) -> Vec<MoveView> {
    legal_moves(pos).iter().map(|m| move_view(pos, m)).collect()
}

pub fn move_view(pos: &Position, m: &Move) -> MoveView {
    let board = pos.board();
    let captures = step_captures(pos, m);
    MoveView {
        notation: m.notation(board),
        from: m.from(),
        path: m.path().to_vec(),
        kinds: (0..m.path().len())
            .map(|i| match m.capture_kind(i) {
                Some(Capture::Approach) => "A",
                Some(Capture::Withdrawal) => "W",
                None => "",
            })
            .collect(),
        captures,
        after: m.apply(pos).to_string(),
    }
}

/// The pieces each step of `m` captures: the unbroken run of the opponent's pieces in the
/// line of the step, beyond its end (approach) or behind its start (withdrawal), among the
/// pieces earlier steps left.
pub fn step_captures(pos: &Position, m: &Move) -> Vec<Vec<u8>> {
    let g = pos.board().geometry();
    let mut them = pos.them();
    let mut at = m.from();
    let mut out = Vec::with_capacity(m.path().len());
    for (i, &to) in m.path().iter().enumerate() {
        let d = (0..8).find(|&d| g.neighbour[at as usize][d] == to);
        let mut taken = Vec::new();
        if let (Some(d), Some(kind)) = (d, m.capture_kind(i)) {
            let (mut p, dir) = match kind {
                Capture::Approach => (g.neighbour[to as usize][d], d),
                Capture::Withdrawal => (g.neighbour[at as usize][d ^ 4], d ^ 4),
            };
            while p != NONE && them & (1u64 << p) != 0 {
                taken.push(p);
                them &= !(1u64 << p);
                p = g.neighbour[p as usize][dir];
            }
        }
        out.push(taken);
        at = to;
    }
    out
}

/// The points of a bitboard, for JSON.
pub fn point_list(set: fanorona_rules::Bitboard) -> Vec<u8> {
    points(set).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_captures_add_up_to_the_move() {
        // Every legal move of a few busy positions: the steps' captures are disjoint and
        // together the move's captured set.
        for text in [
            "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w",
            ".B.BB/.WBBB/.B.../..W.W/W.WW. b",
            "BBBBB/BBBBB/BW.BW/WWWWW/WWWWW w",
        ] {
            let pos: Position = text.parse().unwrap();
            for m in legal_moves(&pos) {
                let steps = step_captures(&pos, &m);
                let mut all = 0u64;
                for s in &steps {
                    for &p in s {
                        assert_eq!(
                            all & (1 << p),
                            0,
                            "{} takes {p} twice",
                            m.notation(pos.board())
                        );
                        all |= 1 << p;
                    }
                    assert_eq!(s.is_empty(), !m.is_capture(), "{}", m.notation(pos.board()));
                }
                assert_eq!(all, m.captured(), "{}", m.notation(pos.board()));
            }
        }
    }

    #[test]
    fn the_board_has_its_lines() {
        // 3x3: 12 orthogonal lines and the 4 diagonals through the centre.
        let b = board("3x3".parse().unwrap());
        assert_eq!(b.lines.len(), 16);
        // 5x9: 4*9 + 8*5 orthogonal, and 32 diagonal segments of the strong points.
        let b = board(Board::STANDARD);
        assert_eq!(b.lines.len(), 36 + 40 + 32);
        assert_eq!(b.points[0].name, "a1");
    }
}
