//! `fanorona bench`: its arguments, which workload they name, and the shared loop of the
//! workloads (each case run `repeat` times, its median time reported, the node total printed
//! as a signature).

use std::path::PathBuf;

pub mod agents;
pub mod certificates;
pub mod harness;
pub mod solvers;
pub mod store;
pub mod tables;

use crate::cli::args::JsonFlag;
use crate::cli::help;
use crate::cli::output::CliResult;
use fanorona::Position;
use fanorona::perft::perft_parallel;
use harness::{Case, run};

/// `fanorona bench [WORKLOAD]`: the perft workload without a subcommand.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub workload: Option<Workload>,
    /// Worker threads of the perft workload.
    #[arg(long, default_value = "1", value_parser = crate::cli::args::threads)]
    pub threads: usize,
    /// Runs per board; the median time is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    #[command(flatten)]
    pub out: JsonFlag,
    #[command(flatten)]
    pub old: OldFlags,
}

/// The workloads other than perft.
#[derive(clap::Subcommand)]
pub enum Workload {
    /// The proof-number solvers: nodes a second on fixed searches.
    ///
    /// Searches the 3x7 and 7x3 starts with PN and PN²; the nodes they create are a signature
    /// of the search, and the speed is printed.
    #[command(after_long_help = help::BENCH_SOLVERS)]
    Solvers {
        /// The 5x9 start over the 5x9 tables in DIR instead, both questions at once.
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        repeat: Repeat,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Certificates: what writing them costs a search, and how fast they are checked.
    ///
    /// Searches 3x7 and 7x3 by PN, which keeps its whole tree, writes each decided question's
    /// certificate and checks it: writing as a share of the search, checking in nodes a
    /// second.
    #[command(after_long_help = help::BENCH_CERTIFICATES)]
    Certificates {
        /// Also 5x7 over the 5x7 tables in DIR.
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        repeat: Repeat,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The players: alpha-beta nodes and MCTS playouts a second on 5x9 positions.
    ///
    /// Alpha-beta 6 plies deep and 20,000 MCTS playouts, from the 5x9 start and the
    /// positions after d3-e3A and f2-e3A.
    #[command(after_long_help = help::BENCH_AGENTS)]
    Agents {
        /// Also perfect play's moves from 5x9 positions over the 5x9 tables in DIR.
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        repeat: Repeat,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The tables' indices: positions ranked a second, paper's and symmetric.
    ///
    /// A fixed sample of positions of the largest 9-piece 5x9 slices, ranked under both
    /// indices.
    #[command(after_long_help = help::BENCH_TABLES)]
    Tables {
        /// Also random probes of the largest slices of the 5x9 tables in DIR, and a 9-piece
        /// build's first pass over them (positions with a capture valued a second, both ways).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        repeat: Repeat,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// The session store: resuming a large tree, its size, what checkpoints cost.
    ///
    /// Writes a synthetic first-level tree to a scratch store and resumes it, reports the
    /// store's size on disk, and compares the solve rate with a checkpoint every second
    /// against none.
    #[command(after_long_help = help::BENCH_STORE)]
    Store {
        /// Instead, resume the sessions' trees of this data directory.
        ///
        /// Each of their first-level trees is timed resuming, and rewritten: give a copy. An older store is upgraded first, and
        /// the upgrade timed.
        #[arg(long, value_name = "DATA_DIR")]
        from: Option<PathBuf>,
        /// Nodes in the first-level tree to resume.
        #[arg(long, default_value_t = 10_000_000, conflicts_with = "from")]
        tree_nodes: usize,
        /// Seconds of each solve-rate run.
        #[arg(long, default_value_t = 5.0, conflicts_with = "from")]
        seconds: f64,
        #[command(flatten)]
        repeat: Repeat,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// How many times each case runs.
#[derive(clap::Args)]
pub struct Repeat {
    /// Runs of each case; the median time is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
}

/// The workloads' flags from before they were subcommands (`bench --solvers` is `bench
/// solvers`): still taken, for the scripts that use them, and hidden from the help.
#[derive(clap::Args)]
pub struct OldFlags {
    #[arg(long, hide = true, conflicts_with = "store")]
    solvers: bool,
    #[arg(long, hide = true, conflicts_with_all = ["store", "solvers"])]
    certificates: bool,
    #[arg(long, hide = true, conflicts_with_all = ["store", "solvers", "certificates"])]
    agents: bool,
    #[arg(long, hide = true, conflicts_with_all = ["store", "solvers", "certificates", "agents"])]
    tables: bool,
    #[arg(long, hide = true)]
    store: bool,
    #[arg(long, hide = true, value_name = "DIR")]
    db: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "DATA_DIR", requires = "store")]
    from: Option<PathBuf>,
    #[arg(long, hide = true, default_value_t = 10_000_000, requires = "store")]
    tree_nodes: usize,
    #[arg(long, hide = true, default_value_t = 5.0, requires = "store")]
    seconds: f64,
}

impl OldFlags {
    /// The workload the old flags name, if any (they exclude each other).
    fn workload(self, repeat: u32, out: JsonFlag) -> Option<Workload> {
        let OldFlags {
            db,
            from,
            tree_nodes,
            seconds,
            ..
        } = self;
        let repeat = Repeat { repeat };
        Some(if self.store {
            Workload::Store {
                from,
                tree_nodes,
                seconds,
                repeat,
                out,
            }
        } else if self.agents {
            Workload::Agents { db, repeat, out }
        } else if self.certificates {
            Workload::Certificates { db, repeat, out }
        } else if self.tables {
            Workload::Tables { db, repeat, out }
        } else if self.solvers {
            Workload::Solvers { db, repeat, out }
        } else {
            return None;
        })
    }
}

/// Runs the workload the arguments name.
pub fn command(args: BenchArgs) -> CliResult {
    let BenchArgs {
        workload,
        threads,
        repeat,
        out,
        old,
    } = args;
    let json = out.json;
    let workload = match workload {
        Some(w) => w,
        None => match old.workload(repeat, out) {
            Some(w) => w,
            None => return perft_bench(threads, repeat as usize, json),
        },
    };
    let times = |r: Repeat| r.repeat as usize;
    match workload {
        Workload::Store {
            from: Some(dir),
            repeat,
            out,
            ..
        } => store::resume_from(&dir, times(repeat), out.json),
        Workload::Store {
            from: None,
            tree_nodes,
            seconds,
            repeat,
            out,
        } => store::bench(
            tree_nodes.max(1),
            times(repeat),
            seconds.clamp(0.1, 3600.0),
            out.json,
        ),
        Workload::Agents { db, repeat, out } => {
            agents::bench(times(repeat), db.as_deref(), out.json)
        }
        Workload::Certificates { db, repeat, out } => {
            certificates::bench(times(repeat), db.as_deref(), out.json)
        }
        Workload::Tables { db, repeat, out } => {
            tables::bench(times(repeat), db.as_deref(), out.json)
        }
        Workload::Solvers { db, repeat, out } => {
            solvers::bench(times(repeat), db.as_deref(), out.json)
        }
    }
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
fn perft_bench(threads: usize, repeat: usize, json: bool) -> CliResult {
    let cases = BENCH
        .iter()
        .map(|&(board, depth)| {
            let pos = Position::initial(board.parse().expect("bench boards are supported"));
            Case {
                label: format!("{board} depth {depth:>2}"),
                fields: PerftCase { board, depth },
                run: Box::new(move || perft_parallel(&pos, depth, threads)),
            }
        })
        .collect();
    run(cases, repeat, threads, "leaves", json)
}

/// A case of the perft workload: a board's start to a depth.
#[derive(serde::Serialize)]
struct PerftCase {
    board: &'static str,
    depth: u32,
}
