//! The command-line interface: arguments, dispatch and output.

pub mod bench;
pub mod bench_certificates;
pub mod bench_store;
pub mod certificate;
pub mod db;
pub mod output;
pub mod rules;
pub mod session;
pub mod session_solve;
pub mod solve;
pub mod solve_report;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use fanorona::config::Config;
use output::{CliResult, input};

#[derive(Parser)]
#[command(
    name = "fanorona",
    version,
    about = "Fanorona on every board: rules, perft and more"
)]
pub struct Cli {
    /// Settings file (default: config.toml in the current directory, if there is one).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Where sessions live: the store, the daemon's lock and socket, the progress logs
    /// (default: data_dir of the config).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// The settings: `--config FILE`, else `./config.toml` if present, else the defaults;
/// `--data-dir` overrides the file.
fn load_config(path: Option<&Path>, data_dir: Option<&Path>) -> Result<Config, output::Failure> {
    let mut c = match path {
        Some(p) => input(Config::load(p))?,
        None if Path::new("config.toml").exists() => input(Config::load(Path::new("config.toml")))?,
        None => Config::defaults(),
    };
    if let Some(d) = data_dir {
        c.data_dir = d.to_path_buf();
    }
    Ok(c)
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
    /// The value of a board's start or of a position (White wins, Black wins or draw), its
    /// best move, and the work done; every proof re-checked independently.
    Solve(solve::SolveArgs),
    /// Check a proof certificate (format 1) with the rules and the tables alone: prints one
    /// summary line, or the first error with its line; exit 0 (it holds), 1 (it is wrong)
    /// or 2 (it cannot be read).
    Verify {
        /// The certificate file (gzip when its name ends in .gz).
        certificate: PathBuf,
        /// The endgame tables its table leaves name (default: db_dir of the config).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Also write every table leaf's position and value (w, d, l for the side to
        /// move), tab-separated, one a line, to this file.
        #[arg(long, value_name = "FILE")]
        leaves: Option<PathBuf>,
        /// One JSON object instead of the summary line.
        #[arg(long)]
        json: bool,
    },
    /// Run the solve-session daemon in the foreground (until SIGINT or SIGTERM).
    Daemon,
    /// Solve sessions: start, list, status, pause, resume, stop, tail, curve.
    Session {
        #[command(subcommand)]
        command: session::SessionCommand,
    },
    /// The rote-learning store of solved positions.
    Rote {
        #[command(subcommand)]
        command: session::RoteCommand,
    },
    /// Endgame databases: build, count, probe and verify the retrograde tables.
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// A fixed perft workload: its total count is a signature of the rules; prints the speed.
    /// With --solvers: a fixed proof-search workload instead (nodes and nodes per second).
    Bench {
        /// Benchmark the proof-number solvers instead of move generation.
        #[arg(long, conflicts_with = "store")]
        solvers: bool,
        /// Benchmark certificates: writing them (as a share of the search) and checking
        /// them (nodes a second); with --db DIR also 5x7 over its tables.
        #[arg(long, conflicts_with_all = ["store", "solvers"])]
        certificates: bool,
        /// Benchmark the session store: resuming a large first-level tree, its size on
        /// disk, and the solve rate with checkpoints every second against none.
        #[arg(long)]
        store: bool,
        /// With --solvers: the 5x9 start over the tables in DIR instead, both goals at once.
        /// With --certificates: also 5x7 over the tables in DIR.
        #[arg(long)]
        db: Option<PathBuf>,
        /// With --store: nodes in the first-level tree to resume.
        #[arg(long, default_value_t = 10_000_000, requires = "store")]
        tree_nodes: usize,
        /// With --store: seconds of each solve-rate run.
        #[arg(long, default_value_t = 5.0, requires = "store")]
        seconds: f64,
        #[arg(long, default_value = "1", value_parser = threads)]
        threads: usize,
        /// Runs per board; the median time is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum DbCommand {
    /// Build every slice of a board with 2 to N pieces that is not built yet.
    Build {
        /// The board (RxC); a board and its transpose share tables.
        #[arg(long)]
        board: String,
        /// Build slices up to this many pieces.
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=45))]
        pieces: u32,
        /// Database directory (default: db_dir of the config).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[arg(long, value_parser = threads)]
        threads: Option<usize>,
        /// Also keep each position's distance to a capture or the end (1 byte a position).
        #[arg(long)]
        distances: bool,
    },
    /// Win, draw and loss counts per slice in the paper's Table 3 convention.
    Stats(BoardTables),
    /// The value of a position, and a move that keeps it. With --batch: positions on stdin,
    /// one a line, and one value a line on stdout (w, d, l, or - where the tables do not
    /// answer, with the reason on stderr).
    Probe {
        /// A position such as '........./..B....../....W..../......B../......... w'.
        #[arg(required_unless_present = "batch", conflicts_with = "batch")]
        position: Option<String>,
        /// Database directory (default: db_dir of the config).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Read positions from stdin and print one value a line (for outside checkers).
        #[arg(long, conflicts_with = "json")]
        batch: bool,
        #[arg(long)]
        json: bool,
    },
    /// Check every table: headers, checksums, and each entry against its successors.
    Verify(BoardTables),
}

