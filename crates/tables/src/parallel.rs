//! Work over index ranges on several threads: chunks taken from a shared counter, so the
//! threads stay busy however uneven the chunks are.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Positions per chunk: large enough to amortise the counter, small enough to balance.
pub const POSITIONS: u64 = 1 << 14;
/// Bitmap words (64 positions each) per chunk.
pub const WORDS: u64 = 1 << 8;

/// Runs `work` over `0..len` in chunks of `chunk` on `threads` threads; `done` is told each
/// chunk's size (for a progress bar).
pub fn for_chunks<F, D>(len: u64, chunk: u64, threads: usize, done: D, work: F)
where
    F: Fn(Range<u64>) + Sync,
    D: Fn(u64) + Sync,
{
    let cursor = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let start = cursor.fetch_add(chunk, Ordering::Relaxed);
                    if start >= len {
                        break;
                    }
                    let end = (start + chunk).min(len);
                    work(start..end);
                    done(end - start);
                }
            });
        }
    });
}
