//! Where a search's nodes go: the positions created, by the number of pieces on the board
//! of the position whose expansion created them. With tables up to N pieces no position of N
//! or fewer is expanded, so the count at N + 1 is what tables of one more piece would have
//! spared the search (to first order: the search's choices would change too). Each count is
//! also split by the pair of tables its positions belong to (6-4 + 4-6 and so on), which says
//! which pairs of that layer would spare the most.
//!
//! Counted per thread, in the thread's own cells (no atomics in the hot loop): a caller that
//! wants one search's census runs it on its thread between two `take`s.

use crate::position::{Color, Position};
use std::cell::Cell;

/// More than the most pieces of any board (5x9 and 9x5 start with 44).
pub const MAX_PIECES: usize = 48;

/// More than the most pieces of one side on any board (22 on 5x9 and 9x5).
const MAX_SIDE: usize = 24;

thread_local! {
    /// Positions created, by the white and the black pieces of the position expanded.
    static CREATED: [[Cell<u64>; MAX_SIDE]; MAX_SIDE] =
        const { [const { [const { Cell::new(0) }; MAX_SIDE] }; MAX_SIDE] };
}

fn side(pos: &Position, c: Color) -> usize {
    (pos.pieces(c).count_ones() as usize).min(MAX_SIDE - 1)
}

fn cell<T>(pos: &Position, f: impl FnOnce(&Cell<u64>) -> T) -> T {
    CREATED.with(|c| f(&c[side(pos, Color::White)][side(pos, Color::Black)]))
}

/// `created` positions made by expanding `pos`.
#[inline]
pub fn count(pos: &Position, created: u64) {
    cell(pos, |c| c.set(c.get().wrapping_add(created)));
}

/// Takes back `counted` positions counted twice (a second level's children, attached again
/// to the first level).
#[inline]
pub fn uncount(pos: &Position, counted: u64) {
    cell(pos, |c| c.set(c.get().saturating_sub(counted)));
}

/// One search's census: positions created, by the material of the position expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Census {
    /// Indexed by white's pieces, then black's.
    created: [[u64; MAX_SIDE]; MAX_SIDE],
}

/// A row of the census: the positions created by expanding one of `pieces` pieces, and
/// their share by the pair of tables such positions belong to (`a` and `b` pieces on the two
/// sides, `a >= b`, whichever side is to move), largest share first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub pieces: u32,
    pub created: u64,
    pub pairs: Vec<((u32, u32), u64)>,
}

impl Census {
    pub fn total(&self) -> u64 {
        self.created.iter().flatten().sum()
    }

    /// The piece counts that expanded anything, most pieces first.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        for pieces in (0..2 * MAX_SIDE as u32).rev() {
            let mut pairs = Vec::new();
            for b in 0..=pieces / 2 {
                let a = pieces - b;
                let mut n = self.at(a, b);
                if a != b {
                    n += self.at(b, a);
                }
                if n > 0 {
                    pairs.push(((a, b), n));
                }
            }
            if !pairs.is_empty() {
                pairs.sort_by_key(|&((a, _), n)| (std::cmp::Reverse(n), a));
                let created = pairs.iter().map(|p| p.1).sum();
                rows.push(Row {
                    pieces,
                    created,
                    pairs,
                });
            }
        }
        rows
    }

    fn at(&self, white: u32, black: u32) -> u64 {
        let (w, b) = (white as usize, black as usize);
        if w < MAX_SIDE && b < MAX_SIDE {
            self.created[w][b]
        } else {
            0
        }
    }
}

/// This thread's census since the last `take`, and zero again.
pub fn take() -> Census {
    CREATED.with(|c| Census {
        created: std::array::from_fn(|w| std::array::from_fn(|b| c[w][b].replace(0))),
    })
}

/// Runs `f` without its counts: a check or a certificate after a search creates positions
/// of its own, which are not the search's.
pub fn set_aside<T>(f: impl FnOnce() -> T) -> T {
    let kept = take();
    let result = f();
    CREATED.with(|c| {
        for (row, k) in c.iter().zip(kept.created) {
            for (cell, k) in row.iter().zip(k) {
                cell.set(k);
            }
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(text: &str) -> Position {
        text.parse().unwrap()
    }

    #[test]
    fn counts_are_per_thread_by_pair_and_taken_once() {
        // 3 white and 1 black, 1 white and 3 black (the same pair, 3-1), 2 and 2.
        let (w3b1, w1b3, w2b2) = (
            pos("WWW/.../..B w"),
            pos("BBB/.../..W b"),
            pos("WW./.../.BB b"),
        );
        take();
        count(&w3b1, 5);
        count(&w1b3, 2);
        count(&w2b2, 4);
        uncount(&w3b1, 3);
        std::thread::spawn(move || count(&w2b2, 100))
            .join()
            .unwrap();
        let t = take();
        assert_eq!(t.total(), 8);
        assert_eq!(
            t.rows(),
            vec![Row {
                pieces: 4,
                created: 8,
                pairs: vec![((2, 2), 4), ((3, 1), 4)],
            }]
        );
        assert_eq!(take().total(), 0);
        count(&w2b2, 1);
        set_aside(|| count(&w2b2, 10));
        assert_eq!(take().total(), 1);
    }

    #[test]
    fn rows_run_from_most_pieces_and_pairs_from_largest_share() {
        take();
        count(&pos("WWW/W../..B w"), 1);
        count(&pos("WW./.../..B b"), 7);
        count(&pos("WW./..B/..B w"), 2);
        count(&pos("WWW/.../B.B w"), 3);
        let row = |pieces, created, pairs: &[((u32, u32), u64)]| Row {
            pieces,
            created,
            pairs: pairs.to_vec(),
        };
        assert_eq!(
            take().rows(),
            vec![
                row(5, 4, &[((3, 2), 3), ((4, 1), 1)]),
                row(4, 2, &[((2, 2), 2)]),
                row(3, 7, &[((2, 1), 7)]),
            ]
        );
    }
}
