//! The `fanorona` command line.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::json;

use fanorona::perft::{divide, perft_parallel};
use fanorona::{Board, Move, Position, diagram, legal_moves};

#[derive(Parser)]
#[command(
    name = "fanorona",
    version,
    about = "Fanorona on every board: rules, perft and more"
)]
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
        /// Play these moves first, in the paper's notation (repeat the flag, or separate
        /// moves by spaces): --play d3-e3A --play "e4-e3W ..."
        #[arg(long)]
        play: Vec<String>,
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
        /// Runs per board; the median time is reported.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
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
            play,
            json,
        } => {
            let mut pos = resolve_position(position.as_deref(), board.as_deref())?;
            for (i, text) in play.iter().flat_map(|p| p.split_whitespace()).enumerate() {
                let m = input(
                    Move::parse(&pos, text)
                        .with_context(|| format!("move {} '{text}' in {pos}", i + 1)),
                )?;
                pos = m.apply(&pos);
            }
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
                    "nodes_per_second": nps.round() as u64,
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
        Command::Bench {
            threads,
            repeat,
            json,
        } => bench(threads.max(1), repeat.max(1), json),
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
fn bench(threads: usize, repeat: usize, json: bool) {
    let mut rows = Vec::new();
    let (mut total, mut total_seconds) = (0u64, 0f64);
    for (board, depth) in BENCH {
        let pos = Position::initial(board.parse().expect("bench boards are supported"));
        let mut times = Vec::new();
        let mut nodes = 0;
        for _ in 0..repeat {
            let t = Instant::now();
            nodes = perft_parallel(&pos, depth, threads);
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        if !json {
            println!(
                "{board} depth {depth:>2}: {nodes:>11} leaves {median:>7.3} s {:>7.1} M leaves/s",
                nodes as f64 / median / 1e6
            );
        }
        rows.push(json!({"board": board, "depth": depth, "nodes": nodes, "seconds": median}));
        total += nodes;
        total_seconds += median;
    }
    let nps = total as f64 / total_seconds;
    if json {
        println!(
            "{}",
            json!({"nodes": total, "seconds": total_seconds, "nodes_per_second": nps.round() as u64,
                   "threads": threads, "repeat": repeat, "runs": rows})
        );
    } else {
        println!(
            "signature {total} leaves; {total_seconds:.3} s (sum of medians of {repeat}): {:.1} M leaves/s, {threads} thread(s)",
            nps / 1e6
        );
    }
}
