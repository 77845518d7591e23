//! What the value model sees of a position: inputs that mean the same with 6 pieces as with
//! 30, so that a model trained on the tables' small endgames carries over to the positions
//! above them. Counts are fractions of a side's pieces, never raw squares.

use fanorona_rules::Bitboard;
use fanorona_rules::Board;
use fanorona_rules::Position;
use fanorona_rules::movegen::capturing_pieces;

/// How many inputs a position gives: `DENSE` counts, then the share of the side to move's
/// pieces in each group of points, then the other side's.
pub const INPUTS: usize = DENSE + 2 * CLASSES;
/// The inputs that are not shares of groups.
pub const DENSE: usize = 10;

/// Points grouped by their distance from the centre, in rows (0 to 2) and columns (0 to 4),
/// the long side taken as the columns on either orientation: 15 groups, each all strong or
/// all weak points, each closed under the board's mirrors.
pub const CLASSES: usize = 15;

/// The groups of a board's points, as masks.
#[derive(Clone, Debug)]
pub struct Regions {
    pub masks: [Bitboard; CLASSES],
    /// Each point's group.
    pub class_of: Vec<u8>,
    /// Half the points (a side's pieces at the start, rounded up): the scale of counts.
    half: f32,
}

impl Regions {
    pub fn new(board: Board) -> Regions {
        let mut masks = [0 as Bitboard; CLASSES];
        let mut class_of = vec![0u8; board.size()];
        let (rows, cols) = (board.rows(), board.cols());
        for p in 0..board.size() as u8 {
            let (mut r, mut c) = (board.row_of(p), board.col_of(p));
            let (mut nr, mut nc) = (rows, cols);
            // The long side is the columns' on 5x9 and 9x5 alike.
            if nr > nc {
                std::mem::swap(&mut r, &mut c);
                std::mem::swap(&mut nr, &mut nc);
            }
            let dr = (2 * r).abs_diff(nr - 1) / 2;
            let dc = (2 * c).abs_diff(nc - 1) / 2;
            let class = dr.min(2) * 5 + dc.min(4);
            masks[class] |= (1 as Bitboard) << p;
            class_of[p as usize] = class as u8;
        }
        Regions {
            masks,
            class_of,
            half: board.size().div_ceil(2) as f32,
        }
    }

    /// The inputs of `pos` (on this board) for its side to move, `moves` the side to move's
    /// move count (the search has it already).
    #[inline]
    pub fn inputs(&self, pos: &Position, moves: u64, out: &mut [f32; INPUTS]) {
        let mut dense = [0.0; DENSE];
        let (ru, rt) = self.dense(pos, moves, &mut dense);
        out[..DENSE].copy_from_slice(&dense);
        let (us, them) = (pos.us(), pos.them());
        for (i, m) in self.masks.iter().enumerate() {
            out[DENSE + i] = (us & m).count_ones() as f32 * ru;
            out[DENSE + CLASSES + i] = (them & m).count_ones() as f32 * rt;
        }
    }

    /// The first `DENSE` inputs (material, mobility, captures); returns one over each
    /// side's piece count (at least 1), the scale of its shares.
    #[inline]
    pub fn dense(&self, pos: &Position, moves: u64, out: &mut [f32; DENSE]) -> (f32, f32) {
        let (us, them) = (pos.us(), pos.them());
        let (u, t) = (us.count_ones() as f32, them.count_ones() as f32);
        let (ru, rt) = (1.0 / u.max(1.0), 1.0 / t.max(1.0));
        out[0] = 1.0;
        out[1] = (u - t) / (u + t).max(1.0);
        out[2] = u / self.half;
        out[3] = t / self.half;
        out[4] = (u - t).clamp(-4.0, 4.0) / 4.0;
        out[5] = ((1 + moves) as f32).ln() / 4.0;
        let ours = capturing_pieces(pos);
        let theirs = capturing_pieces(&pos.with_side(pos.side_to_move().opponent()));
        out[6] = (ours != 0) as u8 as f32;
        out[7] = ours.count_ones() as f32 * ru;
        out[8] = (theirs != 0) as u8 as f32;
        out[9] = theirs.count_ones() as f32 * rt;
        (ru, rt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_cover_the_board_once_and_agree_with_its_transpose() {
        for board in ["5x9", "9x5", "5x5", "3x9"] {
            let board: Board = board.parse().unwrap();
            let r = Regions::new(board);
            let all = r.masks.iter().fold(0 as Bitboard, |a, m| {
                assert_eq!(a & m, 0, "{board}: groups overlap");
                a | m
            });
            assert_eq!(all.count_ones() as usize, board.size());
            for m in r.masks {
                let strong = fanorona_rules::geometry::points(m).map(|p| board.is_strong(p));
                let kinds: std::collections::BTreeSet<bool> = strong.collect();
                assert!(
                    kinds.len() <= 1,
                    "{board}: a group mixes strong and weak points"
                );
            }
        }
        let (a, b) = (
            Regions::new("5x9".parse().unwrap()),
            Regions::new("9x5".parse().unwrap()),
        );
        let b59: Board = "5x9".parse().unwrap();
        for (ma, mb) in a.masks.iter().zip(b.masks) {
            assert_eq!(b59.transpose_set(*ma), mb);
        }
    }

    #[test]
    fn the_start_is_even() {
        let board: Board = "5x9".parse().unwrap();
        let start = Position::initial(board);
        let mut x = [0.0; INPUTS];
        Regions::new(board).inputs(&start, 4, &mut x);
        assert_eq!(x[1], 0.0);
        assert_eq!(x[2], x[3]);
        assert_eq!(x[6], 1.0, "White captures at the start");
        let us: f32 = x[10..10 + CLASSES].iter().sum();
        assert!(
            (us - 1.0).abs() < 1e-5,
            "fractions of a side sum to 1: {us}"
        );
    }
}
