//! How far a position's quiet play reaches: the positions reachable from it without a
//! capture (breadth first, ply by ply, up to a cap), how many of them must capture (the
//! exits), and the positions their captures lead to, by pieces on the board. A measurement
//! for `docs/5x9.md` ("What sharing across pasts could give at most"): the size of what a
//! retrograde analysis of one quiet endgame would have to hold.
//!
//! `cargo run --release --example quiet_component -- POSITION [CAP]` (CAP: positions, default
//! 50 million, checked between plies, so the last ply can take it 2 or 3 times over; about
//! 40 bytes each). The exits are counted among the positions before the last ply.

use std::collections::{BTreeMap, HashSet};

use fanorona::Position;
use fanorona::movegen::{has_capture, successors};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(text), cap) = (args.next(), args.next()) else {
        eprintln!("usage: quiet_component POSITION [CAP]");
        std::process::exit(2);
    };
    let root: Position = text.parse().unwrap_or_else(|e| {
        eprintln!("'{text}': {e}");
        std::process::exit(2);
    });
    let cap: usize = match cap.map(|c| c.parse()) {
        None => 50_000_000,
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            eprintln!("CAP: {e}");
            std::process::exit(2);
        }
    };
    let t = std::time::Instant::now();
    let mut seen = HashSet::from([root]);
    let (mut exits, mut after) = (0u64, HashSet::new());
    let mut frontier = vec![root];
    let mut ply = 0;
    while !frontier.is_empty() && seen.len() < cap {
        let mut next = Vec::new();
        for p in &frontier {
            // Captures are compulsory: a position with one leaves the quiet play.
            if has_capture(p) {
                exits += 1;
                after.extend(successors(p));
                continue;
            }
            next.extend(successors(p).into_iter().filter(|k| seen.insert(*k)));
        }
        ply += 1;
        println!(
            "{ply} {}: {} positions without a capture, {} new; {exits} must capture, into {} positions ({:.1} s)",
            if ply == 1 { "ply" } else { "plies" },
            seen.len(),
            next.len(),
            after.len(),
            t.elapsed().as_secs_f64()
        );
        frontier = next;
    }
    let mut by_pieces = BTreeMap::new();
    for p in &after {
        *by_pieces.entry(p.piece_count()).or_insert(0u64) += 1;
    }
    println!(
        "{}: {} positions without a capture ({}); after the captures, by pieces: {by_pieces:?}",
        root,
        seen.len(),
        if frontier.is_empty() {
            "all of them"
        } else {
            "stopped at the cap"
        }
    );
}
