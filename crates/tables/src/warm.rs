//! Reading a board's tables into memory ahead of a search, in the background.
//!
//! A search probes its tables at random; a probe of a page not yet read waits for one 4 KiB
//! read from disk, and a search on tables it has not read yet spends more time waiting on
//! those than computing (journal, "learned-guide"). Read in order, the same bytes come in
//! at the disk's sequential speed, about ten times the rate at which a search faults single
//! pages in. `warm` reads the slices of a board from the smallest piece count up (a byte of
//! a small slice is probed far more often than one of a large slice) while the bytes read
//! stay within what the machine has free less a reserve for the search itself, asked again
//! as the reading goes (the search's own memory grows meanwhile): where the tables outgrow
//! memory, the slice that reaches the budget is read in part and the largest are left to
//! the probes. The pages are the kernel's page cache, given back whenever anything else
//! needs the memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use fanorona_rules::geometry::Board;

use crate::file::{Kind, slice_path};
use crate::index::Material;

/// Memory left to everything else: a quarter of the machine (the search's trees and tables).
const RESERVE_SHARE: u64 = 4;

/// The slice files to read, in order, and how many of each one's bytes, within `budget`
/// bytes: from the smallest piece count up, each piece count's slices from the smallest;
/// the slice that reaches the budget is read up to it (a probe lands anywhere in a slice, so
/// its first part serves as well as any), and nothing after it.
pub fn plan(root: &Path, board: Board, max_pieces: usize, budget: u64) -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    let mut total = 0u64;
    for pieces in 2..=max_pieces {
        let mut layer: Vec<(PathBuf, u64)> = Material::with_pieces(pieces)
            .map(|m| slice_path(root, board, m, Kind::Wdl))
            .filter_map(|p| {
                let len = std::fs::metadata(&p).ok()?.len();
                Some((p, len))
            })
            .collect();
        layer.sort_by_key(|(_, len)| *len);
        for (path, len) in layer {
            let len = len.min(budget - total);
            if len > 0 {
                files.push((path, len));
            }
            total += len;
            if total == budget {
                return files;
            }
        }
    }
    files
}

/// What the machine can give the tables now: MemAvailable less a quarter of MemTotal, both
/// within the limit of this process's control group where it has one (a container's), less
/// the memory its members hold; 0 where /proc/meminfo cannot be read.
pub fn budget() -> u64 {
    use fanorona_rules::machine::{cgroup_memory, meminfo};
    let (Some(mut available), Some(mut total)) = (meminfo("MemAvailable"), meminfo("MemTotal"))
    else {
        return 0;
    };
    if let Some((limit, held)) = cgroup_memory() {
        total = total.min(limit);
        available = available.min(limit.saturating_sub(held));
    }
    available.saturating_sub(total / RESERVE_SHARE)
}

/// A background read of tables under way: stopped when dropped.
pub struct Warming {
    stop: Arc<AtomicBool>,
    read: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Bytes the plan reads in all.
    pub planned: u64,
}

impl Warming {
    /// Bytes read so far.
    pub fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Stops the reading and waits for its thread; the bytes it read.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.read()
    }
}

