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
    /// The divisions and logarithms of `dense`, computed once (the same values: a division
    /// cost a sixth of the model's time in the search).
    quotients: Quotients,
}

/// One over a count of pieces, a lead over the pieces on the board, and the mobility
/// input, by count: what `dense` would compute, looked up.
#[derive(Clone, Debug)]
struct Quotients {
    /// `1 / max(n, 1)` for n pieces.
    recip: Vec<f32>,
    /// `n / half`, half the points, for n pieces.
    share: Vec<f32>,
    /// `(u - t) / max(u + t, 1)` at `u * (points + 1) + t`.
    lead: Vec<f32>,
    /// `ln(1 + moves) / 4` for moves below `MOBILITY_TABLE`.
    mobility: Vec<f32>,
}

/// Move counts whose mobility input is looked up (the search clamps its count to 1,000).
const MOBILITY_TABLE: usize = 1024;

fn recip(n: f32) -> f32 {
    1.0 / n.max(1.0)
}

fn lead(u: f32, t: f32) -> f32 {
    (u - t) / (u + t).max(1.0)
}

fn mobility(moves: u64) -> f32 {
    (moves.saturating_add(1) as f32).ln() / 4.0
}

impl Quotients {
    fn new(points: usize, half: f32) -> Quotients {
        let n = points + 1;
        Quotients {
            recip: (0..n).map(|u| recip(u as f32)).collect(),
            share: (0..n).map(|u| u as f32 / half).collect(),
            lead: (0..n * n)
                .map(|i| lead((i / n) as f32, (i % n) as f32))
                .collect(),
            mobility: (0..MOBILITY_TABLE as u64).map(mobility).collect(),
        }
    }
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
            quotients: Quotients::new(board.size(), board.size().div_ceil(2) as f32),
        }
    }

    /// The inputs of `pos` (on this board) for its side to move, `moves` the side to move's
    /// move count (the search has it already).
    #[inline]
    pub fn inputs(&self, pos: &Position, moves: u64, out: &mut [f32; INPUTS]) {
        let mut dense = [0.0; DENSE];
        let (ru, rt) = self.dense(pos, moves, capturing_pieces(pos), &mut dense);
        out[..DENSE].copy_from_slice(&dense);
        let (us, them) = (pos.us(), pos.them());
        for (i, m) in self.masks.iter().enumerate() {
            out[DENSE + i] = (us & m).count_ones() as f32 * ru;
            out[DENSE + CLASSES + i] = (them & m).count_ones() as f32 * rt;
        }
    }

    /// The first `DENSE` inputs (material, mobility, captures); returns one over each
    /// side's piece count (at least 1), the scale of its shares. `ours`: the side to move's
    /// capturing pieces (`capturing_pieces`, which the search's move count finds too).
    #[inline]
    pub fn dense(
        &self,
        pos: &Position,
        moves: u64,
        ours: Bitboard,
        out: &mut [f32; DENSE],
    ) -> (f32, f32) {
        let (us, them) = (pos.us(), pos.them());
        let q = &self.quotients;
        let (nu, nt) = (us.count_ones() as usize, them.count_ones() as usize);
        let (u, t) = (nu as f32, nt as f32);
        let (ru, rt) = (q.recip[nu], q.recip[nt]);
        out[0] = 1.0;
        out[1] = q.lead[nu * q.recip.len() + nt];
        // Shares of half the points (a side's pieces at the start, rounded up).
        out[2] = q.share[nu];
        out[3] = q.share[nt];
        out[4] = (u - t).clamp(-4.0, 4.0) / 4.0;
        out[5] = match usize::try_from(moves).ok().and_then(|i| q.mobility.get(i)) {
            Some(&m) => m,
            None => mobility(moves),
        };
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
    fn looked_up_inputs_are_the_computed_ones_bit_for_bit() {
        for board in ["5x9", "3x3"] {
            let board: Board = board.parse().unwrap();
            let q = Quotients::new(board.size(), board.size().div_ceil(2) as f32);
            let half = board.size().div_ceil(2) as f32;
            for u in 0..=board.size() {
                assert_eq!(q.recip[u].to_bits(), (1.0 / (u as f32).max(1.0)).to_bits());
                assert_eq!(q.share[u].to_bits(), (u as f32 / half).to_bits());
                for t in 0..=board.size() {
                    let (a, b) = (u as f32, t as f32);
                    let direct = (a - b) / (a + b).max(1.0);
                    assert_eq!(
                        q.lead[u * (board.size() + 1) + t].to_bits(),
                        direct.to_bits()
                    );
                }
            }
        }
        let q = Quotients::new(45, 23.0);
        for m in [0u64, 1, 7, 1000, 1023] {
            assert_eq!(
                q.mobility[m as usize].to_bits(),
                (((1 + m) as f32).ln() / 4.0).to_bits()
            );
        }
        // Beyond the table it is computed.
        let (r, pos) = (
            Regions::new("5x9".parse().unwrap()),
            Position::initial("5x9".parse().unwrap()),
        );
        let mut x = [0.0; DENSE];
        r.dense(&pos, 5000, 0, &mut x);
        assert_eq!(x[5], (5001f32).ln() / 4.0);
        r.dense(&pos, u64::MAX, 0, &mut x);
        assert!(x[5].is_finite() && x[5] > 10.0);
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
