//! Independent jobs numbered 0..n on a few threads, each thread taking the next number: games
//! of a match, games of the statistics.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `work(i)` for every `i` in `0..n` on `threads` threads; `done` sees each result as it
/// comes. The results come back in the order of `i`, whatever the threads did. Once `stop` is
/// set no job starts, and those under way finish: the results are then those of `0..k` for
/// some `k <= n`, a prefix, since every number taken is finished.
pub fn run_numbered<T: Send>(
    n: usize,
    threads: usize,
    work: impl Fn(usize) -> T + Sync,
    done: &(dyn Fn(&T) + Sync),
    stop: &AtomicBool,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    // Not `n` up front: a run asked for far more than it will play (until a Ctrl-C) would
    // reserve them all.
    let results = Mutex::new(Vec::with_capacity(n.min(4096)));
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = work(i);
                    done(&r);
                    results.lock().expect("results lock").push((i, r));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
