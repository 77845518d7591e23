//! Where a search's nodes go: the positions created, by the number of pieces on the board
//! of the position whose expansion created them. With tables up to N pieces no position of N
//! or fewer is expanded, so the count at N + 1 is what tables of one more piece would have
//! spared the search (to first order: the search's choices would change too).
//!
//! Counted per thread, in the thread's own cells (no atomics in the hot loop): a caller that
//! wants one search's census runs it on its thread between two `take`s.

use std::cell::Cell;

/// More than the most pieces of any board (5x9 and 9x5 start with 44).
pub const MAX_PIECES: usize = 48;

thread_local! {
    static CREATED: [Cell<u64>; MAX_PIECES] = const { [const { Cell::new(0) }; MAX_PIECES] };
}

/// `created` positions made by expanding one with `pieces` on the board.
#[inline]
pub fn count(pieces: u32, created: u64) {
    CREATED.with(|c| {
        let cell = &c[(pieces as usize).min(MAX_PIECES - 1)];
        cell.set(cell.get().wrapping_add(created));
    });
}

/// Takes back `counted` positions counted twice (a second level's children, attached again
/// to the first level).
#[inline]
pub fn uncount(pieces: u32, counted: u64) {
    CREATED.with(|c| {
        let cell = &c[(pieces as usize).min(MAX_PIECES - 1)];
        cell.set(cell.get().saturating_sub(counted));
    });
}

/// This thread's counts since the last `take` (index: pieces on the board of the expanded
/// position), and zero again.
pub fn take() -> [u64; MAX_PIECES] {
    CREATED.with(|c| std::array::from_fn(|i| c[i].replace(0)))
}

/// Runs `f` without its counts: a check or a certificate after a search creates positions
/// of its own, which are not the search's.
pub fn set_aside<T>(f: impl FnOnce() -> T) -> T {
    let kept = take();
    let result = f();
    CREATED.with(|c| {
        for (cell, k) in c.iter().zip(kept) {
            cell.set(k);
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_per_thread_and_taken_once() {
        take();
        count(8, 5);
        count(8, 2);
        count(60, 1);
        uncount(8, 3);
        std::thread::spawn(|| count(8, 100)).join().unwrap();
        let t = take();
        assert_eq!((t[8], t[MAX_PIECES - 1]), (4, 1));
        assert_eq!(t.iter().sum::<u64>(), 5);
        assert_eq!(take().iter().sum::<u64>(), 0);
        count(9, 1);
        assert_eq!(set_aside(|| count(9, 10)), ());
        assert_eq!(take()[9], 1);
    }
}
