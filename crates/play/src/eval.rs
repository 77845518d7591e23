//! The evaluation the alpha-beta and minimax players use (Teixeira and Aslani): a side's
//! points are its stones plus half a point for each stone on a strong point (one joined to
//! all eight directions); the score is (mine - theirs) / (mine + theirs), from -1 to 1.

use std::sync::OnceLock;

use fanorona_rules::geometry::{Bitboard, Board};
use fanorona_rules::position::Position;

/// The strong points of `board`, as a set (built once per board).
pub fn strong_points(board: Board) -> Bitboard {
    static MASKS: OnceLock<Vec<(Board, Bitboard)>> = OnceLock::new();
    let masks = MASKS.get_or_init(|| {
        Board::all()
            .map(|b| {
                let mask = (0..b.size() as u8)
                    .filter(|&p| b.is_strong(p))
                    .fold(0, |m, p| m | 1u64 << p);
                (b, mask)
            })
            .collect()
    });
    masks
        .iter()
        .find(|(b, _)| *b == board)
        .map_or(0, |&(_, m)| m)
}

/// A side's points: stones, plus half a point a stone on a strong point.
pub fn points(stones: Bitboard, strong: Bitboard) -> f64 {
    stones.count_ones() as f64 + 0.5 * (stones & strong).count_ones() as f64
}

/// The score for the side to move, from -1 (it has nothing) to 1 (its opponent has nothing).
pub fn score(pos: &Position) -> f64 {
    let strong = strong_points(pos.board());
    let (mine, theirs) = (points(pos.us(), strong), points(pos.them(), strong));
    if mine + theirs == 0.0 {
        return 0.0;
    }
    (mine - theirs) / (mine + theirs)
}

/// Stones alone: (mine - theirs) / (mine + theirs) for the side to move.
pub fn material(pos: &Position) -> f64 {
    let (mine, theirs) = (pos.us().count_ones() as f64, pos.them().count_ones() as f64);
    if mine + theirs == 0.0 {
        return 0.0;
    }
    (mine - theirs) / (mine + theirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stones_on_strong_points_count_one_and_a_half() {
        // 3x3: a1, c1, b2, a3, c3 are strong.
        let board: Board = "3x3".parse().unwrap();
        assert_eq!(strong_points(board).count_ones(), 5);
        // White: a1 (strong) and b1 (weak) = 2.5; Black: b3 (weak) = 1.
        let pos: Position = ".B./.../WW. w".parse().unwrap();
        assert!((score(&pos) - (2.5 - 1.0) / 3.5).abs() < 1e-12);
        assert!((score(&pos.with_side(fanorona_rules::Color::Black)) + (1.5 / 3.5)).abs() < 1e-12);
        // The 5x9 start is even.
        assert_eq!(score(&Position::initial(Board::STANDARD)), 0.0);
    }
}
