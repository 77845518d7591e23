//! `fanorona daemon`, `fanorona session ...` and `fanorona rote ...`: the solve-session
//! commands. With a daemon running they talk to it over its socket; without one, they open
//! the store themselves (taking the data directory's lock for the moment they need it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use serde_json::Value;

use crate::cli::JsonFlag;
use crate::cli::help;
use crate::cli::output::{CliResult, Failure, check_output, counted};
use crate::cli::solve::algorithm_parser;
use crate::out;
use fanorona::Color;
use fanorona::certificate::Summary;
use fanorona::config::{Config, LogFormat};
use fanorona::daemon::answers::{CurvePoint, MovesAt, RoteRow, Shown, Status};
use fanorona::daemon::client::{ClientError, call, call_within};
use fanorona::daemon::protocol::{self, StatusOf};
use fanorona::daemon::{self, Apply, DaemonError, DataDir, Service};
use fanorona::search::{Algorithm, Init};
use fanorona::session::curve;
use fanorona::session::log::Progress;
use fanorona::session::moves::{MoveNumbers, Reached};
use fanorona::session::{GoalRecord, SecondLevel, State};

#[derive(clap::Subcommand)]
pub enum SessionCommand {
    /// Start solving a board's start (RxC) or a position; prints the session's id.
    ///
    /// The session is recorded in the store; a running daemon solves it, or the next one
    /// started. Its questions are "does the side to move win?", then if not "does the other
    /// side?".
    #[command(after_long_help = help::SESSION_START)]
    Start {
        /// A board (RxC, such as 5x9: its start) or a position such as 'BBB/B.W/WWW w'.
        target: String,
        /// Endgame tables for the leaves (default: db_dir of the config, if it has the board).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// The search algorithm (default: pn2).
        ///
        /// pn2-dfpn is PN² with df-pn at the second level; pn is Allis's proof-number search.
        #[arg(long, value_parser = algorithm_parser(&Algorithm::FIRST_LEVEL))]
        algo: Option<Algorithm>,
        /// A name to know it by in `session list` (default: the board and a number).
        #[arg(long)]
        name: Option<String>,
        /// PN²'s second-level bound (default: second_level of the daemon's config).
        ///
        /// "tree-size" (the paper's: the first-level tree's size), a node count, "tree/D"
        /// (the tree's size over D) or "max(N,tree/D)" (that, at least N).
        #[arg(long, value_name = "tree-size|N|tree/D|max(N,tree/D)")]
        second_level: Option<SecondLevel>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Every session with its state.
    ///
    /// One line each: id, state, value (once solved), nodes, name.
    #[command(after_long_help = help::SESSION_LIST)]
    List {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// One session: state, value once solved, work done, live progress of each question.
    ///
    /// Its root, algorithm and settings, and per question its outcome, nodes, iterations
    /// and first-level tree; live while it runs.
    #[command(after_long_help = help::SESSION_STATUS)]
    Status(Id),
    /// Checkpoint and set a running session aside; returns once it has stopped.
    ///
    /// `session resume` continues it.
    #[command(after_long_help = help::SESSION_PAUSE)]
    Pause(Id),
    /// Continue a paused, stopped or failed session from its last checkpoint.
    ///
    /// A failed session (a missing table slice, say) is retried once its cause is mended.
    #[command(after_long_help = help::SESSION_RESUME)]
    Resume(Id),
    /// Where each question stands below the root, move by move.
    ///
    /// Every move of the root (or of the position after --line) with its proof and disproof
    /// numbers and the first-level nodes under it, as last checkpointed; --heaviest adds the
    /// line most of the nodes go down.
    #[command(after_long_help = help::SESSION_MOVES)]
    Moves(MovesArgs),
    /// Change a paused, stopped or failed session's bound, first numbers or tables.
    ///
    /// From its next resume: its second-level bound, its new leaves' first numbers, its
    /// tables. The trees it kept stay; the answer depends on none of them (tables give exact
    /// values, and the new ones must decide all the old ones did).
    #[command(after_long_help = help::SESSION_TUNE)]
    Tune {
        /// The session's id (see `session list`).
        id: u64,
        /// PN²'s second-level bound from now on.
        ///
        /// "tree-size" (the paper's: the first-level tree's size), a node count, "tree/D"
        /// (the tree's size over D) or "max(N,tree/D)" (that, at least N).
        #[arg(long, value_name = "tree-size|N|tree/D|max(N,tree/D)", required_unless_present_any = ["db", "init"])]
        second_level: Option<SecondLevel>,
        /// How new leaves get their first numbers from now on: "mobility" or "material".
        #[arg(long, value_name = "mobility|material")]
        init: Option<Init>,
        /// Endgame tables to use from now on.
        ///
        /// Whole for the board, with at least as many pieces as the session's (say, 8-piece
        /// tables once they are built).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Checkpoint and stop a session; returns once it has stopped.
    ///
    /// `session resume` continues it.
    #[command(after_long_help = help::SESSION_STOP)]
    Stop(Id),
    /// Remove a session that is not running (stop it first).
    ///
    /// Its record, first-level trees, curve and progress log go. The rote entries it made
    /// stay, as do its certificates; its id is not given again.
    #[command(after_long_help = help::SESSION_DELETE)]
    Delete(Id),
    /// Give a session another name (one no other session has).
    #[command(after_long_help = help::SESSION_RENAME)]
    Rename {
        /// The session's id (see `session list`).
        id: u64,
        /// The new name (1 to 200 characters).
        name: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Print the end of a session's progress log, each line with its time (UTC).
    ///
    /// --follow keeps printing as it grows.
    #[command(after_long_help = help::SESSION_TAIL)]
    Tail {
        /// The session's id (see `session list`).
        id: u64,
        /// How many of the last lines to print, or 'all'.
        #[arg(short = 'n', long = "lines", value_name = "N|all", default_value = "20", value_parser = crate::cli::session_tail::line_count)]
        lines: usize,
        /// Keep printing new lines until the session is solved, fails or is stopped.
        ///
        /// A pause, a daemon restarting or gone, and the log file replaced do not end it
        /// (each is said on stderr).
        #[arg(long, short)]
        follow: bool,
        /// The log's JSON lines as written.
        #[arg(long)]
        json: bool,
    },
    /// Write the certificates of a session: PREFIX.white-wins.cert.gz and black-wins.
    ///
    /// Both questions of a solved one, the questions decided so far of one still running
    /// (written by the daemon when one runs, its log showing the progress; otherwise here).
    #[command(after_long_help = help::SESSION_CERTIFICATE)]
    Certificate {
        /// The session's id (see `session list`).
        id: u64,
        /// Where to write: PREFIX.white-wins.cert.gz and PREFIX.black-wins.cert.gz.
        prefix: PathBuf,
        /// Instead, the certificates of the position after this capture of the root.
        ///
        /// For each question whose first-level tree has decided it (the question may be
        /// open).
        #[arg(long = "move", value_name = "MOVE")]
        mv: Option<String>,
        /// Only this side's win question.
        #[arg(long, value_parser = color_parser())]
        goal: Option<Color>,
        /// Write a partial certificate: leave open what takes over N nodes to re-solve.
        ///
        /// PREFIX.GOAL-wins.partial.cert.gz: a node whose re-solving takes more than N search
        /// nodes is left open, an `o` leaf, and listed with its past in
        /// PREFIX.GOAL-wins.open.jsonl (`fanorona stitch` closes them). With no open leaf it
        /// is whole and takes the certificate's own name.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        leaf_budget: Option<u64>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Export the root's pn/dpn curve: CSV, and a plot as PNG or SVG (at least one of them).
    ///
    /// The root's proof and disproof numbers after every iteration (the paper's Figures
    /// 7-9), one panel per question.
    #[command(after_long_help = help::SESSION_CURVE)]
    Curve {
        /// The session's id (see `session list`).
        id: u64,
        /// The CSV file to write.
        ///
        /// Its columns: iteration, nodes, seconds, root_pn, root_dpn, goal.
        #[arg(long, value_name = "FILE", required_unless_present_any = ["png", "svg"])]
        csv: Option<PathBuf>,
        /// Draw the curve (log scale, one panel per question) into this PNG file.
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        /// Draw it as SVG (vector graphics, for a paper) into this file.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// The plot's width and each panel's height.
        ///
        /// In pixels, or SVG units; a panel for each question.
        #[arg(long, value_name = "WxH", default_value = "1100x440", value_parser = parse_size)]
        size: (u32, u32),
        /// What the plot's x axis counts.
        #[arg(long, value_name = "iterations|nodes", default_value = "iterations")]
        x: curve::Axis,
        /// At most about this many points a question (default: all).
        ///
        /// Every k-th is kept, and the first and last.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
        points: Option<u64>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// "1100x440": a plot's width and panel height.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{s}': give WIDTHxHEIGHT, such as 1100x440");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let size: (u32, u32) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    let (mw, mh) = curve::MIN_SIZE;
    if size.0 < mw || size.1 < mh {
        return Err(format!("'{s}': at least {mw}x{mh}"));
    }
    Ok(size)
}

#[derive(clap::Args)]
pub struct Id {
    /// The session's id (see `session list`).
    pub id: u64,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(clap::Args)]
pub struct MovesArgs {
    /// The session's id (see `session list`).
    pub id: u64,
    /// Go down this line from the session's root first, in the paper's notation.
    ///
    /// Repeat the flag, or separate moves by spaces: --line f4-e5W --line "d2-e3A ...".
    #[arg(long, value_name = "MOVES")]
    pub line: Vec<String>,
    /// Also follow the heaviest move from there, then its heaviest, down to a leaf.
    ///
    /// The move holding the most first-level nodes: the line the search is spending its
    /// nodes on.
    #[arg(long)]
    pub heaviest: bool,
    /// Also count the nodes below by the pieces on the board.
    ///
    /// With the live ones among them (not below a decided node) and the open leaves among
    /// those (where the next searches start).
    #[arg(long)]
    pub pieces: bool,
    /// Also count the live nodes below against the distinct searches they stand for.
    ///
    /// Live nodes are those not below a decided node; the same position with the same
    /// positions since the last capture, reached by other move orders, is one search.
    #[arg(long)]
    pub transpositions: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(clap::Subcommand)]
pub enum RoteCommand {
    /// How many solved positions the rote store holds, and how often searches hit it.
    ///
    /// By board, with how many have a best move.
    #[command(after_long_help = help::ROTE_STATS)]
    Stats {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Write every rote entry to FILE, one JSON object per line.
    ///
    /// Each has the position, a hash of the positions since the last capture it was decided
    /// under, the side whose win was asked, whether it wins, and the best move if known.
    #[command(after_long_help = help::ROTE_EXPORT)]
    Export {
        /// The file to write (JSON lines: position, history, attacker, value, best move).
        file: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(clap::Subcommand)]
pub enum StoreCommand {
    /// Give back the store's dead space: copy it, check the copy, swap it in.
    ///
    /// Every record is copied into a new store beside the old, the copy checked against it,
    /// and swapped in. sled keeps the space of every record rewritten or deleted
    /// (checkpoints' patches, folded chunks), so a store that ran for days is mostly garbage.
    /// Needs the store to itself (stop the daemon first) and free disk for the live records;
    /// stopped anywhere, the store is whole (the compaction is finished or undone when it
    /// opens).
    #[command(after_long_help = help::STORE_COMPACT)]
    Compact {
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn store(command: StoreCommand, config: &Config) -> CliResult {
    match command {
        StoreCommand::Compact {
            out: JsonFlag { json },
        } => {
            let dir = DataDir::new(&config.data_dir);
            let _lock = daemon::lock(&dir).map_err(daemon_failure)?;
            let mut last = std::time::Instant::now();
            let gb = |b: u64| b as f64 / 1e9;
            let done = daemon::compact::compact(&dir, config, &mut |table, c| {
                if !json && last.elapsed() >= Duration::from_secs(5) {
                    eprintln!(
                        "copying {}: {} records, {:.2} GB so far",
                        table.name(),
                        c.records,
                        gb(c.bytes)
                    );
                    last = std::time::Instant::now();
                }
            })
            .map_err(daemon_failure)?;
            if json {
                out!(
                    "{}",
                    serde_json::json!({
                        "store": dir.store(),
                        "records": done.contents.records,
                        "record_bytes": done.contents.bytes,
                        "bytes_before": done.bytes_before,
                        "bytes_after": done.bytes_after,
                        "seconds": done.seconds,
                    })
                );
            } else {
                out!(
                    "{}: {} records ({:.2} GB) copied, checked and swapped in; {:.2} GB on disk before, {:.2} GB now; {:.1} s",
                    dir.store().display(),
                    done.contents.records,
                    gb(done.contents.bytes),
                    gb(done.bytes_before),
                    gb(done.bytes_after),
                    done.seconds
                );
            }
            Ok(())
        }
    }
}

/// The readable log on stderr, at the config's level and format.
pub fn init_tracing(config: &Config) {
    let filter = tracing_subscriber::EnvFilter::new(format!("fanorona={}", config.log_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// One of the daemon's log outputs, in the config's format.
type LogLayer = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

fn log_layer<W>(format: LogFormat, writer: W, ansi: bool, time: bool) -> LogLayer
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi);
    match (format, time) {
        (LogFormat::Text, true) => Box::new(layer),
        (LogFormat::Text, false) => Box::new(layer.without_time()),
        (LogFormat::Json, true) => Box::new(layer.json()),
        (LogFormat::Json, false) => Box::new(layer.json().without_time()),
    }
}

/// The daemon's log: under systemd the journal alone (it stamps and keeps every line);
/// otherwise `DATA_DIR/daemon.log`, rotated by size, and stderr (unless stderr is that file,
/// as an older script's redirection makes it).
fn init_daemon_tracing(config: &Config, no_log_file: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let journal = daemon::logfile::under_journal();
    let path = daemon::logfile::path(&DataDir::new(&config.data_dir));
    let mut layers: Vec<LogLayer> = Vec::new();
    if journal || no_log_file || !daemon::logfile::stderr_is(&path) {
        let ansi = !journal && std::io::IsTerminal::is_terminal(&std::io::stderr());
        layers.push(log_layer(
            config.log_format,
            std::io::stderr,
            ansi,
            !journal,
        ));
    }
    if !journal && !no_log_file {
        let file = daemon::logfile::RotatingFile::new(
            path,
            daemon::logfile::MAX_BYTES,
            daemon::logfile::KEEP,
        );
        layers.push(log_layer(config.log_format, file, false, true));
    }
    let filter = tracing_subscriber::EnvFilter::new(format!("fanorona={}", config.log_level));
    let _ = tracing_subscriber::registry()
        .with(layers)
        .with(filter)
        .try_init();
}

/// `fanorona daemon`: runs until SIGINT or SIGTERM, then checkpoints and exits. Under a
/// service manager that asked for it (`NOTIFY_SOCKET`), says when it is ready and stopping.
pub fn daemon(config: Config, no_log_file: bool) -> CliResult {
    init_daemon_tracing(&config, no_log_file);
    let shutdown = Arc::new(daemon::Shutdown::new());
    let signal = shutdown.clone();
    ctrlc::set_handler(move || signal.trigger())
        .map_err(|e| Failure::other(anyhow!("cannot handle signals: {e}")))?;
    match daemon::serve(config, shutdown) {
        Err(DaemonError::Restart(why)) => {
            // The same command in a new process image: the store's file lock goes with the
            // old one's descriptors (all close on exec).
            use std::os::unix::process::CommandExt;
            tracing::warn!("daemon: the store failed writing ({why}); restarting to reopen it");
            let exe = std::env::current_exe().map_err(|e| Failure::other(anyhow!(e)))?;
            let e = std::process::Command::new(exe)
                .args(std::env::args_os().skip(1))
                .exec();
            Err(Failure::other(anyhow!("cannot restart the daemon: {e}")))
        }
        r => r.map_err(daemon_failure),
    }
}

/// A daemon error as a failure: the user's (exit 2) or the machine's (exit 1).
pub fn daemon_failure(e: DaemonError) -> Failure {
    if e.is_user_error() {
        Failure::input(e)
    } else {
        Failure::other(e)
    }
}

/// A refusal as a failure: bad input (exit 2) or not.
fn refused(message: String, bad_input: bool) -> Failure {
    if bad_input {
        Failure::input(anyhow!(message))
    } else {
        Failure::other(anyhow!(message))
    }
}

/// A command the session commands send, to the daemon or, with none running, to a service in
/// this process.
pub trait Ask: Apply + Clone {
    /// Whether it may make the data directory (only a start does: a mistyped one is named,
    /// not made empty).
    const MAKES_DATA: bool = false;

    /// Its answer when the data directory does not exist (`None`: the directory is named as
    /// missing).
    fn without_data() -> Option<Self::Answer> {
        None
    }
}

impl Ask for protocol::Start {
    const MAKES_DATA: bool = true;
}

impl Ask for protocol::List {}

impl Ask for protocol::RoteExport {
    fn without_data() -> Option<Vec<RoteRow>> {
        Some(Vec::new())
    }
}

impl Ask for StatusOf {}
impl Ask for protocol::Pause {}
impl Ask for protocol::Resume {}
impl Ask for protocol::Stop {}
impl Ask for protocol::Curve {}
impl Ask for protocol::RoteStatsOf {}
impl Ask for protocol::Moves {}
impl Ask for protocol::Tune {}
impl Ask for protocol::Delete {}
impl Ask for protocol::Rename {}

/// Sends `command` to the daemon, or, with none running, answers it here. Says whether the
/// daemon answered.
pub fn ask<C: Ask>(config: &Config, command: C) -> Result<(C::Answer, bool), Failure> {
    let dir = DataDir::new(&config.data_dir);
    if !C::MAKES_DATA && !dir.root.exists() {
        if let Some(answer) = C::without_data() {
            return Ok((answer, false));
        }
        return Err(Failure::input(anyhow!(
            "{}: no such data directory, so no session store (`fanorona session start` or `fanorona solve` makes one; give --data-dir or the config's data_dir for another)",
            dir.root.display()
        )));
    }
    match call(&dir.socket(), command.clone()) {
        Ok(v) => return Ok((v, true)),
        Err(ClientError::NoDaemon(_)) => {}
        Err(ClientError::Refused { message, bad_input }) => {
            return Err(refused(message, bad_input));
        }
        Err(e) => return Err(Failure::other(e)),
    }
    // A directory that exists but never held a store (a home directory given by mistake) is
    // named, not given a store, a lock file and an empty answer.
    if !C::MAKES_DATA && dir.root.is_dir() && !dir.store().exists() && !dir.created().exists() {
        if let Some(answer) = C::without_data() {
            return Ok((answer, false));
        }
        return Err(Failure::input(anyhow!(
            "{} holds no session store ({} is not there: `fanorona session start` or `fanorona solve` makes one; give --data-dir or the config's data_dir for another)",
            dir.root.display(),
            dir.store().display()
        )));
    }
    let _lock = match daemon::lock(&dir) {
        Ok(l) => l,
        // A daemon that is starting holds the lock before it listens: ask it again shortly.
        Err(DaemonError::Locked { .. }) => {
            for _ in 0..50 {
                std::thread::sleep(Duration::from_millis(100));
                match call(&dir.socket(), command.clone()) {
                    Ok(v) => return Ok((v, true)),
                    Err(ClientError::NoDaemon(_)) => continue,
                    Err(ClientError::Refused { message, bad_input }) => {
                        return Err(refused(message, bad_input));
                    }
                    Err(e) => return Err(Failure::other(e)),
                }
            }
            return Err(Failure::other(daemon::lock(&dir).err().map_or_else(
                || anyhow!("the daemon on {} does not answer", dir.root.display()),
                anyhow::Error::from,
            )));
        }
        Err(e) => return Err(daemon_failure(e)),
    };
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let service = Service::new(sessions, config.clone(), dir, false);
    command
        .apply(&service)
        .map(|v| (v, false))
        .map_err(|r| refused(r.message, r.bad_input))
}

/// An answer as `--json` prints it: its JSON, keys in order (as the daemon's socket and the
/// web API have them).
fn json_of(answer: impl serde::Serialize) -> Value {
    serde_json::to_value(answer).expect("answers serialise")
}

/// `--goal`'s parser: "white" or "black".
fn color_parser() -> impl clap::builder::TypedValueParser<Value = Color> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["white", "black"])
        .map(|name| Color::from_name(&name).expect("a listed name"))
}

/// A shown state in words: what is happening now.
pub fn state_words(state: Shown) -> &'static str {
    match state {
        Shown::Queued => {
            "queued (the daemon solves one session at a time, and a second on its idle thread when the first searches one question only; this one starts when a thread is free)"
        }
        Shown::Waiting => "waiting for a daemon (start one with `fanorona daemon`)",
        Shown::Pausing => "pausing (writing its checkpoint)",
        Shown::Stopping => "stopping (writing its checkpoint)",
        s => s.name(),
    }
}

/// `session moves`: per question, the root's numbers, then one line per move.
fn print_moves(v: &MovesAt) {
    if !v.line.is_empty() {
        out!("after the line: {}", v.position);
    }
    let row = |m: &MoveNumbers| {
        out!(
            "  {:<20} {:>12} {:>12} {:>12}{}",
            m.notation,
            infinity(m.pn),
            infinity(m.dn),
            m.nodes,
            if m.rote { "  (rote store)" } else { "" }
        );
    };
    let header = || out!("  {:<20} {:>12} {:>12} {:>12}", "move", "pn", "dn", "nodes");
    for q in &v.questions {
        out!(
            "{} wins? {}: root pn {} dn {}, first level {} nodes ({} below decided nodes or cut off)",
            q.attacker,
            q.outcome.name(),
            infinity(q.pn),
            infinity(q.dn),
            q.first_level,
            q.settled_below
        );
        match (q.reached, &q.at) {
            (Reached::Outside { after: 0 }, _) => {
                out!("  this tree is its root alone");
                continue;
            }
            (Reached::Outside { after }, _) => {
                out!("  the tree goes no further than move {after} of the line");
                continue;
            }
            (reached, Some(at)) if !v.line.is_empty() => out!(
                "  after the line ({}): pn {} dn {}, {} nodes{}",
                at.notation,
                infinity(at.pn),
                infinity(at.dn),
                at.nodes,
                if reached == Reached::Leaf {
                    ", a leaf"
                } else {
                    ""
                }
            ),
            _ => {}
        }
        if !q.moves.is_empty() {
            header();
            q.moves.iter().for_each(row);
        }
        if !q.heaviest.is_empty() {
            out!("  the heaviest line from here:");
            header();
            q.heaviest.iter().for_each(row);
        }
        if !q.pieces.is_empty() {
            out!("  the nodes from here by pieces on the board:");
            out!(
                "  {:>6} {:>12} {:>12} {:>12}",
                "pieces",
                "nodes",
                "live",
                "open leaves"
            );
            for p in &q.pieces {
                // (The count unpadded, as this line has always printed it.)
                out!(
                    "  {} {:>12} {:>12} {:>12}",
                    p.pieces,
                    p.nodes,
                    p.live,
                    p.open_leaves
                );
            }
        }
        if let Some(t) = &q.transpositions {
            out!(
                "  live nodes from here: {} over {} positions, {} with their pasts since the last capture",
                t.live,
                t.positions,
                t.keys
            );
            out!(
                "  open leaves: {} over {} keys; {} live nodes lie in subtrees of a key expanded before",
                t.open_leaves,
                t.open_leaf_keys,
                t.in_repeated_subtrees
            );
            out!(
                "  open leaves at a position proven elsewhere in the tree: {}; disproven elsewhere: {}",
                t.open_at_proven,
                t.open_at_disproven
            );
        }
    }
}

fn print_status(v: &Status) {
    out!(
        "session {} '{}': {}{}",
        v.id,
        fanorona::session::name::shown(&v.name),
        state_words(v.state),
        v.value
            .map(|x| format!(", value {}", x.name()))
            .unwrap_or_default()
    );
    out!("  root {}", v.root);
    let tables = v
        .db_dir
        .as_ref()
        .map(|d| format!(", tables {}", d.display()))
        .unwrap_or_default();
    out!(
        "  {}, second level {}, first numbers from {}{tables}",
        v.algo,
        v.second_level,
        v.init.name()
    );
    let live = (!v.live.is_empty()).then_some(&v.live);
    out!(
        "  {} nodes in {:.1} s{}, {} checkpoints, rote hits {} ({:.4} per node)",
        v.nodes,
        v.seconds,
        if live.is_some() {
            " at the last checkpoint"
        } else {
            ""
        },
        v.checkpoints,
        v.rote_hits,
        v.rote_hit_rate
    );
    for goal in &v.goals {
        let open = !goal.outcome.decided();
        let now = live
            .into_iter()
            .flatten()
            .find(|p| open && p.goal == goal.attacker.name());
        out!(
            "  {} wins? {}: {} nodes, {} iterations, first level {}{}{}",
            goal.attacker,
            goal.outcome.name(),
            goal.nodes,
            goal.iterations,
            goal.first_level,
            if now.is_some() {
                " (at the last checkpoint)"
            } else {
                ""
            },
            proof_note(goal)
        );
        if let Some(p) = now {
            // A bound that follows the tree: what an expansion may cost now.
            let budget = match v.second_level {
                b @ (SecondLevel::TreeSize | SecondLevel::Share { .. }) => {
                    format!(", second level now {} nodes", b.budget(p.first_level))
                }
                SecondLevel::Fixed(_) => String::new(),
            };
            out!(
                "    now: iteration {}, {} nodes, first level {}, root pn {} dpn {}, {} nodes/s{budget}",
                p.iteration,
                p.nodes,
                p.first_level,
                infinity(p.root_pn),
                infinity(p.root_dpn),
                rate(p.nodes_per_second)
            );
        }
    }
    if let Some(p) = &v.progress {
        out!(
            "  memory {} MB, store {} MB",
            p.memory_bytes >> 20,
            p.store_bytes >> 20
        );
    }
    if let Some(f) = &v.checkpoint_failure {
        out!("  {}", f.describe());
    }
    if let Some(e) = &v.error {
        out!("  error: {e}");
        if v.state == Shown::Failed {
            out!(
                "  (mend the cause, then `fanorona session resume {}` retries from the last checkpoint)",
                v.id
            );
        }
    }
}

/// A proof or disproof number: `inf` for infinity.
pub fn infinity(n: u64) -> String {
    if n >= fanorona::search::INFINITE {
        "inf".to_string()
    } else {
        n.to_string()
    }
}

/// A rate in whole units a second.
pub fn rate(per_second: f64) -> String {
    format!("{per_second:.0}")
}

pub fn session(command: SessionCommand, config: &Config) -> CliResult {
    match command {
        SessionCommand::Start {
            target,
            db,
            algo,
            name,
            second_level,
            out: JsonFlag { json },
        } => {
            // The daemon runs elsewhere: give it the tables' path as seen from here.
            let db = db.map(|d| std::path::absolute(&d).unwrap_or(d));
            let target = crate::cli::rules::target_position(&target)?;
            let (v, daemon) = ask(
                config,
                protocol::Start {
                    target,
                    db,
                    algo,
                    name,
                    second_level,
                },
            )?;
            if json {
                out!("{}", serde_json::json!({"id": v.id}));
            } else {
                out!("session {} started", v.id);
                if !daemon {
                    out!("no daemon is running: it will be solved when `fanorona daemon` starts");
                }
            }
            Ok(())
        }
        SessionCommand::List {
            out: JsonFlag { json },
        } => {
            let (list, _) = ask(config, protocol::List {})?;
            if json {
                out!("{}", json_of(&list));
            } else if list.is_empty() {
                out!("no sessions");
            } else {
                for s in &list {
                    // (The id and the nodes unpadded, as this list has always printed them.)
                    out!(
                        "{}  {:<8} {:<6} {} nodes  {}",
                        s.id,
                        s.state.name(),
                        s.value.map_or("-", |v| v.name()),
                        s.nodes,
                        fanorona::session::name::shown(&s.name)
                    );
                    if let Some(f) = &s.checkpoint_failure {
                        out!("   {}", f.describe());
                    }
                }
            }
            Ok(())
        }
        SessionCommand::Status(a) => control(config, StatusOf { id: a.id }, a.out.json),
        SessionCommand::Pause(a) => control(config, protocol::Pause { id: a.id }, a.out.json),
        SessionCommand::Resume(a) => control(config, protocol::Resume { id: a.id }, a.out.json),
        SessionCommand::Stop(a) => control(config, protocol::Stop { id: a.id }, a.out.json),
        SessionCommand::Delete(a) => {
            let (v, _) = ask(config, protocol::Delete { id: a.id })?;
            if a.out.json {
                out!("{}", json_of(&v));
            } else {
                out!(
                    "session {} '{}' deleted",
                    v.id,
                    fanorona::session::name::shown(&v.name)
                );
            }
            Ok(())
        }
        SessionCommand::Rename { id, name, out } => {
            control(config, protocol::Rename { id, name }, out.json)
        }
        SessionCommand::Moves(a) => {
            let line = a
                .line
                .iter()
                .flat_map(|p| p.split_whitespace())
                .map(str::to_string)
                .collect();
            let (v, _) = ask(
                config,
                protocol::Moves {
                    id: a.id,
                    line,
                    heaviest: a.heaviest,
                    pieces: a.pieces,
                    transpositions: a.transpositions,
                },
            )?;
            if a.out.json {
                out!("{}", json_of(&v));
            } else {
                print_moves(&v);
            }
            Ok(())
        }
        SessionCommand::Tune {
            id,
            second_level,
            init,
            db,
            out,
        } => {
            // The daemon runs elsewhere: it gets an absolute path.
            let db_dir = db
                .map(|d| std::path::absolute(&d))
                .transpose()
                .map_err(|e| Failure::input(anyhow!("--db: {e}")))?;
            control(
                config,
                protocol::Tune {
                    id,
                    second_level,
                    init,
                    db_dir,
                },
                out.json,
            )
        }
        SessionCommand::Tail {
            id,
            lines,
            follow,
            json,
        } => crate::cli::session_tail::tail(
            config,
            crate::cli::session_tail::TailArgs {
                id,
                lines,
                follow,
                json,
            },
        ),
        SessionCommand::Certificate {
            id,
            prefix,
            mv: None,
            goal: None,
            leaf_budget: None,
            out: JsonFlag { json },
        } => session_certificate(config, id, &prefix, json),
        SessionCommand::Certificate {
            id,
            prefix,
            mv,
            goal,
            leaf_budget,
            out: JsonFlag { json },
        } => {
            let chosen = Chosen {
                mv,
                goal,
                leaf_budget,
            };
            chosen_certificate(config, id, &chosen, &prefix, json)
        }
        SessionCommand::Curve {
            id,
            csv,
            png,
            svg,
            size,
            x,
            points,
            out: JsonFlag { json },
        } => {
            for (flag, path) in [("--csv", &csv), ("--png", &png), ("--svg", &svg)] {
                if let Some(p) = path {
                    check_output(flag, p)?;
                }
            }
            let (curve_points, _) = ask(config, protocol::Curve { id, since: None })?;
            let mut rows = CurvePoint::rows(&curve_points);
            if let Some(n) = points {
                rows = curve::thin(&rows, n as usize)
                    .into_iter()
                    .cloned()
                    .collect();
            }
            if rows.is_empty() {
                return Err(Failure::input(anyhow!(
                    "session {id} has no curve points yet (it has not run an iteration): nothing written"
                )));
            }
            // The plots first: they are the ones that can fail on their own.
            let plot = curve::Plot {
                width: size.0,
                panel_height: size.1,
                x,
            };
            let plots: Vec<&PathBuf> = png.iter().chain(&svg).collect();
            if !plots.is_empty() {
                let (status, _) = ask(config, StatusOf { id })?;
                let figure = status.figure();
                for p in &plots {
                    curve::draw_plot(p, &figure, &rows, &plot).map_err(Failure::other)?;
                }
            }
            if let Some(csv) = &csv {
                curve::write_csv(csv, &rows).map_err(Failure::other)?;
            }
            if json {
                out!(
                    "{}",
                    serde_json::json!({"points": rows.len(), "csv": csv, "png": png, "svg": svg})
                );
            } else {
                if let Some(csv) = &csv {
                    out!("{} points to {}", rows.len(), csv.display());
                }
                for p in plots {
                    out!("plot in {}", p.display());
                }
            }
            Ok(())
        }
    }
}

fn control<C: Ask<Answer = Status>>(config: &Config, command: C, json: bool) -> CliResult {
    let (v, _) = ask(config, command)?;
    if json {
        out!("{}", json_of(&v));
    } else {
        print_status(&v);
    }
    Ok(())
}

/// One progress-log line, readable.
pub fn progress_line(p: &Progress) -> String {
    let pn = infinity;
    let mut s = format!(
        "{:>10} {} wins? it {} nodes {} ({}/s) pn {} dpn {} first {} rote {} mem {}M store {}M",
        p.event,
        p.goal,
        p.iteration,
        p.nodes,
        rate(p.nodes_per_second),
        pn(p.root_pn),
        pn(p.root_dpn),
        p.first_level,
        p.rote_hits,
        p.memory_bytes >> 20,
        p.store_bytes >> 20
    );
    if let Some(m) = &p.message {
        s.push_str(&format!(" | {m}"));
    }
    s
}

pub fn rote(command: RoteCommand, config: &Config) -> CliResult {
    match command {
        RoteCommand::Stats {
            out: JsonFlag { json },
        } => {
            let (v, _) = ask(config, protocol::RoteStatsOf {})?;
            if json {
                out!("{}", json_of(&v));
            } else {
                out!(
                    "{} solved positions ({} attacker wins, {} not), {} with a best move",
                    v.entries,
                    v.attacker_wins,
                    v.attacker_does_not_win,
                    v.with_best_move
                );
                for (b, n) in &v.boards {
                    out!("  {b}: {n}");
                }
                out!(
                    "searches hit it {} times ({:.4} per node created)",
                    v.hits,
                    v.hit_rate
                );
            }
            Ok(())
        }
        RoteCommand::Export {
            file,
            out: JsonFlag { json },
        } => {
            check_output("export to", &file)?;
            let (entries, _) = ask(config, protocol::RoteExport {})?;
            let mut text = String::new();
            for e in &entries {
                text.push_str(&json_of(e).to_string());
                text.push('\n');
            }
            crate::cli::output::write_atomically(&file, text.as_bytes())?;
            if json {
                out!(
                    "{}",
                    serde_json::json!({"entries": entries.len(), "file": file})
                );
            } else {
                out!("{} entries to {}", entries.len(), file.display());
            }
            Ok(())
        }
    }
}

/// Whether `state` leaves a session for later work (not solved, not failed).
pub fn unfinished(state: State) -> bool {
    matches!(state, State::Running | State::Paused | State::Stopped)
}

/// `session certificate ID PREFIX`: the certificates the daemon wrote when the session was
/// solved, copied to PREFIX; written now (from the store) where there are none yet.
fn session_certificate(config: &Config, id: u64, prefix: &Path, json: bool) -> CliResult {
    use fanorona::certificate::path_for;
    use fanorona::session::certificates;
    crate::cli::certificate::check_prefix(prefix)?;
    let (status, _) = ask(config, StatusOf { id })?;
    let dir = DataDir::new(&config.data_dir);
    let kept = certificates::prefix(&dir.root, id);
    // Absolute, as the daemon is told it and names what it wrote.
    let kept = std::path::absolute(&kept).unwrap_or(kept);
    // A solved session answers both questions: a draw disproves both, a win proves one and
    // so disproves the other. An unsolved one has a certificate for each question decided
    // so far (written now, from the store).
    let goals: Vec<fanorona::search::Goal> = if status.state == Shown::Solved {
        vec![Color::White, Color::Black]
            .into_iter()
            .map(|attacker| fanorona::search::Goal { attacker })
            .collect()
    } else {
        status
            .goals
            .iter()
            .filter(|g| g.outcome.decided())
            .map(GoalRecord::goal)
            .collect()
    };
    if goals.is_empty() {
        return Err(Failure::input(anyhow!(
            "session {id} is {} and has no question decided yet: no certificate to write",
            if status.state == Shown::Waiting {
                "waiting for a daemon"
            } else {
                status.state.name()
            }
        )));
    }
    let missing = goals.iter().any(|g| !path_for(&kept, *g).is_file());
    // Not written yet (solved by an older build, or the write failed): write them now.
    let made = if missing {
        write_certificates(config, id, &kept, &Chosen::default())?
    } else {
        Vec::new()
    };
    let mut rows = Vec::new();
    for g in &goals {
        use fanorona::certificate::{open_list_for, partial_path_for};
        // Whole, or partial (some leaves resisted) with its list; or left out by the writer
        // (decided by the rote store at the root).
        let (from, list) = if path_for(&kept, *g).is_file() {
            (path_for(&kept, *g), None)
        } else if partial_path_for(&kept, *g).is_file() {
            (partial_path_for(&kept, *g), Some(open_list_for(&kept, *g)))
        } else {
            eprintln!(
                "  {g}: no certificate of this session's own (taken from the rote store at its root)"
            );
            continue;
        };
        let to = crate::cli::certificate::copy_certificate(&from, list.as_deref(), prefix, *g)?;
        if list.is_some() {
            eprintln!(
                "  {g}: PARTIAL: its open leaves are listed in {} (close them with `fanorona stitch --solve`)",
                open_list_for(prefix, *g).display()
            );
        }
        let bytes = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
        // One not written now was checked when the session was solved, but a file can be
        // damaged since: the copy handed out is checked again (seconds; a write took up to
        // an hour), against the session's tables.
        let check = made
            .iter()
            .find(|m| Some(m.path.as_str()) == from.to_str())
            .map(|m| match &m.verify_error {
                None if m.verified => Ok("written and verified now"),
                e => Err(e.clone().unwrap_or_default()),
            })
            .unwrap_or_else(|| {
                fanorona::certificate::verify_file(
                    &to,
                    status
                        .db_dir
                        .as_deref()
                        .map(fanorona::certificate::Tables::Dir),
                    |_| {},
                    &mut |_| {},
                    &mut |_, _| {},
                )
                .map(|_| "written when the session was solved, verified again now")
                .map_err(|e| e.to_string())
            });
        rows.push((g.to_string(), to, bytes, check));
    }
    if json {
        out!(
            "{}",
            serde_json::json!({"session": id, "certificates": rows.iter().map(|(g, p, b, c)| serde_json::json!({
                "goal": g, "path": p, "bytes": b,
                "verified": c.is_ok(),
            })).collect::<Vec<_>>()})
        );
    } else {
        for (g, p, b, c) in &rows {
            let note = match c {
                Ok(note) => note.to_string(),
                Err(e) => format!("FAILED verification: {e}"),
            };
            out!(
                "{g}: {} ({}), {note}",
                p.display(),
                crate::cli::certificate::human_bytes(*b)
            );
        }
    }
    if rows.iter().any(|(_, _, _, c)| c.is_err()) {
        return Err(Failure::other(anyhow!("a certificate failed verification")));
    }
    Ok(())
}

/// Which of a session's certificates to write now, and how (`session certificate`'s
/// `--move`, `--goal`, `--leaf-budget`).
#[derive(Default)]
struct Chosen {
    mv: Option<String>,
    goal: Option<Color>,
    leaf_budget: Option<u64>,
}

/// `session certificate ID PREFIX` with `--move MOVE` (the certificates of the position
/// after a decided move of the root), `--goal` or `--leaf-budget`: written now, from the
/// store's first-level trees, straight to PREFIX.
fn chosen_certificate(
    config: &Config,
    id: u64,
    chosen: &Chosen,
    prefix: &Path,
    json: bool,
) -> CliResult {
    crate::cli::certificate::check_prefix(prefix)?;
    let made = write_certificates(config, id, prefix, chosen)?;
    if json {
        out!(
            "{}",
            serde_json::json!({"session": id, "move": chosen.mv, "certificates": json_of(&made)})
        );
    } else {
        for m in &made {
            out!("{}", crate::cli::certificate::line_of(m));
        }
    }
    if made.iter().any(|m| !m.verified) {
        return Err(Failure::other(anyhow!("a certificate failed verification")));
    }
    Ok(())
}

/// Writes and checks the certificates of session `id` under `prefix` (of the position after
/// the decided capture `mv` of its root, when given): in the daemon when one runs (the store
/// is its; its log shows the progress), otherwise here, under the store's lock.
fn write_certificates(
    config: &Config,
    id: u64,
    prefix: &Path,
    chosen: &Chosen,
) -> Result<Vec<Summary>, Failure> {
    use fanorona::session::certificates;
    let dir = DataDir::new(&config.data_dir);
    let prefix = std::path::absolute(prefix)
        .map_err(|e| Failure::input(anyhow!("{}: {e}", prefix.display())))?;
    let request = protocol::Certificate {
        id,
        prefix: prefix.clone(),
        mv: chosen.mv.clone(),
        goal: chosen.goal,
        leaf_budget: chosen.leaf_budget,
    };
    if dir.socket().exists() {
        eprintln!(
            "  asking the daemon to write it (its log shows the progress: {}, or the journal under systemd)",
            daemon::logfile::path(&dir).display()
        );
    }
    match call_within(&dir.socket(), request, None) {
        Ok(v) => return Ok(v.certificates),
        Err(ClientError::NoDaemon(_)) => {
            eprintln!("  no daemon answers: writing it here, under the store's lock");
        }
        Err(ClientError::Refused { message, bad_input }) => {
            return Err(refused(message, bad_input));
        }
        Err(e) => return Err(Failure::other(e)),
    }
    let _lock = daemon::lock(&dir).map_err(daemon_failure)?;
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let rec = sessions.get(id).map_err(|e| Failure::input(anyhow!(e)))?;
    let mut progress = |goal: &str, w: &fanorona::certificate::Written| {
        eprintln!("  {goal}: {}", w.progress_line())
    };
    let report = |line: &str| eprintln!("  {line}");
    let opts = certificates::Options {
        attacker: chosen.goal,
        leaf_budget: chosen.leaf_budget,
        report: Some(&report),
        ..Default::default()
    }
    .bounded(config, config.threads);
    let made = certificates::write_any(
        &sessions,
        &rec,
        chosen.mv.as_deref(),
        &prefix,
        opts,
        &mut progress,
    )
    .map_err(|e| match e {
        certificates::CertificateError::Move { .. }
        | certificates::CertificateError::FromStore { .. } => Failure::input(anyhow!(e)),
        e => Failure::other(anyhow!(e)),
    })?;
    Ok(made
        .iter()
        .map(fanorona::certificate::Made::summary)
        .collect())
}

/// How a question's proof was checked, for `session status`: the kept tree at once (leaves
/// taken as given counted), then in full by the certificate.
fn proof_note(goal: &GoalRecord) -> String {
    let given = |n: u64, one: &str, many: &str| (n > 0).then(|| counted(n, one, many));
    let taken: Vec<String> = [
        given(
            goal.rote_leaves,
            "leaf from the rote store",
            "leaves from the rote store",
        ),
        given(
            goal.second_level_leaves,
            "second-level leaf",
            "second-level leaves",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let kept = match goal.verified {
        Some(true) if taken.is_empty() => ", proof verified".to_string(),
        Some(true) => format!(", kept tree verified ({} taken as given)", taken.join(", ")),
        Some(false) => ", proof FAILED the check".to_string(),
        None => String::new(),
    };
    let certificate = match goal.certificate_verified {
        Some(true) => ", certificate verified",
        Some(false) => ", certificate FAILED the check",
        None => "",
    };
    format!("{kept}{certificate}")
}
