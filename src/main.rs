//! The `fanorona` command line.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::json;

use fanorona::perft::{divide, perft_parallel};
use fanorona::{Board, Position, diagram, legal_moves};

#[derive(Parser)]
#[command(name = "fanorona", version, about = "Fanorona on every board: rules, perft and more")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Draw a position (the board's start by default) with its legal moves.
    Show {
        /// A position such as 'BBB/B.W/WWW w' (rows from the top, then w or b).
        position: Option<String>,
        /// Show the initial position of this board (RxC), such as 5x9.
        #[arg(long, conflicts_with = "position")]
        board: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List the legal moves of a position, one per line, in the paper's notation.
    Moves {
        position: String,
        #[arg(long)]
        json: bool,
    },
    /// Count the move sequences of exactly N moves.
    Perft {
        /// A position; the initial position of --board (5x9 by default) when absent.
        position: Option<String>,
        #[arg(long, conflicts_with = "position")]
        board: Option<String>,
        #[arg(long)]
        depth: u32,
        /// Print the count below each first move.
        #[arg(long)]
        divide: bool,
        /// Worker threads (the first-ply moves are shared among them).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long)]
        json: bool,
    },
    /// A fixed perft workload: its total count is a signature of the rules; prints the speed.
    Bench {
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long)]
        json: bool,
    },
}

/// Bad input (exit status 2) or a failure of the machine (exit status 1).
enum Failure {
    Input(anyhow::Error),
    Other(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Other(e.into())
    }
}

fn input<T, E: Into<anyhow::Error>>(r: Result<T, E>) -> Result<T, Failure> {
    r.map_err(|e| Failure::Input(e.into()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
        Err(Failure::Other(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The position named by a positional text or `--board`, else the 5x9 start.
fn resolve_position(position: Option<&str>, board: Option<&str>) -> Result<Position, Failure> {
    match (position, board) {
        (Some(p), _) => input(p.parse::<Position>().context("bad position")),
        (None, Some(b)) => Ok(Position::initial(input(b.parse::<Board>())?)),
        (None, None) => Ok(Position::initial(Board::STANDARD)),
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Show {
            position,
            board,
            json,
        } => {
            let pos = resolve_position(position.as_deref(), board.as_deref())?;
            let moves: Vec<String> = legal_moves(&pos)
                .iter()
                .map(|m| m.notation(pos.board()))
                .collect();
            if json {
                println!(
                    "{}",
                    json!({
                        "board": pos.board().to_string(),
                        "position": pos.to_string(),
                        "side_to_move": pos.side_to_move().name(),
                        "moves": moves,
                    })
                );
            } else {
                print!("{}", diagram::draw(&pos));
                println!("{pos}");
                if moves.is_empty() {
                    println!("No legal move: {} has lost.", pos.side_to_move());
                } else {
                    println!("{} legal moves: {}", moves.len(), moves.join(" "));
                }
            }
        }
        Command::Moves { position, json } => {
            let pos = resolve_position(Some(&position), None)?;
            let moves: Vec<String> = legal_moves(&pos)
                .iter()
                .map(|m| m.notation(pos.board()))
                .collect();
            if json {
                println!("{}", json!({ "position": pos.to_string(), "moves": moves }));
            } else {
                for m in moves {
                    println!("{m}");
                }
            }
        }
        Command::Perft {
            position,
            board,
            depth,
            divide: split,
            threads,
            json,
        } => {
            let pos = resolve_position(position.as_deref(), board.as_deref())?;
            let threads = threads.max(1);
            let start = Instant::now();
            let (nodes, parts) = if split && depth >= 1 {
                let parts = divide(&pos, depth);
                (parts.iter().map(|(_, n)| n).sum(), parts)
            } else {
                (perft_parallel(&pos, depth, threads), Vec::new())
            };
            let seconds = start.elapsed().as_secs_f64();
            let nps = nodes as f64 / seconds.max(1e-9);
            if json {
                let divide: Vec<_> = parts
                    .iter()
                    .map(|(m, n)| json!({ "move": m.notation(pos.board()), "nodes": n }))
                    .collect();
                let mut out = json!({
                    "board": pos.board().to_string(),
                    "position": pos.to_string(),
                    "depth": depth,
                    "nodes": nodes,
                    "seconds": seconds,
                    "nodes_per_second": nps.round(),
                });
                if split {
                    out["divide"] = json!(divide);
                }
                println!("{out}");
            } else {
                for (m, n) in &parts {
                    println!("{}: {n}", m.notation(pos.board()));
                }
                println!("perft {depth} of {pos}: {nodes}");
                eprintln!("{seconds:.3} s, {:.1} M leaves/s", nps / 1e6);
            }
        }
        Command::Bench { threads, json } => bench(threads.max(1), json),
    }
    Ok(())
}

/// The fixed workload of `fanorona bench`: starts of several boards to fixed depths.
const BENCH: [(&str, u32); 5] = [("5x9", 6), ("9x5", 6), ("5x5", 7), ("7x5", 6), ("3x9", 8)];

fn bench(threads: usize, json: bool) {
    let mut total = 0u64;
    let mut rows = Vec::new();
    let start = Instant::now();
    for (board, depth) in BENCH {
        let pos = Position::initial(board.parse().expect("bench boards are supported"));
        let t = Instant::now();
        let n = perft_parallel(&pos, depth, threads);
        let s = t.elapsed().as_secs_f64();
        if !json {
            println!(
                "{board} depth {depth}: {n:>12} leaves {s:>7.3} s {:>7.1} M leaves/s",
                n as f64 / s / 1e6
            );
        }
        rows.push(json!({"board": board, "depth": depth, "nodes": n, "seconds": s}));
        total += n;
    }
    let seconds = start.elapsed().as_secs_f64();
    let nps = total as f64 / seconds;
    if json {
        println!(
            "{}",
            json!({"nodes": total, "seconds": seconds, "nodes_per_second": nps.round(),
                   "threads": threads, "runs": rows})
        );
    } else {
        println!("total {total} leaves in {seconds:.3} s: {:.1} M leaves/s ({threads} thread(s))", nps / 1e6);
    }
}
