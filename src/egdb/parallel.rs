//! Work over index ranges on several threads: chunks taken from a shared counter, so the
//! threads stay busy however uneven the chunks are.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Positions per chunk: large enough to amortise the counter, small enough to balance.
const CHUNK: u64 = 1 << 14;

/// Runs `work` over `0..len` in chunks on `threads` threads; `done` is told each chunk's size
/// (for a progress bar).
pub fn for_chunks<F, D>(len: u64, threads: usize, done: D, work: F)
where
    F: Fn(Range<u64>) + Sync,
    D: Fn(u64) + Sync,
{
    let cursor = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let start = cursor.fetch_add(CHUNK, Ordering::Relaxed);
                    if start >= len {
                        break;
                    }
                    let end = (start + CHUNK).min(len);
                    work(start..end);
                    done(end - start);
                }
            });
        }
    });
}
