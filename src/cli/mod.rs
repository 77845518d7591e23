//! The command-line interface: arguments, dispatch and output.

pub mod output;
pub mod rules;

use clap::{Parser, Subcommand};

use output::CliResult;

#[derive(Parser)]
#[command(
    name = "fanorona",
    version,
    about = "Fanorona on every board: rules, perft and more"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Worker threads: at least 1, at most 256.
fn threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=256).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a thread count from 1 to 256")),
    }
}

#[derive(Subcommand)]
pub enum Command {
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
        /// Print the count below each first move (on one thread).
        #[arg(long)]
        divide: bool,
        /// Worker threads (subtrees are shared among them).
        #[arg(long, default_value = "1", value_parser = threads)]
        threads: usize,
        #[arg(long)]
        json: bool,
    },
    /// A fixed perft workload: its total count is a signature of the rules; prints the speed.
    Bench {
        #[arg(long, default_value = "1", value_parser = threads)]
        threads: usize,
        /// Runs per board; the median time is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: Command) -> CliResult {
    match command {
        Command::Show {
            position,
            board,
            play,
            json,
        } => rules::show(position.as_deref(), board.as_deref(), &play, json),
        Command::Moves { position, json } => rules::moves(&position, json),
        Command::Perft {
            position,
            board,
            depth,
            divide,
            threads,
            json,
        } => rules::perft(rules::PerftArgs {
            position: position.as_deref(),
            board: board.as_deref(),
            depth,
            divide,
            threads,
            json,
        }),
        Command::Bench {
            threads,
            repeat,
            json,
        } => rules::bench(threads, repeat as usize, json),
    }
}
