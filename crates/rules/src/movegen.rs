//! Whole-turn move generation: compulsory capture (approach and withdrawal, extended
//! chains with the same-direction and no-revisit restrictions, stopping after any capture),
//! paika only when no capture exists.
//!
//! The generator walks each capture chain depth-first and reports every prefix, because the
//! player may stop after any capturing step. Nothing is allocated: the chain's path lives in
//! a fixed array on the stack and each move is handed to a visitor.

use crate::geometry::{Bitboard, Geometry};
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

/// For every direction, the points from which a piece of the side to move *would* capture by
/// stepping that way (whether or not a piece stands there): the whole board's capture
/// opportunities in 32 shifts.
struct CaptureMap {
    /// `approach[d]`: the point ahead in `d` is empty and the one beyond it an enemy.
    approach: [Bitboard; 8],
    /// `withdraw[d]`: the point ahead in `d` is empty and the one behind an enemy.
    withdraw: [Bitboard; 8],
}

impl CaptureMap {
    #[inline(always)]
    fn new(g: &Geometry, them: Bitboard, empty: Bitboard) -> CaptureMap {
        let mut map = CaptureMap {
            approach: [0; 8],
            withdraw: [0; 8],
        };
        for d in 0..8 {
            let back = d ^ 4;
            map.approach[d] = g.step(g.step(them, back) & empty, back);
            map.withdraw[d] = g.step(empty, back) & g.step(them, d);
        }
        map
    }

    #[inline(always)]
    fn any(&self, d: usize) -> Bitboard {
        self.approach[d] | self.withdraw[d]
    }

    /// The capturing steps of a piece on `p` as `capture_steps` gives them, on the board
    /// the map was made of: bit `d` of each map.
    #[inline(always)]
    fn steps(&self, p: u8) -> u32 {
        let mut steps = 0u32;
        for d in 0..8 {
            steps |= (((self.approach[d] >> p) & 1) as u32) << d
                | (((self.withdraw[d] >> p) & 1) as u32) << (d + 8);
        }
        steps
    }
}

/// The pieces of a position's side to move that have a capturing first step, with the map
/// they were found by, which gives their chains' first two steps (`try_for_each_capture`).
pub struct CaptureStarts {
    map: CaptureMap,
    pieces: Bitboard,
}

impl CaptureStarts {
    /// The side to move's pieces with a capturing first step: none where it moves paika.
    #[inline(always)]
    pub fn pieces(&self) -> Bitboard {
        self.pieces
    }
}

/// The capture starts of `pos`: `capturing_pieces` with its map kept for the walk.
#[inline]
pub fn capture_starts(pos: &Position) -> CaptureStarts {
    let map = CaptureMap::new(pos.board().geometry(), pos.them(), pos.empty());
    let pieces = (0..8).fold(0, |m, d| m | map.any(d)) & pos.us();
    CaptureStarts { map, pieces }
}

/// The side to move's pieces that have a capturing first step (approach or withdrawal).
#[inline]
pub fn capturing_pieces(pos: &Position) -> Bitboard {
    capture_starts(pos).pieces
}

/// Whether the side to move must capture.
#[inline]
pub fn has_capture(pos: &Position) -> bool {
    capturing_pieces(pos) != 0
}

/// The capturing steps a piece on `p` has: bit `d` an approach in direction `d`, bit `8 + d`
/// a withdrawal. `free`: the points it may step to; `enemy`: the pieces it may capture.
///
/// Computed without branches: which directions work differs at every node and defeats
/// branch prediction.
#[inline(always)]
fn capture_steps(g: &Geometry, p: u8, free: Bitboard, enemy: Bitboard) -> u32 {
    let p = p as usize & 63;
    let (i1, i2) = (&g.index1[p], &g.index2[p]);
    let mut steps = 0u64;
    for d in 0..8 {
        let open = free >> i1[d];
        let approach = enemy >> i2[d];
        let withdraw = enemy >> i1[d ^ 4];
        steps |= ((open & approach & 1) << d) | ((open & withdraw & 1) << (d + 8));
    }
    steps as u32
}

/// The steps of `capture_steps` in direction `d` or its reverse.
#[inline(always)]
const fn along(d: usize) -> u32 {
    (0x101 << d) | (0x101 << (d ^ 4))
}

/// The number of paika moves: every piece, every line, to an adjacent empty point.
#[inline(always)]
fn paika_count(g: &Geometry, us: Bitboard, empty: Bitboard) -> u64 {
    (0..8)
        .map(|d| (g.step(us, d) & empty).count_ones() as u64)
        .sum()
}