/// The tables of one board: which board, where, how many threads, and the output form.
#[derive(clap::Args)]
pub struct BoardTables {
    #[arg(long)]
    board: String,
    /// Database directory (default: db_dir of the config).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[arg(long, value_parser = threads)]
    threads: Option<usize>,
    #[arg(long)]
    json: bool,
}

fn run_db(command: DbCommand, config: &Config) -> CliResult {
    let dir = |d: Option<PathBuf>| d.unwrap_or_else(|| config.db_dir.clone());
    let threads = |t: Option<usize>| t.unwrap_or(config.threads);
    match command {
        DbCommand::Build {
            board,
            pieces,
            dir: d,
            threads: t,
            distances,
        } => db::build_cmd(&dir(d), &board, pieces as usize, threads(t), distances),
        DbCommand::Stats(a) => db::stats(&dir(a.dir), &a.board, threads(a.threads), a.json),
        DbCommand::Probe {
            position,
            dir: d,
            batch,
            json,
        } => match position {
            Some(p) if !batch => db::probe(&dir(d), &p, json),
            _ => db::probe_batch(&dir(d)),
        },
        DbCommand::Verify(a) => db::verify(&dir(a.dir), &a.board, threads(a.threads), a.json),
    }
}

pub fn run(cli: Cli) -> CliResult {
    let config = || load_config(cli.config.as_deref(), cli.data_dir.as_deref());
    match cli.command {
        Command::Db { command } => run_db(command, &config()?),
        Command::Solve(args) => solve::solve(args, &config()?),
        Command::Verify {
            certificate,
            db,
            leaves,
            json,
        } => certificate::verify_cmd(&certificate, db, leaves.as_deref(), json, &config()?),
        Command::Daemon => session::daemon(config()?),
        Command::Session { command } => session::session(command, &config()?),
        Command::Rote { command } => session::rote(command, &config()?),
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
            store: true,
            tree_nodes,
            seconds,
            repeat,
            json,
            ..
        } => bench_store::bench(
            tree_nodes.max(1),
            repeat as usize,
            seconds.clamp(0.1, 3600.0),
            json,
        ),
        Command::Bench {
            certificates: true,
            repeat,
            db,
            json,
            ..
        } => bench_certificates::bench(repeat as usize, db.as_deref(), json),
        Command::Bench {
            solvers: true,
            repeat,
            db,
            json,
            ..
        } => solve::bench(repeat as usize, db.as_deref(), json),
        Command::Bench {
            threads,
            repeat,
            json,
            ..
        } => rules::bench(threads, repeat as usize, json),
    }
}
