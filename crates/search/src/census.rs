//! Where a search's nodes go: the positions created, by the number of pieces on the board
//! of the position whose expansion created them. With tables up to N pieces no position of N
//! or fewer is expanded, so the count at N + 1 is what tables of one more piece would have
//! spared the search (to first order: the search's choices would change too). Each count is
//! also split by the pair of tables its positions belong to (6-4 + 4-6 and so on), which says
//! which pairs of that layer would spare the most.
//!
//! Counted per thread, in the thread's own cells (no atomics in the hot loop): a caller that
//! wants one search's census runs it on its thread between two `take`s.

use fanorona_rules::position::{Color, Position};
use fanorona_tables::Material;
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
/// their share by the pair of tables such positions belong to (named as the builder names a
/// pair, by its material with `a >= b`: whichever side is to move), largest share first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub pieces: u32,
    pub created: u64,
    pub pairs: Vec<(Material, u64)>,
}

impl Census {
    pub fn total(&self) -> u64 {
        self.created.iter().flatten().sum()
    }

    /// The piece counts that expanded anything, most pieces first.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        // A position with a side bare is over and never expanded, so every count is in a pair.
        for pieces in (2..2 * MAX_SIDE).rev() {
            let mut pairs: Vec<(Material, u64)> = Material::with_pieces(pieces)
                .filter(|m| m.a >= m.b)
                .map(|m| {
                    let n = self.at(m.a, m.b);
                    (m, if m.a == m.b { n } else { n + self.at(m.b, m.a) })
                })
                .filter(|&(_, n)| n > 0)
                .collect();
            if !pairs.is_empty() {
                pairs.sort_by_key(|&(m, n)| (std::cmp::Reverse(n), m.a));
                let created = pairs.iter().map(|p| p.1).sum();
                rows.push(Row {
                    pieces: pieces as u32,
                    created,
                    pairs,
                });
            }
        }
        rows
    }

    fn at(&self, white: u8, black: u8) -> u64 {
        let row = self.created.get(usize::from(white));
        row.and_then(|r| r.get(usize::from(black)))
            .map_or(0, |&n| n)
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
                pairs: vec![(Material { a: 2, b: 2 }, 4), (Material { a: 3, b: 1 }, 4)],
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
        let row = |pieces, created, pairs: &[((u8, u8), u64)]| Row {
            pieces,
            created,
            pairs: pairs
                .iter()
                .map(|&((a, b), n)| (Material { a, b }, n))
                .collect(),
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
