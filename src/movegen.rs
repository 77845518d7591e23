//! Whole-turn move generation: compulsory capture (approach and withdrawal, extended
//! chains with the same-direction and no-revisit restrictions, stopping after any capture),
//! paika only when no capture exists.
//!
//! The generator walks each capture chain depth-first and reports every prefix, because the
//! player may stop after any capturing step. Nothing is allocated: the chain's path lives in
//! a fixed array on the stack and each move is handed to a visitor.

use crate::geometry::{Bitboard, Geometry, NONE};
use crate::position::Position;

/// Longest possible capture chain: each step lands on a new point other than the start.
pub const MAX_STEPS: usize = 44;

/// How a capturing step captures.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Capture {
    Approach,
    Withdrawal,
}

/// A move as the generator reports it to a visitor: borrowed, valid during the call.
#[derive(Clone, Copy, Debug)]
pub struct MoveRef<'a> {
    pub from: u8,
    /// The points the piece steps to, in order; the last is where it ends.
    pub path: &'a [u8],
    /// Bit `i` set: step `i` is a withdrawal (else an approach), for `i < path.len()`;
    /// higher bits are unspecified. Meaningless for paika.
    pub withdrawals: u64,
    /// All pieces removed by the move; empty for a paika move.
    pub captured: Bitboard,
}

impl MoveRef<'_> {
    #[inline]
    pub fn to(&self) -> u8 {
        self.path[self.path.len() - 1]
    }

    #[inline]
    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }
}

/// The run of enemy pieces starting at `first` and going on in direction `d` up to the first
/// empty point, own piece or edge.
#[inline(always)]
fn captured_line(g: &Geometry, first: u8, d: usize, enemy: Bitboard) -> Bitboard {
    let mut run = 0;
    let mut p = first;
    while p != NONE && enemy & (1 << p) != 0 {
        run |= 1 << p;
        p = g.neighbour(p, d);
    }
    run
}

/// The side to move's pieces that have a capturing first step (approach or withdrawal).
#[inline]
pub fn capturing_pieces(pos: &Position) -> Bitboard {
    let g = pos.board().geometry();
    let (us, them, empty) = (pos.us(), pos.them(), pos.empty());
    let mut movers = 0;
    for d in 0..8 {
        let back = d ^ 4;
        // Approach in d: the point ahead is empty and the one beyond it is an enemy.
        movers |= g.step(g.step(them, back) & empty, back);
        // Withdrawal in d: the point ahead is empty and the one behind is an enemy.
        movers |= g.step(empty, back) & g.step(them, d);
    }
    movers & us
}

/// Whether the side to move must capture.
#[inline]
pub fn has_capture(pos: &Position) -> bool {
    capturing_pieces(pos) != 0
}

/// Walks the capture chains of one piece, calling the visitor at every step.
struct ChainWalk<'g, F> {
    g: &'g Geometry,
    visit: F,
    from: u8,
    path: [u8; MAX_STEPS],
    withdrawals: u64,
}

