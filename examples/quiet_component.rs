//! How far a position's quiet play reaches: the positions reachable from it without a
//! capture (breadth first, ply by ply, up to a cap), how many of them must capture (the
//! exits), and the positions their captures lead to, by pieces on the board. A measurement
//! for `docs/journal/5x9.md` ("What sharing across pasts could give at most"): the size of what a
//! retrograde analysis of one quiet endgame would have to hold.
//!
//! `cargo run --release --example quiet_component -- POSITION [CAP] [--classes]` (CAP:
//! positions, default 50 million, checked between plies, so the last ply can take it 2 or 3
//! times over; about 40 bytes each). The exits are counted among the positions before the
//! last ply. `--classes` also counts the positions reached as classes under the board's
//! mirrors (left-right, top-bottom and both): what a table keyed by class could share.

use std::collections::{BTreeMap, HashSet};

use fanorona::geometry::points;
use fanorona::movegen::{has_capture, successors};
use fanorona::{Bitboard, Board, Color, Position};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let classes = args.iter().any(|a| a == "--classes");
    args.retain(|a| a != "--classes");
    let mut args = args.into_iter();
    let (Some(text), cap) = (args.next(), args.next()) else {
        eprintln!("usage: quiet_component POSITION [CAP] [--classes]");
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
    if classes {
        let distinct: HashSet<_> = seen.iter().map(class).collect();
        println!(
            "{} classes under the board's mirrors ({:.3} positions a class)",
            distinct.len(),
            seen.len() as f64 / distinct.len() as f64
        );
    }
}

/// The least of a position's images under the board's mirrors: the same for every position
/// of its class.
fn class(p: &Position) -> (Bitboard, Bitboard, bool) {
    let board = p.board();
    let (white, black) = [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .map(|(lr, tb)| {
            (
                mirrored(board, p.white(), lr, tb),
                mirrored(board, p.black(), lr, tb),
            )
        })
        .min()
        .expect("four images");
    (white, black, p.side_to_move() == Color::White)
}

fn mirrored(board: Board, set: Bitboard, left_right: bool, top_bottom: bool) -> Bitboard {
    points(set).fold(0, |acc, p| {
        let (mut col, mut row) = (board.col_of(p), board.row_of(p));
        if left_right {
            col = board.cols() - 1 - col;
        }
        if top_bottom {
            row = board.rows() - 1 - row;
        }
        acc | 1 << board.point(col, row)
    })
}