impl Drop for Warming {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How often the reading asks whether the budget still holds.
const ASK_EVERY: u64 = 64 << 20;

/// Starts reading `board`'s tables under `root` up to `max_pieces`, as `plan` orders them
/// within `budget()`, on a thread of its own, and returns at once; the reading stops early
/// where the budget, asked again every 64 MiB, falls below what it has read. A file that
/// cannot be read is passed over (the search's own open of it says what is wrong).
pub fn warm(root: &Path, board: Board, max_pieces: usize) -> Warming {
    let files = plan(root, board, max_pieces, budget());
    start(files, |read| read < budget())
}

/// Reads `files` (each to its length) on a thread, while `go_on(bytes read)` holds.
fn start(files: Vec<(PathBuf, u64)>, go_on: impl Fn(u64) -> bool + Send + 'static) -> Warming {
    let stop = Arc::new(AtomicBool::new(false));
    let read = Arc::new(AtomicU64::new(0));
    let planned = files.iter().map(|(_, len)| len).sum();
    let thread = (!files.is_empty())
        .then(|| {
            let (stop, read) = (stop.clone(), read.clone());
            // Without a thread the search reads its pages as it probes them, as before.
            std::thread::Builder::new()
                .name("tables-warm".into())
                .spawn(move || {
                    let mut buf = vec![0u8; 1 << 20];
                    let mut next_ask = 0;
                    // Whether to read on after `n` bytes: not once stopped; `go_on` asked
                    // every ASK_EVERY bytes, across files.
                    let mut going = |n: u64| {
                        if stop.load(Ordering::Relaxed) {
                            return false;
                        }
                        if n < next_ask {
                            return true;
                        }
                        next_ask = n + ASK_EVERY;
                        go_on(n)
                    };
                    for (path, len) in &files {
                        // A file that cannot be read is passed over.
                        if let Ok(false) = read_through(path, *len, &mut buf, &read, &mut going) {
                            break;
                        }
                    }
                })
                .ok()
        })
        .flatten();
    Warming {
        stop,
        read,
        thread,
        planned,
    }
}

/// Reads the first `len` bytes of `path` through `buf`, adding them to `read`, while
/// `go_on(bytes read in all)` holds: `Ok(false)` where it stopped holding.
fn read_through(
    path: &Path,
    len: u64,
    buf: &mut [u8],
    read: &AtomicU64,
    go_on: &mut dyn FnMut(u64) -> bool,
) -> io::Result<bool> {
    let mut file = File::open(path)?.take(len);
    loop {
        if !go_on(read.load(Ordering::Relaxed)) {
            return Ok(false);
        }
        let n = file.read(buf)?;
        if n == 0 {
            return Ok(true);
        }
        read.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildOptions, build, scheme::Scheme};

    #[test]
    fn the_plan_reads_small_piece_counts_first_and_stops_at_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let board: Board = "3x3".parse().unwrap();
        let options = BuildOptions {
            threads: 1,
            progress: false,
            distances: false,
            report_every: None,
            index: Scheme::Symmetric,
            checkpoint_every: None,
        };
        build(dir.path(), board, 5, &options, &mut |_| {}).unwrap();
        let all = plan(dir.path(), board, 5, u64::MAX);
        // Every slice of 2 to 5 pieces built, once each, in order of piece count.
        let count: usize = (2..=5).map(|n| Material::with_pieces(n).count()).sum();
        assert_eq!(all.len(), count);
        let pieces = |p: &Path| {
            let name = p.file_stem().unwrap().to_str().unwrap();
            let (a, b) = name.split_once('-').unwrap();
            a.parse::<usize>().unwrap() + b.parse::<usize>().unwrap()
        };
        assert!(all.windows(2).all(|w| pieces(&w[0].0) <= pieces(&w[1].0)));
        let total: u64 = all.iter().map(|(_, len)| len).sum();
        // A budget 100 bytes short of everything reads the last (largest 5-piece) slice
        // but its last 100 bytes, and everything before it whole.
        let short = plan(dir.path(), board, 5, total - 100);
        assert_eq!(short[..count - 1], all[..count - 1]);
        assert_eq!(short[count - 1].0, all[count - 1].0);
        assert_eq!(short[count - 1].1, all[count - 1].1 - 100);
        // One that ends on the first 3-piece slice's bytes reads nothing after it.
        let two: u64 = all
            .iter()
            .take_while(|(p, _)| pieces(p) == 2)
            .map(|(_, l)| l)
            .sum();
        let some = plan(dir.path(), board, 5, two + 10);
        assert_eq!(some.last().map(|(p, l)| (pieces(p), *l)), Some((3, 10)));
        assert!(plan(dir.path(), board, 5, 0).is_empty());
        // Within each piece count, from the smallest slice.
        for w in all.windows(2) {
            assert!(
                pieces(&w[0].0) < pieces(&w[1].0) || w[0].1 <= w[1].1,
                "{w:?}"
            );
        }
        // The thread reads what the plan holds, a part of a file included.
        let w = start(short.clone(), |_| true);
        let planned = w.planned;
        assert_eq!(planned, total - 100);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while w.read() < planned && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(w.stop(), planned);
        // Told to stop at once, it reads nothing.
        assert_eq!(start(all.clone(), |_| false).stop(), 0);
    }
}
