//! The command-line interface: arguments, dispatch and output.

pub mod args;
pub mod bench;
pub mod certificate;
pub mod cluster;
pub mod db;
pub mod game_batch;
pub mod help;
pub mod learn;
pub mod manual;
pub mod output;
pub mod play;
pub mod rules;
pub mod session;
pub mod solve;
pub mod stats;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use args::{JsonFlag, Target, material, threads};
use fanorona::config::Config;
use output::{CliResult, Failure, input};

/// `--version`: the version, the commit, and the format of each kind of file it writes.
fn version_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (commit {}); session store format {}, table file format {}, certificate format {}",
            fanorona::version::VERSION,
            fanorona::version::commit(),
            fanorona::session::format::FORMAT,
            fanorona::egdb::file::FORMAT_VERSION,
            fanorona::certificate::format::VERSION,
        )
    })
}

/// Fanorona on every board: rules, endgame tables, proofs, solve sessions and players.
///
/// The rules on every board of the paper, 3x3 to 5x9 (positions, moves, perft), endgame
/// tables by retrograde analysis, proof-number solvers whose every answer comes with a
/// certificate an independent checker reads, solve sessions that survive restarts (run by a
/// daemon), players from random to perfect, and a web app. `fanorona COMMAND --help` tells
/// each command's options; the guide (docs/guide/) shows them at work.
#[derive(Parser)]
#[command(name = "fanorona", version = version_text(), after_long_help = help::FANORONA)]
pub struct Cli {
    /// Settings file (default: $FANORONA_CONFIG or ./config.toml).
    ///
    /// Without the flag: $FANORONA_CONFIG, else config.toml in the current directory if there
    /// is one, else the defaults. Read by every command but show, moves, perft, bench,
    /// completions and man, which refuse it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory (default: $FANORONA_DATA_DIR or the config's).
    ///
    /// Without the flag: $FANORONA_DATA_DIR, else data_dir of the config. Where sessions live: the store, the daemon's lock and socket, the progress logs, the
    /// sessions' certificates. Read by solve, daemon, session, rote, store, serve, play and
    /// match; the other commands refuse it.
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Names the settings file for every command of a shell or a service unit at once.
pub const CONFIG_VAR: &str = "FANORONA_CONFIG";
/// Names the data directory for every command at once.
pub const DATA_DIR_VAR: &str = "FANORONA_DATA_DIR";

/// An environment variable's path; unset and empty are the same (`FANORONA_CONFIG= cmd`
/// turns it off).
fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The settings: `--config FILE`, else `$FANORONA_CONFIG`, else `./config.toml` if present,
/// else the defaults; `--data-dir`, else `$FANORONA_DATA_DIR`, overrides the file's data_dir.
/// A flag wins over its variable.
fn load_config(path: Option<&Path>, data_dir: Option<&Path>) -> Result<Config, output::Failure> {
    let mut c = match (path, env_path(CONFIG_VAR)) {
        (Some(p), _) => input(Config::load(p))?,
        // Named: the error says where the path came from, which a user may have forgotten.
        (None, Some(p)) => {
            Config::load(&p).map_err(|e| Failure::input(anyhow::anyhow!("{CONFIG_VAR}: {e}")))?
        }
        (None, None) if Path::new("config.toml").exists() => {
            input(Config::load(Path::new("config.toml")))?
        }
        (None, None) => Config::defaults(),
    };
    if let Some(d) = data_dir
        .map(Path::to_path_buf)
        .or_else(|| env_path(DATA_DIR_VAR))
    {
        c.data_dir = d;
    }
    Ok(c)
}

#[derive(Subcommand)]
pub enum Command {
    /// Draw a position (the 5x9 start by default) with its legal moves.
    ///
    /// The board with its lines (the diagonals join the strong points), the side to move,
    /// the position's text and its legal moves in the paper's notation. --play plays moves
    /// first; an illegal one is refused with the reason.
    #[command(after_long_help = help::SHOW)]
    Show {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List the legal moves of a position, one per line, in the paper's notation.
    ///
    /// A capture chain is one move: b2-c2A-c3A is the piece on b2 approaching to c2, then
    /// to c3; W marks a withdrawal; a paika move is b2-b1.
    #[command(after_long_help = help::MOVES)]
    Moves {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Count the move sequences of exactly N moves.
    ///
    /// Every distinct notated move counts (two moves that reach the same position count
    /// twice), and a capture chain is one move. The time and speed go to stderr. The counts
    /// are the rules' signature: they change only when the rules' behaviour does.
    #[command(after_long_help = help::PERFT)]
    Perft {
        #[command(flatten)]
        target: Target,
        /// How many moves deep to count (a capture chain is one move).
        ///
        /// At most 1000: every line is walked one move at a time, so a count that deep could
        /// never finish unless the lines end first.
        #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1000))]
        depth: u32,
        /// Print the count below each first move (on one thread).
        #[arg(long)]
        divide: bool,
        /// Worker threads (subtrees are shared among them).
        #[arg(long, default_value = "1", value_parser = threads)]
        threads: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Solve a board's start or a position: its value, a best move and the work done.
    ///
    /// The value is White wins, Black wins or draw (7x3's start by default). A draw is two
    /// answers (White cannot force a win; Black cannot), so up to two searches run, the side
    /// to move's first. Every proof and disproof is re-checked by an independent checker.
    ///
    /// With pn, pn2 or pn2-dfpn, and none of --nodes, --memory, --goal, --moves, --census nor
    /// --no-store, it runs as a solve session in the data directory's store, as the daemon
    /// would: Ctrl-C stops it after a checkpoint, the same command resumes it, and a session
    /// that solved it before answers at once. Otherwise it solves in memory.
    #[command(after_long_help = help::SOLVE)]
    Solve(solve::SolveArgs),
    /// Play a game in the terminal: a person against a player, or two players.
    ///
    /// A person types a move in the paper's notation or its number in the list, or hint
    /// (every move's value where it is known), undo, resign, save FILE or quit. --save
    /// writes the game's record after every move, and --load goes on with one.
    #[command(after_long_help = help::PLAY)]
    Play(play::PlayArgs),
    /// Play games between two players, both colours, and report the score and Elo difference.
    ///
    /// Games run on several threads; the score comes with its 95% confidence interval. A
    /// Ctrl-C ends the match with the games finished (and their --csv rows).
    #[command(after_long_help = help::MATCH)]
    Match(play::MatchArgs),
    /// The game measured as the paper's Section 3: its Table 1 and Figures 4 and 5.
    ///
    /// Alpha-beta games, their length and branching factor, with virtual databases (Table
    /// 1), and captures and branching by pieces on the board (Figures 4 and 5), written as
    /// CSV and PNG.
    #[command(after_long_help = help::STATS)]
    Stats(stats::StatsArgs),
    /// Train the value model that sets first numbers (`--init learned`) on the tables.
    ///
    /// Positions of 2 to --pieces pieces drawn uniformly for each material and valued by the
    /// tables, one in ten held out; prints the model's accuracy by piece count beside the
    /// material baseline's (the value most common for the same material), and writes the
    /// weights (a few kilobytes).
    #[command(after_long_help = help::LEARN)]
    Learn(learn::LearnArgs),
    /// Check a proof certificate with the rules and the tables alone.
    ///
    /// Prints one summary line, or the first error with its line. Exit status 0: it holds;
    /// 1: it is wrong; 2: it cannot be read; 4: a partial certificate with open leaves, the
    /// rest holding. The format is docs/CERTIFICATE.md's (format 1).
    #[command(after_long_help = help::VERIFY)]
    Verify {
        /// The certificate file (gzip when its name ends in .gz).
        certificate: PathBuf,
        /// The endgame tables its table leaves name (default: db_dir of the config).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// Also write every table leaf's position and value to this file.
        ///
        /// One a line: the position, a tab, and w, d or l for the side to move.
        #[arg(long, value_name = "FILE")]
        leaves: Option<PathBuf>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Close a partial certificate's open leaves with certificates of their own.
    ///
    /// Each is rooted at its leaf's position: DIR/node-K.GOAL-wins.cert.gz for open leaf K,
    /// as `solve POSITION --goal GOAL --certificate DIR/node-K` writes them. The result is
    /// checked; it is whole, with no open leaf, if every one was given.
    #[command(after_long_help = help::STITCH)]
    Stitch {
        /// The partial certificate (PREFIX.GOAL-wins.partial.cert.gz).
        partial: PathBuf,
        /// Its open leaves' list (default: PREFIX.GOAL-wins.open.jsonl beside it).
        #[arg(long, value_name = "FILE")]
        open: Option<PathBuf>,
        /// Where the leaves' certificates are.
        #[arg(long, value_name = "DIR")]
        leaves: PathBuf,
        /// The certificate to write (gzip when its name ends in .gz).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Tables for the check and the solving (default: db_dir of the config).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// First solve the leaves without a certificate in DIR, and write theirs.
        ///
        /// Each on its own, one a thread: PN² with df-pn at the second level, from the leaf
        /// alone (the check of the result follows each leaf with its past).
        #[arg(long)]
        solve: bool,
        /// --solve: at most this many search nodes a leaf.
        #[arg(long, value_name = "N", default_value_t = 1_000_000_000)]
        nodes: u64,
        /// --solve: leaves solved at once (default: threads of the config).
        #[arg(long)]
        threads: Option<usize>,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Write the certificate of a position inside another, and check it.
    ///
    /// The subtree after MOVES from the certificate's root, with the shared subtrees it names
    /// from outside copied in. (The 5x9 start's "White wins?" disproof, cut at a first move,
    /// is that move's.)
    #[command(after_long_help = help::CUT)]
    Cut {
        /// The certificate to cut (gzip when its name ends in .gz).
        certificate: PathBuf,
        /// The moves from its root to the new root, in the paper's notation.
        ///
        /// Separated by spaces, or the flag repeated.
        #[arg(long, value_name = "MOVES", required = true)]
        play: Vec<String>,
        /// The certificate to write (gzip when its name ends in .gz).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The endgame tables for the check (default: db_dir of the config).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Run the solve-session daemon in the foreground, until SIGINT or SIGTERM.
    ///
    /// It solves the data directory's sessions, and answers the session commands over its
    /// socket. It logs to DATA_DIR/daemon.log (rotated at 16 MiB, five kept) and stderr, or
    /// to the journal alone under systemd; with $NOTIFY_SOCKET set it tells systemd when it
    /// is ready and stopping (contrib/systemd/ has a unit).
    #[command(after_long_help = help::DAEMON)]
    Daemon {
        /// Log to stderr only, not to DATA_DIR/daemon.log.
        #[arg(long)]
        no_log_file: bool,
    },
    /// Take second-level searches as jobs from a NATS JetStream server and run them.
    ///
    /// One job a thread: a bounded df-pn search over this worker's tables (the same as the
    /// master's), its table kept warm from job to job; "in progress" said while it runs, the
    /// answer published, then the job acknowledged. SIGTERM finishes the jobs under way and
    /// exits. A job this worker cannot take (other tables) goes back for another, said once;
    /// jobs of a master of another wire version are never seen (they wait on that wire's
    /// stream), and a worker that finds only jobs of an earlier wire says so.
    #[command(after_long_help = help::WORKER)]
    Worker(cluster::WorkerArgs),
    /// Runs whose second-level searches are jobs for workers (see `fanorona worker`).
    #[command(after_long_help = help::CLUSTER)]
    Cluster {
        #[command(subcommand)]
        command: cluster::ClusterCommand,
    },
    /// Serve the web app: play, analyse, and watch and steer solve sessions.
    ///
    /// Games and analysis on every board; the sessions through the data directory's daemon.
    /// Prints the link to open, which carries the token every API request needs.
    #[command(after_long_help = help::SERVE)]
    Serve {
        /// Address to listen on.
        ///
        /// A host name such as localhost is resolved. Beyond localhost, whoever has the token can use it: mind who can reach the
        /// address.
        #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT", value_parser = socket_address)]
        bind: std::net::SocketAddr,
        /// The file of the API's token (default: web.token in the data directory).
        ///
        /// Every API request must carry the token. The file is made, owner-only with a
        /// random token, when it is not there.
        #[arg(long, value_name = "PATH")]
        token_file: Option<PathBuf>,
        /// The endgame tables (default: db_dir of the config).
        ///
        /// Boards without tables there are played and analysed without them.
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// Certificates the analysis reads (default: DATA_DIR/certificates).
        ///
        /// Each is checked first. Solved sessions write theirs to the default.
        #[arg(long, value_name = "DIR")]
        certificates: Option<PathBuf>,
    },
    /// Solve sessions: long solves kept in the store, run by the daemon.
    ///
    /// A session's search is checkpointed to disk, so it survives Ctrl-C, kill -9 and
    /// reboots. With a daemon running these commands ask it; without one they open the store
    /// themselves (start records a session for the next daemon).
    #[command(after_long_help = help::SESSION)]
    Session {
        #[command(subcommand)]
        command: session::SessionCommand,
    },
    /// The rote-learning store of solved positions.
    ///
    /// Sessions record the positions they prove or disprove; later searches meeting one
    /// (another algorithm, another opening) take its answer from there.
    #[command(after_long_help = help::ROTE)]
    Rote {
        #[command(subcommand)]
        command: session::RoteCommand,
    },
    /// The session store on disk: compact it (give back the space of rewritten records).
    #[command(after_long_help = help::STORE)]
    Store {
        #[command(subcommand)]
        command: session::StoreCommand,
    },
    /// Endgame databases: build, count, probe and verify the retrograde tables.
    ///
    /// A board's tables hold the value of every position with up to N pieces, one file per
    /// slice (the pieces of each side). A board and its transpose share them.
    #[command(after_long_help = help::DB)]
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// Fixed workloads and their speed: perft, and with a subcommand the others.
    ///
    /// Without a subcommand: perft from the start of eight boards to fixed depths, each run
    /// --repeat times. The total count is a signature that changes only when the rules'
    /// behaviour does (296000662); the speed is the sum of the median times.
    #[command(after_long_help = help::BENCH)]
    Bench(bench::BenchArgs),
    /// Print the shell completion script for fanorona (bash, zsh, fish, elvish, powershell).
    ///
    /// It completes every command, subcommand and option, and the values of the options
    /// that have a fixed few. Write it where the shell looks for completions, or source it.
    #[command(after_long_help = help::COMPLETIONS)]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages: one for fanorona and one for each command and subcommand.
    ///
    /// Each is named by the words that run it: fanorona.1, fanorona-solve.1,
    /// fanorona-session.1, fanorona-session-start.1. Read one with `man -l FILE`; written to a
    /// man1 directory of the manual's path (such as ~/.local/share/man/man1), they are
    /// `man fanorona-session-start`.
    #[command(after_long_help = help::MAN)]
    Man {
        /// The directory to write them to (made if it is not there).
        dir: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// The tables' directory: `--db` everywhere (`--dir` still taken on the `db` commands).
#[derive(clap::Args)]
pub struct TablesDir {
    /// Database directory (default: db_dir of the config).
    #[arg(long, visible_alias = "dir", value_name = "DIR")]
    pub db: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum DbCommand {
    /// Build every slice of a board with 2 to N pieces that is not built yet.
    ///
    /// By retrograde analysis. A slice a-b holds every position where the side to move has a
    /// pieces and its opponent b: win, draw or loss for the side to move. Finished slices are
    /// never rebuilt, so a killed build resumes at the slice it was on; a file appears under
    /// its final name only once it is whole.
    #[command(after_long_help = help::DB_BUILD)]
    #[command(group(clap::ArgGroup::new("what").required(true).args(["pieces", "pair"])))]
    Build {
        /// The board (RxC); a board and its transpose share tables.
        #[arg(long)]
        board: String,
        /// Build slices up to this many pieces.
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=45))]
        pieces: Option<u32>,
        /// Build one pair (A-B: it and B-A) and the smaller pairs it reads, not the rest.
        ///
        /// Its captures lead to smaller slices, and theirs to smaller still; those are built
        /// first, where missing. Other pairs of each piece count are left alone, so a large
        /// pair can be built and timed on a machine that holds no other.
        #[arg(long, value_parser = material)]
        pair: Option<fanorona::egdb::Material>,
        #[command(flatten)]
        dir: TablesDir,
        /// Worker threads (default: threads of the config).
        #[arg(long, value_parser = threads)]
        threads: Option<usize>,
        /// Also keep each position's distance to a capture or the end.
        ///
        /// One byte a position; paper index only.
        #[arg(long)]
        distances: bool,
        /// The index of the new slices: symmetric (the default) or paper.
        ///
        /// `symmetric`: one entry per class under the board's mirrors, a quarter of the
        /// memory and disk of `paper`, resumable inside a pair. `paper`: every position
        /// (Eq. 4.1); the default with --distances, which only it keeps. Slices already
        /// built, in either index, are kept and read.
        #[arg(long)]
        index: Option<fanorona::egdb::scheme::Scheme>,
        /// With --index symmetric: how often to save how far the first pass is (30s, 5m).
        ///
        /// A kill loses at most this much of it, or the round under way. Default: every
        /// minute.
        #[arg(long, value_parser = humantime::parse_duration)]
        checkpoint_every: Option<std::time::Duration>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Win, draw and loss counts per slice in the paper's Table 3 convention.
    ///
    /// Each class of positions under the board's mirror symmetries is counted once, and
    /// positions unchanged by the 180-degree turn not at all; the paper's numbers are shown
    /// beside them where it has them.
    #[command(after_long_help = help::DB_STATS)]
    Stats(BoardTables),
    /// The value of a position, and a move that keeps it.
    ///
    /// For the side to move, with each move's value; the best move keeps the value, and with
    /// distances it is the fastest win or the longest defence. With --batch: positions on
    /// stdin, one a line, and one value a line on stdout (w, d, l, or - where the tables do
    /// not answer, with the reason on stderr).
    #[command(after_long_help = help::DB_PROBE)]
    Probe {
        /// A position such as '........./..B....../....W..../......B../......... w'.
        #[arg(required_unless_present = "batch", conflicts_with = "batch")]
        position: Option<String>,
        #[command(flatten)]
        dir: TablesDir,
        /// Read positions from stdin and print one value a line (for outside checkers).
        #[arg(long, conflicts_with = "json")]
        batch: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Rewrite tables built under the paper's index under the symmetric one.
    ///
    /// A quarter of the size, slice by slice in place; the result equals a symmetric build's
    /// files byte for byte. Distance files are kept as they are.
    #[command(after_long_help = help::DB_CONVERT)]
    Convert {
        #[command(flatten)]
        tables: BoardTables,
        /// Only the slices with this many pieces.
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=45))]
        pieces: Option<u32>,
    },
    /// Check a layer of tables by search, against the tables one layer down.
    ///
    /// Random quiet positions of that many pieces (White to move) are solved by df-pn over
    /// the tables of one piece fewer, and each answer compared with the layer's.
    #[command(after_long_help = help::DB_FORWARD_CHECK)]
    ForwardCheck {
        #[command(flatten)]
        tables: BoardTables,
        /// The layer to check: its positions have this many pieces.
        #[arg(long, value_parser = clap::value_parser!(u32).range(3..=45))]
        pieces: u32,
        /// Positions to draw (the same ones every run).
        #[arg(long, default_value_t = 100)]
        samples: u64,
        /// Nodes each question may search.
        #[arg(long, default_value_t = 1_000_000)]
        nodes: u64,
    },
    /// Check every table: headers, checksums, and each entry against its successors.
    ///
    /// Each entry is derived again from its successors: a win if some move reaches a loss, a
    /// loss if every move reaches a win, else a draw. Every slice up to the largest built is
    /// listed; exit status 1 on any error or damaged slice, 2 for a missing one. With --quick,
    /// each file is compared with the board's SHA256SUMS instead.
    #[command(after_long_help = help::DB_VERIFY)]
    Verify {
        #[command(flatten)]
        tables: BoardTables,
        /// Only the slices with this many pieces.
        ///
        /// Their successors are read, not checked.
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=45))]
        pieces: Option<u32>,
        /// Check this many entries of each slice, drawn at random, instead of all.
        ///
        /// The same entries every run: for slices that take longer to check than to build.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        sample: Option<u64>,
        /// Compare each slice file with the board's SHA256SUMS instead of its successors.
        ///
        /// Each file's header and checksum are checked and its SHA-256 compared with the
        /// manifest a build keeps. Exit status 1 for a file damaged or not as listed, 2 for one
        /// listed but not there; a file not in the manifest is named (`db checksums` lists
        /// it), and tables without a manifest are checked by header and checksum alone.
        #[arg(long, conflicts_with = "sample")]
        quick: bool,
    },
    /// Write the SHA256SUMS of a board's tables anew, from every slice file there.
    ///
    /// A build records each file's SHA-256 in DIR/RxC/SHA256SUMS, the format `sha256sum -c`
    /// reads; this writes it for tables built before, or after files were fetched or moved.
    /// Each file's header and checksum are checked first: a damaged file is not listed (exit
    /// status 1).
    #[command(after_long_help = help::DB_CHECKSUMS)]
    Checksums(BoardTables),
}

/// The tables of one board: which board, where, how many threads, and the output form.
#[derive(clap::Args)]
pub struct BoardTables {
    /// The board (RxC); a board and its transpose share tables.
    #[arg(long)]
    board: String,
    #[command(flatten)]
    dir: TablesDir,
    /// Worker threads (default: threads of the config).
    #[arg(long, value_parser = threads)]
    threads: Option<usize>,
    #[command(flatten)]
    out: JsonFlag,
}

fn run_db(command: DbCommand, config: &Config) -> CliResult {
    let dir = |d: TablesDir| d.db.unwrap_or_else(|| config.db_dir.clone());
    let threads = |t: Option<usize>| t.unwrap_or(config.threads);
    match command {
        DbCommand::Build {
            board,
            pieces,
            pair,
            dir: d,
            threads: t,
            distances,
            index,
            checkpoint_every,
            out,
        } => db::build_cmd(
            &dir(d),
            &board,
            match pair {
                Some(m) => db::BuildGoal::Pair(m),
                None => db::BuildGoal::UpTo(pieces.unwrap_or(2) as usize),
            },
            threads(t),
            (
                distances,
                index.unwrap_or(fanorona::egdb::scheme::Scheme::for_new_slices(distances)),
                checkpoint_every,
            ),
            out.json,
        ),
        DbCommand::Stats(a) => db::stats(&dir(a.dir), &a.board, threads(a.threads), a.out.json),
        DbCommand::Probe {
            position,
            dir: d,
            batch,
            out,
        } => match position {
            Some(p) if !batch => db::probe(&dir(d), &p, out.json),
            _ => db::probe_batch(&dir(d)),
        },
        DbCommand::Convert { tables: a, pieces } => db::convert(
            &dir(a.dir),
            &a.board,
            threads(a.threads),
            pieces.map(|p| p as usize),
            a.out.json,
        ),
        DbCommand::ForwardCheck {
            tables: a,
            pieces,
            samples,
            nodes,
        } => db::forward_check(
            &dir(a.dir),
            &a.board,
            threads(a.threads),
            (pieces as usize, samples, nodes),
            a.out.json,
        ),
        DbCommand::Verify {
            tables: a,
            pieces,
            quick: true,
            ..
        } => db::verify_quick(
            &dir(a.dir),
            &a.board,
            threads(a.threads),
            pieces.map(|p| p as usize),
            a.out.json,
        ),
        DbCommand::Checksums(a) => {
            db::checksums(&dir(a.dir), &a.board, threads(a.threads), a.out.json)
        }
        DbCommand::Verify {
            tables: a,
            pieces,
            sample,
            quick: false,
        } => db::verify(
            &dir(a.dir),
            &a.board,
            threads(a.threads),
            (pieces.map(|p| p as usize), sample),
            a.out.json,
        ),
    }
}

impl Command {
    /// Whether the command reads the settings file and the data directory (the global
    /// `--config` and `--data-dir`); the rules commands and the benchmarks do not.
    fn settings_used(&self) -> (bool, bool) {
        match self {
            Command::Show { .. }
            | Command::Moves { .. }
            | Command::Perft { .. }
            | Command::Bench(_)
            | Command::Completions { .. }
            | Command::Man { .. } => (false, false),
            Command::Db { .. }
            | Command::Worker(_)
            | Command::Cluster { .. }
            | Command::Verify { .. }
            | Command::Stitch { .. }
            | Command::Cut { .. }
            | Command::Stats(_)
            | Command::Learn(_) => (true, false),
            _ => (true, true),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Command::Show { .. } => "show",
            Command::Moves { .. } => "moves",
            Command::Perft { .. } => "perft",
            Command::Solve(_) => "solve",
            Command::Play(_) => "play",
            Command::Match(_) => "match",
            Command::Stats(_) => "stats",
            Command::Learn(_) => "learn",
            Command::Verify { .. } => "verify",
            Command::Stitch { .. } => "stitch",
            Command::Cut { .. } => "cut",
            Command::Daemon { .. } => "daemon",
            Command::Serve { .. } => "serve",
            Command::Worker(_) => "worker",
            Command::Cluster { .. } => "cluster",
            Command::Session { .. } => "session",
            Command::Rote { .. } => "rote",
            Command::Store { .. } => "store",
            Command::Db { .. } => "db",
            Command::Bench(_) => "bench",
            Command::Completions { .. } => "completions",
            Command::Man { .. } => "man",
        }
    }
}

pub fn run(cli: Cli) -> CliResult {
    // A global flag given before and after the command would keep only the last: refused,
    // as a flag given twice after it is.
    for flag in ["--config", "--data-dir"] {
        // (args_os: an argument that is not UTF-8 is clap's to refuse, not a panic here.)
        let given = std::env::args_os()
            .filter(|a| {
                a.to_str()
                    .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
            })
            .count();
        if given > 1 {
            return Err(Failure::input(anyhow::anyhow!(
                "{flag} is given {given} times: give it once"
            )));
        }
    }
    // A flag that would be ignored is refused: the user meant something by it.
    let (config_used, data_used) = cli.command.settings_used();
    let ignored = [
        ("--config", cli.config.is_some() && !config_used),
        ("--data-dir", cli.data_dir.is_some() && !data_used),
    ];
    if let Some((flag, _)) = ignored.iter().find(|(_, ignored)| *ignored) {
        return Err(Failure::input(anyhow::anyhow!(
            "{flag} has no effect on `fanorona {}`, which reads no {}",
            cli.command.name(),
            if *flag == "--config" {
                "settings file"
            } else {
                "data directory"
            }
        )));
    }
    let config = || load_config(cli.config.as_deref(), cli.data_dir.as_deref());
    match cli.command {
        Command::Db { command } => run_db(command, &config()?),
        Command::Solve(args) => solve::solve(args, &config()?),
        Command::Play(args) => play::play(args, &config()?),
        Command::Match(args) => play::match_cmd(args, &config()?),
        Command::Stats(args) => stats::stats(args, &config()?),
        Command::Learn(args) => learn::learn(args, &config()?),
        Command::Verify {
            certificate,
            db,
            leaves,
            out,
        } => certificate::verify_cmd(&certificate, db, leaves.as_deref(), out.json, &config()?),
        Command::Stitch {
            partial,
            open,
            leaves,
            out,
            db,
            solve,
            nodes,
            threads,
            json,
        } => {
            let config = config()?;
            let solve = solve.then(|| certificate::LeafSolve {
                nodes,
                threads: threads.unwrap_or(config.threads).max(1),
                second_level: config.second_level,
                init: config.init,
                weights: config.weights.clone(),
            });
            let paths = certificate::StitchPaths {
                partial: &partial,
                open: open.as_deref(),
                leaves: &leaves,
                out: &out,
            };
            certificate::stitch_cmd(&paths, db, solve, json.json, &config)
        }
        Command::Cut {
            certificate,
            play,
            out,
            db,
            json,
        } => certificate::cut_cmd(&certificate, &play, &out, db, json.json, &config()?),
        Command::Daemon { no_log_file } => session::daemon(config()?, no_log_file),
        Command::Worker(args) => cluster::worker(args, &config()?),
        Command::Cluster { command } => cluster::cluster(command, &config()?),
        Command::Serve {
            bind,
            token_file,
            db,
            certificates,
        } => serve(bind, token_file, db, certificates, &config()?),
        Command::Session { command } => session::session(command, &config()?),
        Command::Rote { command } => session::rote(command, &config()?),
        Command::Store { command } => session::store(command, &config()?),
        Command::Show { target, out } => rules::show(&target, out.json),
        Command::Moves { target, out } => rules::moves(&target, out.json),
        Command::Perft {
            target,
            depth,
            divide,
            threads,
            out,
        } => rules::perft(rules::PerftArgs {
            target: &target,
            depth,
            divide,
            threads,
            json: out.json,
        }),
        Command::Bench(args) => bench::command(args),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { dir, out } => manual::man(&dir, out.json),
    }
}

/// `--bind`'s address: an IP address with its port, or a host name resolved (its first IPv4
/// address, else its first).
fn socket_address(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let all: Vec<_> = text
        .to_socket_addrs()
        .map_err(|e| format!("'{text}' is not HOST:PORT that resolves ({e})"))?
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| format!("'{text}' resolves to no address"))
}

/// A token file that cannot be used: the user's to mend (a file others may read, one that
/// holds no token, a directory missing or not writable), or the machine's.
fn token_failure(e: fanorona::web::token::TokenError) -> Failure {
    use fanorona::web::token::TokenError;
    use std::io::ErrorKind;
    match &e {
        TokenError::Exposed { .. } | TokenError::Malformed { .. } => Failure::input(e),
        TokenError::Io { source, .. }
            if matches!(
                source.kind(),
                ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::NotADirectory
            ) =>
        {
            Failure::input(e)
        }
        _ => Failure::other(e),
    }
}

/// `fanorona serve`: runs until stopped.
fn serve(
    bind: std::net::SocketAddr,
    token_file: Option<PathBuf>,
    db: Option<PathBuf>,
    certificates: Option<PathBuf>,
    config: &Config,
) -> CliResult {
    // What the server refuses on its own (a certificate that does not check, tables that are
    // not whole) is named in the log on stderr.
    crate::cli::session::init_tracing(config);
    // Directories named on the command line must be there: a typo would otherwise serve
    // every board without its tables, or no certificate, without a word.
    for (flag, dir) in [("--db", &db), ("--certificates", &certificates)] {
        if let Some(dir) = dir.as_ref().filter(|d| !d.is_dir()) {
            return Err(Failure::input(anyhow::anyhow!(
                "{flag} {}: no such directory",
                dir.display()
            )));
        }
    }
    let token_file = match token_file {
        Some(path) => path,
        None => {
            // The token's home is the data directory, its owner's alone.
            fanorona::daemon::datadir::make_private(&config.data_dir)
                .map_err(session::daemon_failure)?;
            config.data_dir.join(fanorona::web::token::FILE)
        }
    };
    let token = fanorona::web::token::read_or_create(&token_file).map_err(token_failure)?;
    let link = token.clone();
    let options = fanorona::web::Options {
        bind,
        db_dir: db.unwrap_or_else(|| config.db_dir.clone()),
        data_dir: config.data_dir.clone(),
        certificates_dir: certificates.unwrap_or_else(|| config.data_dir.join("certificates")),
        token,
    };
    fanorona::web::serve(options, |addr| {
        crate::out!("serving on http://{addr}/?token={link}");
        // Whoever started us (a script, a test) reads the address at once.
        let _ = std::io::Write::flush(&mut std::io::stdout());
        eprintln!(
            "the token is in {} (every API request needs it; the link carries it)",
            token_file.display()
        );
    })
    .map_err(|e| match e {
        fanorona::web::WebError::BadToken | fanorona::web::WebError::Bind { .. } => {
            Failure::input(e)
        }
        other => Failure::other(other),
    })
}
