//! The arguments of `fanorona solve`, which both ways of solving read: in memory
//! (`solve/mod.rs`) and as a session (`solve/session.rs`).

use std::path::PathBuf;

use crate::cli::args::algorithm_parser;
use fanorona::search::{Algorithm, Init};
use fanorona::session::SecondLevel;

/// How a repetition of the path is scored.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum RepetitionRule {
    /// A draw, as the rules say.
    Draw,
    /// A win for the attacker (df-pn only; a stress test of disproofs).
    Attacker,
}

#[derive(clap::Args)]
pub struct SolveArgs {
    /// A board (RxC, its initial position) or a position; 7x3 by default.
    pub target: Option<String>,
    /// The start of this board (RxC), instead of a position.
    ///
    /// The form show, moves and match take; the same as giving the board as the target.
    #[arg(long, value_name = "RxC", conflicts_with = "target")]
    pub board: Option<String>,
    /// Endgame tables for the leaves (default: db_dir of the config, if it has this board).
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// The search algorithm.
    ///
    /// pn (Allis), pn2 (PN², as the paper), pn2-dfpn (PN² with df-pn at the second level)
    /// or dfpn (df-pn with a transposition table).
    #[arg(long, value_parser = algorithm_parser(&Algorithm::ALL), default_value = "pn2")]
    pub algo: Algorithm,
    /// Also solve the position after every legal move.
    #[arg(long)]
    pub moves: bool,
    /// Write the root's proof and disproof numbers after every iteration to this CSV.
    #[arg(long, value_name = "FILE")]
    pub curve: Option<PathBuf>,
    /// Stop after creating this many nodes (per goal).
    ///
    /// Runs without the session store.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Stop when the search's tree or table takes this much memory ("2GiB", "512MiB").
    ///
    /// Runs without the session store.
    #[arg(long, value_parser = memory_size)]
    pub memory: Option<u64>,
    /// Entries of the second-level df-pn table (from the config's `second_level_table`).
    #[arg(skip)]
    pub second_level_table: usize,
    /// Solve in memory only: no session in the store, no rote learning, nothing kept.
    #[arg(long)]
    pub no_store: bool,
    /// Also print where the nodes went, by the pieces on the board. Runs in memory.
    ///
    /// The positions created, by the number of pieces on the board of the position
    /// expanded: the count at one above the tables' largest is what tables of one more piece
    /// would spare.
    #[arg(long)]
    pub census: bool,
    /// Ask one question only: "does this side win?".
    ///
    /// Without it, the side to move is asked first and the other side if needed.
    #[arg(long, value_parser = ["white", "black"])]
    pub goal: Option<String>,
    /// How df-pn scores a repetition.
    ///
    /// As the rules say, a draw ("draw"), or as a win for the side whose win is asked
    /// ("attacker": not the rules, a stress test; a disproof that holds this way does not
    /// rely on repetitions).
    #[arg(long, value_enum, default_value = "draw")]
    pub repetition: RepetitionRule,
    /// Write a certificate for each decided goal, and verify it.
    ///
    /// PREFIX.white-wins.cert.gz and PREFIX.black-wins.cert.gz; `fanorona verify` reads
    /// them back.
    #[arg(long, value_name = "PREFIX")]
    pub certificate: Option<PathBuf>,
    /// PN²'s second-level bound (default: second_level of the config).
    ///
    /// "tree-size" (the paper's: the first-level tree's size), a node count, "tree/D" (the
    /// tree's size over D) or "max(N,tree/D)" (that, at least N).
    #[arg(long, value_name = "tree-size|N|tree/D|max(N,tree/D)")]
    pub second_level: Option<SecondLevel>,
    /// How a new leaf's first numbers are set (default: init of the config).
    ///
    /// "mobility" (Allis), "material" (mobility weighted by the material lead, after
    /// EF-PN) or "learned" (material's numbers weighted by the value model trained on
    /// the tables; 5x9 and 9x5).
    #[arg(long, value_name = "mobility|material|learned")]
    pub init: Option<Init>,
    /// The value model's weights for --init learned, instead of the built-in 5x9 ones (a
    /// file `fanorona learn` wrote, for this board or its transpose; default: weights of
    /// the config). A session keeps a copy; its jobs stay here (workers have only the
    /// built-in weights).
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Threads of a solve run as a session (default: threads of the config).
    ///
    /// 2 searches both questions at once. A run in memory asks one question at a time.
    #[arg(long, value_parser = crate::cli::args::threads)]
    pub threads: Option<usize>,
    /// Print one JSON object (an error too).
    ///
    /// An error is then {"error": ..., "exit_code": ...} on stdout.
    #[arg(long)]
    pub json: bool,
}

fn memory_size(s: &str) -> Result<u64, String> {
    match fanorona::config::parse_bytes(s) {
        None => Err(format!("'{s}' is not a size such as 512MiB or 2GiB")),
        Some(b) if b < fanorona::config::MIN_SIZE => {
            Err(format!("'{s}' is below the smallest limit, 1MiB"))
        }
        Some(b) => Ok(b),
    }
}
