//! `fanorona daemon`, `fanorona session ...` and `fanorona rote ...`: the solve-session
//! commands. With a daemon running they talk to it over its socket; without one, they open
//! the store themselves (taking the data directory's lock for the moment they need it).
//!
//! One file a concern: `ask` (to the daemon or, with none, a service in this process),
//! `daemon_run` (`fanorona daemon` and the log it keeps), `print` (status, moves and progress
//! in words), `rote` and `store` (their commands), `certificates` (`session certificate`);
//! here, the `session` subcommands and their dispatch.

mod ask;
mod certificates;
mod daemon_run;
mod print;
mod rote;
mod store;
pub mod tail;

pub use ask::{Ask, ask};
use ask::{json_of, refused};
use certificates::{Chosen, chosen_certificate, proof_note, session_certificate};
pub use daemon_run::{daemon, daemon_failure, init_tracing};
pub use print::progress_line;
use print::{print_moves, print_status};
pub use rote::{RoteCommand, rote};
pub use store::{StoreCommand, store};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;

use crate::cli::args::JsonFlag;
use crate::cli::args::algorithm_parser;
use crate::cli::args::color_parser;
use crate::cli::help;
use crate::cli::output::{CliResult, Failure, check_output, print_json};
use crate::out;
use fanorona::Color;
use fanorona::config::Config;
use fanorona::daemon::answers::{CurvePoint, Status};
use fanorona::daemon::protocol::{self, StatusOf};
use fanorona::search::{Algorithm, Init};
use fanorona::session::curve;
use fanorona::session::report::{CurveWritten, SessionStarted};
use fanorona::session::{SecondLevel, State};

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
        /// How new leaves get their first numbers from now on: "mobility", "material" or
        /// "learned" (5x9 and 9x5).
        #[arg(long, value_name = "mobility|material|learned")]
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
        #[arg(short = 'n', long = "lines", value_name = "N|all", default_value = "20", value_parser = crate::cli::session::tail::line_count)]
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
    #[command(group(clap::ArgGroup::new("output").required(true).multiple(true).args(["csv", "png", "svg"])))]
    Curve {
        /// The session's id (see `session list`).
        id: u64,
        /// The CSV file to write.
        ///
        /// Its columns: iteration, nodes, seconds, root_pn, root_dpn, goal.
        #[arg(long, value_name = "FILE")]
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
        /// Draw an earlier run's curve beside, in paler colours (a CSV this command wrote).
        ///
        /// Its questions' panels get its proof and disproof numbers too, as far as the
        /// session's own curve goes: the same questions searched another way, compared at
        /// the same iterations or nodes (`--x nodes`).
        #[arg(long, value_name = "CSV")]
        beside: Option<PathBuf>,
        /// What the legend calls the earlier run (default: its file's name).
        #[arg(long, value_name = "TEXT", requires = "beside")]
        beside_label: Option<String>,
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

pub fn session(command: SessionCommand, config: &Config) -> CliResult {
    match command {
        SessionCommand::Start {
            target,
            db,
            algo,
            name,
            second_level,
            out: JsonFlag { json },
        } => start(config, target, db, algo, name, second_level, json),
        SessionCommand::List {
            out: JsonFlag { json },
        } => list(config, json),
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
        } => crate::cli::session::tail::tail(
            config,
            crate::cli::session::tail::TailArgs {
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
            beside,
            beside_label,
            out: JsonFlag { json },
        } => {
            let plot = curve::Plot {
                width: size.0,
                panel_height: size.1,
                x,
            };
            let beside = beside.map(|path| (beside_label, path));
            curve_of(config, id, csv, png, svg, plot, points, beside, json)
        }
    }
}

/// `session start`: a new session, through the daemon or in the store for the next one.
fn start(
    config: &Config,
    target: String,
    db: Option<PathBuf>,
    algo: Option<Algorithm>,
    name: Option<String>,
    second_level: Option<SecondLevel>,
    json: bool,
) -> CliResult {
    // The daemon runs elsewhere: give it the tables' path as seen from here.
    let db = db.map(|d| std::path::absolute(&d).unwrap_or(d));
    let target = crate::cli::args::target_position(&target)?;
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
        print_json(&SessionStarted { id: v.id })?;
    } else {
        out!("session {} started", v.id);
        if !daemon {
            out!("no daemon is running: it will be solved when `fanorona daemon` starts");
        }
    }
    Ok(())
}

