//! A long run of a 9-piece build's first pass over one 5x9 slice, nothing written: the
//! work to put under a profiler (`perf record -g`) when making the first pass faster. The
//! slices its captures lead to are read from copies in memory, as a build reads them.
//!
//! `cargo run --release --example first_pass_profile -- TABLES SLICE [ENTRIES] [AT] [READS]`
//! (SLICE: 4-5, 5-4, 6-3, ...; ENTRIES: how many, default 50 million; AT: where in the
//! slice, 0 to 1, default 0.5; READS: `first-win` or `gathered`, default the build's).
//! TABLES needs the slices up to one piece fewer.

use std::time::Instant;

use fanorona::Board;
use fanorona::egdb::build::symmetric::{PassOrder, first_pass_sample};
use fanorona::egdb::capture_values::{CaptureValues, Reads};
use fanorona::egdb::symmetric::SymSlice;
use fanorona::egdb::{Database, Material};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(slice)) = (args.first(), args.get(1)) else {
        eprintln!("usage: first_pass_profile TABLES SLICE [ENTRIES] [AT] [READS]");
        std::process::exit(2);
    };
    let parse = |i: usize, default: f64| {
        args.get(i).map_or(default, |a| {
            a.parse().unwrap_or_else(|e| {
                eprintln!("'{a}': {e}");
                std::process::exit(2)
            })
        })
    };
    let (count, at) = (parse(2, 50e6) as u64, parse(3, 0.5));
    let m: Material = slice.parse().unwrap_or_else(|e| {
        eprintln!("'{slice}': {e}");
        std::process::exit(2)
    });
    let board = Board::STANDARD;
    let db = Database::resident(dir.as_ref(), board);
    let captures = CaptureValues::new(&db, m).unwrap_or_else(|missing| {
        eprintln!("slice {missing} is not in {dir}");
        std::process::exit(1)
    });
    let captures = match args.get(4).map(String::as_str) {
        None => captures,
        Some("first-win") => captures.reading(Reads::FirstWin),
        Some("gathered") => captures.reading(Reads::Gathered),
        Some(other) => {
            eprintln!("'{other}': reads are first-win or gathered");
            std::process::exit(2)
        }
    };
    let slice = SymSlice::new(board, m).unwrap_or_else(|e| {
        eprintln!("'{slice}': {e}");
        std::process::exit(2)
    });
    let order = PassOrder::of(m);
    // A first short run loads the slices, so that the timed one reads from memory.
    first_pass_sample(&slice, &captures, order, at, 1 << 20);
    let start = Instant::now();
    let (n, sum) = first_pass_sample(&slice, &captures, order, at, count);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{m} by {order:?}: {n} entries in {secs:.2} s, {:.2} M/s (code sum {sum})",
        n as f64 / secs / 1e6
    );
}