/// `last` before the first step of a chain: a shift that masks no direction.
const NO_DIRECTION: usize = 16;

/// Walks the capture chains of one piece, calling the visitor at every step, until the
/// visitor returns false.
///
/// The board is tracked as `free` (empty points the piece has not occupied this move: where
/// it may step) and `enemy`; captured points become free, the points it leaves do not, which
/// is the no-revisit rule.
struct ChainWalk<'g, F> {
    g: &'g Geometry,
    /// The position's capture map: a chain's first two steps are read off it (see `extend`).
    map: &'g CaptureMap,
    visit: F,
    from: u8,
    path: [u8; MAX_STEPS],
    withdrawals: u64,
}

impl<F: FnMut(MoveRef<'_>) -> bool> ChainWalk<'_, F> {
    /// `cur`: where the piece is; `last`: direction of the previous step, or `NO_DIRECTION`.
    /// False once the visitor has asked to stop.
    fn extend(
        &mut self,
        cur: u8,
        last: usize,
        free: Bitboard,
        enemy: Bitboard,
        captured: Bitboard,
        depth: usize,
    ) -> bool {
        let g = self.g;
        let mut steps = if depth < 2 {
            // Where the chain starts, and after its first step: there the board differs
            // from the position's only on the line of that step (the pieces it captured, the
            // point it left), which the step's direction and its reverse cover, and those
            // are not taken (the reverse leads back to the point left). So the map of the
            // whole board, made once, gives the steps.
            self.map.steps(cur)
        } else {
            // Many chains end at once: no free point next to the piece. Checking that first
            // spares the direction loop.
            if free & g.adjacent[cur as usize] == 0 {
                return true;
            }
            capture_steps(g, cur, free, enemy)
        };
        let (step1, ray) = (&g.step1[cur as usize], &g.ray[cur as usize]);
        // Not the direction of the previous step (`last` is 16 before the first step).
        steps &= !(0x101 << last);
        while steps != 0 {
            let bit = steps.trailing_zeros() as usize;
            steps &= steps - 1;
            let d = bit & 7;
            let nb = step1[d];
            let went_on = if bit < 8 {
                let run = Geometry::leading_run(ray[d] ^ nb, d, enemy);
                self.step(nb, d, false, run, free, enemy, captured, depth)
            } else {
                let run = Geometry::leading_run(ray[d ^ 4], d ^ 4, enemy);
                self.step(nb, d, true, run, free, enemy, captured, depth)
            };
            if !went_on {
                return false;
            }
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step(
        &mut self,
        nb: Bitboard,
        d: usize,
        withdrawal: bool,
        run: Bitboard,
        free: Bitboard,
        enemy: Bitboard,
        captured: Bitboard,
        depth: usize,
    ) -> bool {
        let n = nb.trailing_zeros() as u8;
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
        }) && self.extend(n, d, (free & !nb) | run, enemy & !run, captured, depth + 1)
    }
}

/// Calls `visit` once for every legal move of the side to move (every distinct notated
/// move: a chain and each of its prefixes, approach and withdrawal separately).
#[inline]
pub fn for_each_move<F: FnMut(MoveRef<'_>)>(pos: &Position, mut visit: F) {
    let g = pos.board().geometry();
    let starts = capture_starts(pos);
    if starts.pieces != 0 {
        try_for_each_capture(pos, &starts, |m| {
            visit(m);
            true
        });
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

/// The captures of a position whose side to move must capture, `starts` its
/// `capture_starts`, handed to `visit` as `for_each_move` does until it returns false.
/// False if it did.
#[inline]
pub fn try_for_each_capture<F: FnMut(MoveRef<'_>) -> bool>(
    pos: &Position,
    starts: &CaptureStarts,
    visit: F,
) -> bool {
    let (empty, them) = (pos.empty(), pos.them());
    let mut walk = ChainWalk {
        g: pos.board().geometry(),
        map: &starts.map,
        visit,
        from: 0,
        path: [0; MAX_STEPS],
        withdrawals: 0,
    };
    let mut s = starts.pieces;
    while s != 0 {
        let from = s.trailing_zeros() as u8;
        s &= s - 1;
        walk.from = from;
        if !walk.extend(from, NO_DIRECTION, empty, them, 0, 0) {
            return false;
        }
    }
    true
}

/// Calls `visit` with the position after every legal move (duplicates included).
#[inline]
pub fn for_each_child<F: FnMut(Position)>(pos: &Position, mut visit: F) {
    for_each_move(pos, |m| visit(pos.after(m.from, m.to(), m.captured)));
}

/// The number of legal moves, counted without building them.
///
/// A chain that reached `n` by a step in direction `d` can only go on in a direction other
/// than `d` and its reverse (the point it came from is visited). The pieces that step removed
/// lie on the line through `n` along `d`, so in those other directions the board around `n`
/// is the same as before the step: the steps a destination offers are read off the board
/// before the step, once for the approach and the withdrawal that reach it, and only the
/// chains that really go on are followed. First steps are counted in bulk from the capture
/// map.
#[inline]
pub fn count_moves(pos: &Position) -> u64 {
    count_moves_and_capturers(pos).0
}

/// The number of legal moves and the side to move's pieces that can capture
/// (`capturing_pieces`), which the count finds on its way.
#[inline]
pub fn count_moves_and_capturers(pos: &Position) -> (u64, Bitboard) {
    let g = pos.board().geometry();
    let (us, them, empty) = (pos.us(), pos.them(), pos.empty());
    let map = CaptureMap::new(g, them, empty);
    let anywhere: [Bitboard; 8] = std::array::from_fn(|d| map.any(d));
    let capturers = (0..8).fold(0, |m, d| m | anywhere[d]) & us;
    if capturers == 0 {
        return (paika_count(g, us, empty), 0);
    }
    let mut count = 0u64;
    for d in 0..8 {
        let (app, wd) = (map.approach[d] & us, map.withdraw[d] & us);
        if app | wd == 0 {
            continue;
        }
        count += (app.count_ones() + wd.count_ones()) as u64;
        let can_go_on = (0..8)
            .filter(|&e| e != d && e != d ^ 4)
            .fold(0, |m, e| m | anywhere[e]);
        let mut dests = g.step(app | wd, d) & can_go_on;
        while dests != 0 {
            let n = dests.trailing_zeros() as u8;
            dests &= dests - 1;
            let from = (n as i32 - g.shift[d]) as u8;
            let next = capture_steps(g, n, empty, them) & !along(d);
            let kinds = (((app >> from) & 1) | (((wd >> from) & 1) << 8)) as u32;
            count += count_after_step(g, from, n, d, kinds, next, empty, them);
        }
    }
    (count, capturers)
}

/// The chains that go on after the capturing steps `kinds` (bit 0 approach, bit 8
/// withdrawal) from `cur` to `n` in direction `d`, with `next` the steps `n` then offers.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn count_after_step(
    g: &Geometry,
    cur: u8,
    n: u8,
    d: usize,
    kinds: u32,
    next: u32,
    free: Bitboard,
    enemy: Bitboard,
) -> u64 {
    let nb = 1u64 << n;
    let mut count = 0;
    if kinds & 1 != 0 {
        let run = Geometry::leading_run(g.ray[n as usize][d], d, enemy);
        count += count_chains(g, n, next, (free & !nb) | run, enemy & !run);
    }
    if kinds & 0x100 != 0 {
        let run = Geometry::leading_run(g.ray[cur as usize][d ^ 4], d ^ 4, enemy);
        count += count_chains(g, n, next, (free & !nb) | run, enemy & !run);
    }
    count
}

/// The number of chains that go on from a piece on `cur` whose available steps are `steps`.
fn count_chains(g: &Geometry, cur: u8, steps: u32, free: Bitboard, enemy: Bitboard) -> u64 {
    let mut count = steps.count_ones() as u64;
    let mut dirs = (steps | (steps >> 8)) & 0xFF;
    while dirs != 0 {
        let d = dirs.trailing_zeros() as usize;
        dirs &= dirs - 1;
        let n = g.index1[cur as usize & 63][d];
        // Most chains end here: no free point next to `n` off the line it came along.
        let ni = n as usize & 63;
        if free & g.adjacent[ni] & !(g.step1[ni][d] | g.step1[ni][d ^ 4]) == 0 {
            continue;
        }
        let next = capture_steps(g, n, free, enemy) & !along(d);
        if next != 0 {
            let kinds = (steps >> d) & 0x101;
            count += count_after_step(g, cur, n, d, kinds, next, free, enemy);
        }
    }
    count
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
    paika_count(g, pos.us(), pos.empty()) == 0
}