/// `session list`: every session, a line each.
fn list(config: &Config, json: bool) -> CliResult {
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

/// `session curve`: the stored curve as CSV, PNG or SVG, thinned to `points` if asked.
#[allow(clippy::too_many_arguments)]
fn curve_of(
    config: &Config,
    id: u64,
    csv: Option<PathBuf>,
    png: Option<PathBuf>,
    svg: Option<PathBuf>,
    plot: curve::Plot,
    points: Option<u64>,
    beside: Option<(Option<String>, PathBuf)>,
    json: bool,
) -> CliResult {
    for (flag, path) in [("--csv", &csv), ("--png", &png), ("--svg", &svg)] {
        if let Some(p) = path {
            check_output(flag, p)?;
        }
    }
    // A plot is written in the format its flag names: a name that says another is refused
    // rather than given a PNG (or an SVG) under it.
    for (flag, path, ext) in [("--png", &png, "png"), ("--svg", &svg, "svg")] {
        if let Some(p) = path {
            let named = p
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_lowercase);
            if named.as_deref() != Some(ext) {
                return Err(Failure::input(anyhow!(
                    "{flag} {}: the file would hold {}; give a name ending in .{ext}",
                    p.display(),
                    ext.to_uppercase()
                )));
            }
        }
    }
    let thinned = |rows: Vec<curve::Row>| match points {
        Some(n) => curve::thin(&rows, n as usize)
            .into_iter()
            .cloned()
            .collect(),
        None => rows,
    };
    let beside = match beside {
        Some(_) if png.is_none() && svg.is_none() => {
            return Err(Failure::input(anyhow!(
                "--beside draws an earlier curve in a plot: give --png or --svg as well"
            )));
        }
        Some((label, path)) => Some(curve::Beside {
            label: label.unwrap_or_else(|| {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                stem.unwrap_or_else(|| path.display().to_string())
            }),
            rows: curve::read_csv(&path).map_err(Failure::input)?,
        }),
        None => None,
    };
    let (curve_points, _) = ask(config, protocol::Curve { id, since: None })?;
    let all = CurvePoint::rows(&curve_points);
    let beside = beside.map(|b| curve::Beside {
        rows: thinned(curve::within(b.rows, &all, plot.x)),
        ..b
    });
    let rows = thinned(all);
    if rows.is_empty() {
        return Err(Failure::input(anyhow!(
            "session {id} has no curve points yet (it has not run an iteration): nothing written"
        )));
    }
    // The plots first: they are the ones that can fail on their own.
    let plots: Vec<&PathBuf> = png.iter().chain(&svg).collect();
    if !plots.is_empty() {
        let (status, _) = ask(config, StatusOf { id })?;
        let figure = curve::Figure {
            beside,
            ..status.figure()
        };
        for p in &plots {
            curve::draw_plot(p, &figure, &rows, &plot).map_err(Failure::other)?;
        }
    }
    if let Some(csv) = &csv {
        curve::write_csv(csv, &rows).map_err(Failure::other)?;
    }
    if json {
        print_json(&CurveWritten {
            points: rows.len(),
            csv,
            png,
            svg,
        })?;
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

fn control<C: Ask<Answer = Status>>(config: &Config, command: C, json: bool) -> CliResult {
    let (v, _) = ask(config, command)?;
    if json {
        out!("{}", json_of(&v));
    } else {
        print_status(&v);
    }
    Ok(())
}

/// Whether `state` leaves a session for later work (not solved, not failed).
pub fn unfinished(state: State) -> bool {
    matches!(state, State::Running | State::Paused | State::Stopped)
}
