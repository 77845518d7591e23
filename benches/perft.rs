//! `cargo bench`: perft from the 5x9 start at depths 6 and 7, on one core and on two,
//! each run 5 times; prints the median leaves per second.

use std::time::Instant;

use fanorona::perft::perft_parallel;
use fanorona::{Board, Position};

fn main() {
    let pos = Position::initial(Board::STANDARD);
    for (depth, threads) in [(6, 1), (7, 1), (6, 2), (7, 2)] {
        let mut rates = Vec::new();
        let mut nodes = 0;
        for _ in 0..5 {
            let t = Instant::now();
            nodes = perft_parallel(&pos, depth, threads);
            rates.push(nodes as f64 / t.elapsed().as_secs_f64());
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "perft 5x9 depth {depth}, {threads} thread(s): {nodes} leaves, median {:.1} M leaves/s (5 runs)",
            rates[2] / 1e6
        );
    }
}
