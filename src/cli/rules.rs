//! The rules commands: `show`, `moves`, `perft`, `bench`.

use std::time::Instant;

use serde_json::json;

use crate::cli::args::Target;
use crate::cli::args::resolve_target;
use crate::cli::output::CliResult;
use crate::out;
use fanorona::movegen::is_lost;
use fanorona::perft::{divide, perft_parallel};
use fanorona::{Position, diagram, legal_moves};

fn notations(pos: &Position) -> Vec<String> {
    legal_moves(pos)
        .iter()
        .map(|m| m.notation(pos.board()))
        .collect()
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