impl<F: FnMut(MoveRef<'_>)> ChainWalk<'_, F> {
    /// `cur`: where the piece is; `last`: direction of the previous step (8 before the first);
    /// `visited`: points it occupied this move; `empty`, `enemy`: the board after the steps so far.
    #[allow(clippy::too_many_arguments)]
    fn extend(
        &mut self,
        cur: u8,
        last: usize,
        visited: Bitboard,
        empty: Bitboard,
        enemy: Bitboard,
        captured: Bitboard,
        depth: usize,
    ) {
        let g = self.g;
        for d in 0..8 {
            if d == last {
                continue;
            }
            let n = g.neighbour(cur, d);
            if n == NONE {
                continue;
            }
            let nb = 1u64 << n;
            if (empty & !visited) & nb == 0 {
                continue;
            }
            let ahead = g.neighbour(n, d);
            if ahead != NONE && enemy & (1 << ahead) != 0 {
                let run = captured_line(g, ahead, d, enemy);
                self.step(cur, n, d, false, run, visited, empty, enemy, captured, depth);
            }
            let behind = g.neighbour(cur, d ^ 4);
            if behind != NONE && enemy & (1 << behind) != 0 {
                let run = captured_line(g, behind, d ^ 4, enemy);
                self.step(cur, n, d, true, run, visited, empty, enemy, captured, depth);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step(
        &mut self,
        cur: u8,
        n: u8,
        d: usize,
        withdrawal: bool,
        run: Bitboard,
        visited: Bitboard,
        empty: Bitboard,
        enemy: Bitboard,
        captured: Bitboard,
        depth: usize,
    ) {
        let nb = 1u64 << n;
        self.path[depth] = n;
        if withdrawal {
            self.withdrawals |= 1 << depth;
        } else {
            self.withdrawals &= !(1 << depth);
        }
        let captured = captured | run;
        (self.visit)(MoveRef {
            from: self.from,
            path: &self.path[..=depth],
            withdrawals: self.withdrawals,
            captured,
        });
        let empty = (empty | run | (1 << cur)) & !nb;
        self.extend(n, d, visited | nb, empty, enemy & !run, captured, depth + 1);
    }
}

/// Calls `visit` once for every legal move of the side to move (every distinct notated
/// move: a chain and each of its prefixes, approach and withdrawal separately).
#[inline]
pub fn for_each_move<F: FnMut(MoveRef<'_>)>(pos: &Position, mut visit: F) {
    let g = pos.board().geometry();
    let starts = capturing_pieces(pos);
    if starts != 0 {
        let (empty, them) = (pos.empty(), pos.them());
        let mut walk = ChainWalk {
            g,
            visit,
            from: 0,
            path: [0; MAX_STEPS],
            withdrawals: 0,
        };
        let mut s = starts;
        while s != 0 {
            let from = s.trailing_zeros() as u8;
            s &= s - 1;
            walk.from = from;
            walk.extend(from, 8, 1 << from, empty, them, 0, 0);
        }
    } else {
        let (us, empty) = (pos.us(), pos.empty());
        for d in 0..8 {
            let mut targets = g.step(us, d) & empty;
            while targets != 0 {
                let to = targets.trailing_zeros() as u8;
                targets &= targets - 1;
                let from = (to as i32 - g.shift[d]) as u8;
                visit(MoveRef {
                    from,
                    path: &[to],
                    withdrawals: 0,
                    captured: 0,
                });
            }
        }
    }
}

/// Calls `visit` with the position after every legal move (duplicates included).
#[inline]
pub fn for_each_child<F: FnMut(Position)>(pos: &Position, mut visit: F) {
    for_each_move(pos, |m| visit(pos.after(m.from, m.to(), m.captured)));
}

/// The number of legal moves, counted without building them.
#[inline]
pub fn count_moves(pos: &Position) -> u64 {
    let g = pos.board().geometry();
    if has_capture(pos) {
        let mut n = 0;
        for_each_move(pos, |_| n += 1);
        n
    } else {
        let (us, empty) = (pos.us(), pos.empty());
        (0..8)
            .map(|d| (g.step(us, d) & empty).count_ones() as u64)
            .sum()
    }
}

/// The distinct positions reachable in one move, sorted, written into `out` (cleared first).
/// Different moves can lead to the same position; search wants each position once.
pub fn successors_into(pos: &Position, out: &mut Vec<Position>) {
    out.clear();
    for_each_child(pos, |c| out.push(c));
    out.sort_unstable();
    out.dedup();
}

/// The distinct positions reachable in one move, sorted.
pub fn successors(pos: &Position) -> Vec<Position> {
    let mut out = Vec::new();
    successors_into(pos, &mut out);
    out
}

/// Whether the side to move has lost: no pieces, or no legal move.
pub fn is_lost(pos: &Position) -> bool {
    let g = pos.board().geometry();
    if pos.us() == 0 {
        return true;
    }
    if has_capture(pos) {
        return false;
    }
    let (us, empty) = (pos.us(), pos.empty());
    (0..8).all(|d| g.step(us, d) & empty == 0)
}
