//! The rules commands: `show`, `moves`, `perft`, `bench`.

use std::time::Instant;

use crate::cli::args::Target;
use crate::cli::args::resolve_target;
use crate::cli::output::{CliResult, print_json};
use crate::out;
use fanorona::movegen::is_lost;
use fanorona::moves::{MoveList, ShownPosition};
use fanorona::perft::{MoveCount, PerftCount, divide, perft_parallel};
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
        return print_json(&ShownPosition {
            board: pos.board(),
            position: pos,
            side_to_move: pos.side_to_move(),
            moves,
            lost,
        });
    }
    out!("{}", diagram::draw(&pos).trim_end());
    out!("{pos}");
    if lost {
        out!("No legal move: {} has lost.", pos.side_to_move());
    } else {
        out!("{} legal moves: {}", moves.len(), moves.join(" "));
    }
    Ok(())
}

pub fn moves(target: &Target, json: bool) -> CliResult {
    let pos = resolve_target(target)?;
    let moves = notations(&pos);
    if json {
        return print_json(&MoveList {
            board: pos.board(),
            position: pos,
            moves,
        });
    }
    for m in moves {
        out!("{m}");
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
        let divide = args.divide.then(|| {
            parts
                .iter()
                .map(|(m, nodes)| MoveCount {
                    mv: m.notation(pos.board()),
                    nodes: *nodes,
                })
                .collect()
        });
        return print_json(&PerftCount {
            board: pos.board(),
            position: pos,
            depth,
            nodes,
            seconds,
            nodes_per_second: nps,
            divide,
        });
    }
    for (m, n) in &parts {
        out!("{}: {n}", m.notation(pos.board()));
    }
    out!("perft {depth} of {pos}: {nodes}");
    eprintln!("{seconds:.3} s, {:.1} M leaves/s", nps as f64 / 1e6);
    Ok(())
}
