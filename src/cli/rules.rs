//! The rules commands: `show`, `moves`, `perft`, `bench`.

use std::time::Instant;

use anyhow::Context;
use serde_json::json;

use crate::cli::Target;
use crate::cli::bench;
use crate::cli::output::{CliResult, Failure, input};
use crate::out;
use fanorona::movegen::is_lost;
use fanorona::perft::{divide, perft_parallel};
use fanorona::{Board, Move, Position, diagram, legal_moves};

/// The position named by a positional text or `--board`, else the 5x9 start.
pub fn resolve_position(position: Option<&str>, board: Option<&str>) -> Result<Position, Failure> {
    match (position, board) {
        // A board's name stands for its start, as solve and play take it.
        (Some(p), _) => target_position(p),
        (None, Some(b)) => Ok(Position::initial(input(b.parse::<Board>())?)),
        (None, None) => Ok(Position::initial(Board::STANDARD)),
    }
}

/// A board (its start) or a position, read as every command and the daemon read a target
/// (`parse_target`: a finished game is refused).
pub fn target_position(text: &str) -> Result<Position, Failure> {
    fanorona::parse_target(text).map_err(|e| Failure::input(anyhow::anyhow!(e)))
}

fn notations(pos: &Position) -> Vec<String> {
    legal_moves(pos)
        .iter()
        .map(|m| m.notation(pos.board()))
        .collect()
}

/// The position of a `Target`: its text or board start, with `--play`'s moves played.
pub fn resolve_target(target: &Target) -> Result<Position, Failure> {
    let mut pos = match &target.record {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Failure::input(anyhow::anyhow!("cannot read {}: {e}", path.display()))
            })?;
            let (game, _) = fanorona::play::record::parse(&text)
                .map_err(|e| Failure::input(anyhow::anyhow!("{}: {e}", path.display())))?;
            *game.position()
        }
        None => resolve_position(target.position.as_deref(), target.board.as_deref())?,
    };
    for (i, text) in target
        .play
        .iter()
        .flat_map(|p| p.split_whitespace())
        .enumerate()
    {
        let m = input(
            Move::parse(&pos, text).with_context(|| format!("move {} '{text}' in {pos}", i + 1)),
        )?;
        pos = m.apply(&pos);
    }
    Ok(pos)
}

pub fn show(target: &Target, json: bool) -> CliResult {
    let pos = resolve_target(target)?;
    let moves = notations(&pos);
    let lost = is_lost(&pos);
    if json {
        out!(
            "{}",
            json!({
                "board": pos.board().to_string(),
                "position": pos.to_string(),
                "side_to_move": pos.side_to_move().name(),
                "moves": moves,
                "lost": lost,
            })
        );
    } else {
        out!("{}", diagram::draw(&pos).trim_end());
        out!("{pos}");
        if lost {
            out!("No legal move: {} has lost.", pos.side_to_move());
        } else {
            out!("{} legal moves: {}", moves.len(), moves.join(" "));
        }
    }
    Ok(())
}

pub fn moves(target: &Target, json: bool) -> CliResult {
    let pos = resolve_target(target)?;
    let moves = notations(&pos);
    if json {
        out!(
            "{}",
            json!({ "board": pos.board().to_string(), "position": pos.to_string(), "moves": moves })
        );
    } else {
        for m in moves {
            out!("{m}");
        }
    }
    Ok(())
}

pub struct PerftArgs<'a> {
    pub target: &'a Target,
    pub depth: u32,
    pub divide: bool,
    pub threads: usize,
    pub json: bool,
}

pub fn perft(args: PerftArgs<'_>) -> CliResult {
    let pos = resolve_target(args.target)?;
    let depth = args.depth;
    let start = Instant::now();
    let (nodes, parts) = if args.divide && depth >= 1 {
        let parts = divide(&pos, depth);
        (parts.iter().map(|(_, n)| n).sum(), parts)
    } else {
        (perft_parallel(&pos, depth, args.threads), Vec::new())
    };
    let seconds = start.elapsed().as_secs_f64();
    let nps = (nodes as f64 / seconds.max(1e-9)).round() as u64;
    if args.json {
        let mut out = json!({
            "board": pos.board().to_string(),
            "position": pos.to_string(),
            "depth": depth,
            "nodes": nodes,
            "seconds": seconds,
            "nodes_per_second": nps,
        });
        if args.divide {
            out["divide"] = parts
                .iter()
                .map(|(m, n)| json!({ "move": m.notation(pos.board()), "nodes": n }))
                .collect();
        }
        out!("{out}");
    } else {
        for (m, n) in &parts {
            out!("{}: {n}", m.notation(pos.board()));
        }
        out!("perft {depth} of {pos}: {nodes}");
        eprintln!("{seconds:.3} s, {:.1} M leaves/s", nps as f64 / 1e6);
    }
    Ok(())
}

/// The fixed workload of `fanorona bench`: starts of several boards to fixed depths.
const BENCH: [(&str, u32); 8] = [
    ("5x9", 7),
    ("9x5", 7),
    ("5x5", 8),
    ("7x5", 7),
    ("5x7", 6),
    ("3x9", 9),
    ("9x3", 10),
    ("3x3", 25),
];

/// Runs the workload `repeat` times; reports each board's median time and the total.
pub fn bench(threads: usize, repeat: usize, json: bool) -> CliResult {
    let cases = BENCH
        .iter()
        .map(|&(board, depth)| {
            let pos = Position::initial(board.parse().expect("bench boards are supported"));
            bench::Case {
                label: format!("{board} depth {depth:>2}"),
                fields: json!({"board": board, "depth": depth}),
                run: Box::new(move || perft_parallel(&pos, depth, threads)),
            }
        })
        .collect();
    bench::run(cases, repeat, threads, "leaves", json);
    Ok(())
}
