//! `fanorona solve`: the game-theoretic value of a board's start or of a position.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use anyhow::anyhow;
use serde_json::json;

pub mod args;
pub mod report;
pub mod session;

use crate::cli::args::open_tables;
use crate::cli::certificate::{check_prefix, make};
use crate::cli::output::{CliResult, Failure, check_output, input};
use crate::cli::solve::report::{Question, Report};
pub use args::{RepetitionRule, SolveArgs};
use fanorona::certificate::checked::{CertificateTo, Checked, SearchSettings, search_checked};
use fanorona::certificate::{Made, Solved};
use fanorona::config::Config;
use fanorona::egdb::Database;
use fanorona::egdb::file::board_dir;
use fanorona::search::census;
use fanorona::search::{
    Algorithm, CurvePoint, Goal, Init, LeafEval, Limits, Outcome, SearchResult, Solution,
    game_value,
};
use fanorona::{Board, Color, Position, legal_moves};

/// Entries the df-pn table keeps at most (the cheapest go when it is full).
const DFPN_TABLE: usize = 20_000_000;

/// With no target: a board whose proof takes about a second.
const DEFAULT_BOARD: &str = "7x3";

fn target(text: Option<&str>) -> Result<Position, Failure> {
    crate::cli::args::target_position(text.unwrap_or(DEFAULT_BOARD))
}

/// How `args` asks each question to be searched in memory.
fn search_settings(args: &SolveArgs) -> SearchSettings {
    SearchSettings {
        algo: args.algo,
        limits: Limits {
            nodes: args.nodes,
            time: None,
            memory: args.memory,
        },
        repetition_wins: args.repetition == RepetitionRule::Attacker,
        second_level: args.second_level,
        second_level_table: args.second_level_table,
        dfpn_table: DFPN_TABLE,
    }
}

/// Searches `goal` at `pos` in memory, checked, its certificate written under `to`; the
/// search's progress on stderr once a second.
fn search(
    pos: &Position,
    goal: Goal,
    leaf: LeafEval<'_>,
    settings: &SearchSettings,
    db: Option<&Database>,
    to: Option<CertificateTo<'_>>,
) -> Checked {
    let mut last = Instant::now();
    let mut progress = |p: &CurvePoint| {
        if last.elapsed().as_secs_f64() >= 1.0 {
            eprintln!(
                "  {goal}: iteration {}, {} nodes, root pn {} dn {}, {:.1} s",
                p.iteration, p.nodes, p.pn, p.dn, p.seconds
            );
            last = Instant::now();
        }
    };
    let mut written = |path: &Path, w: &fanorona::certificate::Written| {
        eprintln!("  writing {}: {}", path.display(), w.progress_line())
    };
    search_checked(
        pos,
        goal,
        leaf,
        settings,
        db,
        to,
        &mut progress,
        &mut written,
    )
}

pub fn solve(mut args: SolveArgs, config: &Config) -> CliResult {
    let (pos, config) = settle(&mut args, config)?;
    let config = &config;
    // PN and PN² run as a session on the store under the data directory (resumable, with
    // rote learning), unless asked for a bounded or in-memory run.
    if args.algo != Algorithm::DfPn
        && !args.no_store
        && args.nodes.is_none()
        && args.memory.is_none()
        && !args.moves
        && !args.census
        && args.goal.is_none()
    {
        match crate::cli::solve::session::solve(&pos, &args, config)? {
            None => {}
            Some(()) => return Ok(()),
        }
    }
    let model = crate::cli::args::own_model(config.init, config.weights.as_deref(), pos.board())?;
    let (dir, db) = tables_for(&args, config, &pos)?;
    let leaf = LeafEval::new(db.as_ref()).with_first_numbers(config.init, model.as_ref());
    if let Some(db) = &db {
        db.warm();
    }
    // Whether every decided search's solution tree passed the check, and how many there were.
    let (mut verified, mut checked) = (true, 0);
    let mut certificates: Vec<Made> = Vec::new();
    let mut failure = None;
    let db_dir = db.as_ref().map(|_| dir.as_path());
    let settings = search_settings(&args);
    let mut solve_one = |p: &Position| -> Solution {
        // Certificates are written for the root's goals only.
        let to = args
            .certificate
            .as_deref()
            .filter(|_| *p == pos)
            .map(|prefix| CertificateTo { prefix, db_dir });
        let asked = args.goal.as_deref().map(|g| Goal {
            attacker: Color::from_name(g).unwrap_or(Color::Black),
        });
        one_or_both(p, asked, |goal| {
            let c = search(p, goal, leaf, &settings, db.as_ref(), to);
            if let Some(ok) = c.verified {
                verified &= ok;
                checked += 1;
            }
            match c.certificate {
                Some(Ok(made)) => {
                    verified &= made.verified();
                    certificates.push(made);
                }
                Some(Err(e)) => failure = Some(Failure::other(e)),
                None => {}
            }
            c.result
        })
    };
    let start = Instant::now();
    census::take();
    let solution = solve_one(&pos);
    let move_values = if args.moves {
        value_moves(&pos, args.json, &mut solve_one)
    } else {
        Vec::new()
    };
    let taken_census = args.census.then(census::take);
    if let Some(prefix) = args.certificate.as_deref()
        && let Some(made) = loser_certificate(prefix, pos, &solution, db.as_ref(), db_dir)?
    {
        verified &= made.verified();
        certificates.push(made);
    }
    let report = Report {
        position: pos,
        value: solution.value.map(|v| v.name().to_string()),
        undecided: undecided_reason(&args, &solution),
        // A position the tables hold is decided without a search: its best move is theirs.
        best_move: solution
            .best_move()
            .or_else(|| {
                let db = db.as_ref()?;
                let value = db.probe(&pos)?;
                fanorona::egdb::probe::best_table_move(&db.table_moves(&pos), value).map(|m| m.mv)
            })
            .map(|m| m.notation(pos.board())),
        questions: solution
            .searches
            .iter()
            .map(|s| Question {
                attacker: s.goal.attacker.name().to_string(),
                outcome: s.outcome.name().to_string(),
                nodes: s.stats.nodes,
                iterations: s.stats.iterations,
                first_level: None,
                db_hits: s.stats.db_hits,
                rote_hits: None,
                repetitions: s.stats.repetitions,
                seconds: s.stats.seconds,
            })
            .collect(),
        seconds: start.elapsed().as_secs_f64(),
        verified: (checked > 0).then_some(verified),
        unchecked: "no search decided, so no proof to check",
        algorithm: args.algo.name().to_string(),
        database: db.as_ref().map(|_| dir.display().to_string()),
        session: None,
        certificates,
        moves: args.moves.then_some(move_values),
        census: taken_census,
    };
    report.print(args.json)?;
    // The curve after the result: a failure here cannot hide the value.
    if let Some(path) = &args.curve {
        write_curve(path, &solution)?;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if !verified {
        return Err(Failure::other(anyhow!(
            "a proof failed the independent check"
        )));
    }
    Ok(())
}

/// The arguments checked and the config they override: the position to solve and the
/// settings of its search (the session's, from the config, and the in-memory one's alike).
fn settle(args: &mut SolveArgs, config: &Config) -> Result<(Position, Config), Failure> {
    // A second level only PN² has: refused elsewhere rather than ignored.
    if args.second_level.is_some() && matches!(args.algo, Algorithm::Pn | Algorithm::DfPn) {
        return Err(Failure::input(anyhow!(
            "--second-level bounds PN²'s second level: use it with --algo pn2 or pn2-dfpn, not {}",
            args.algo.name()
        )));
    }
    let mut config = config.clone();
    if let Some(t) = args.threads {
        config.threads = t;
    }
    if let Some(s) = args.second_level {
        config.second_level = s;
    }
    // The session (its settings come from the config) and the search in memory alike.
    if let Some(i) = args.init {
        config.init = i;
    }
    if let Some(w) = &args.weights {
        if config.init != Init::Learned {
            return Err(Failure::input(anyhow!(
                "--weights is for the learned first numbers (--init learned), and this search's are {}",
                config.init.name()
            )));
        }
        config.weights = Some(w.clone());
    }
    args.second_level = Some(config.second_level);
    args.second_level_table = fanorona::search::pn::second_level_entries(config.second_level_table);
    if let Some(b) = args.board.take() {
        // A board, as --board is everywhere, not a position.
        input(b.parse::<Board>())?;
        args.target = Some(b);
    }
    let pos = target(args.target.as_deref())?;
    if let Some(prefix) = &args.certificate {
        check_prefix(prefix)?;
    }
    if let Some(curve) = &args.curve {
        check_output("--curve", curve)?;
    }
    if args.repetition == RepetitionRule::Attacker && args.algo != Algorithm::DfPn {
        return Err(Failure::input(anyhow!(
            "--repetition attacker needs --algo dfpn"
        )));
    }
    if fanorona::movegen::is_lost(&pos) {
        return Err(Failure::input(anyhow!(
            "{pos} is already decided: {} has lost",
            pos.side_to_move()
        )));
    }
    Ok((pos, config))
}

/// The tables the search reads: `--db`'s, or the config's if any are built for this board
/// (whole, or the solve refuses); none said once on stderr.
fn tables_for(
    args: &SolveArgs,
    config: &Config,
    pos: &Position,
) -> Result<(std::path::PathBuf, Option<Database>), Failure> {
    let dir = args.db.clone().unwrap_or_else(|| config.db_dir.clone());
    let db = if args.db.is_some() || board_dir(&dir, pos.board()).is_dir() {
        Some(open_tables(&dir, pos.board())?)
    } else {
        // Said once, on stderr: a large board searched without tables can run for hours.
        eprintln!(
            "note: no tables of {} under {}: searching by the rules alone (`fanorona db build --board {} --pieces N --db {}` makes some)",
            pos.board(),
            dir.display(),
            pos.board(),
            dir.display()
        );
        None
    };
    Ok((dir, db))
}

/// Each move of `pos` valued by a search of its own (`--moves`), a bar on a terminal saying
/// which is under way.
fn value_moves(
    pos: &Position,
    json: bool,
    solve_one: &mut dyn FnMut(&Position) -> Solution,
) -> Vec<(String, String)> {
    let mut move_values = Vec::new();
    let moves = legal_moves(pos);
    // Each move is a search of its own, some long: say which one is under way.
    let progress = if std::io::stderr().is_terminal() && !json {
        let bar = indicatif::ProgressBar::new(moves.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("valuing move {pos} of {len}: {msg}")
                .expect("the template is valid"),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    for m in &moves {
        progress.set_message(m.notation(pos.board()));
        progress.inc(1);
        let child = m.apply(pos);
        let s = if fanorona::movegen::is_lost(&child) {
            None
        } else {
            solve_one(&child).value
        };
        // A move that leaves the opponent lost wins for the mover.
        let v = s
            .map(|v| v.name())
            .unwrap_or(if fanorona::movegen::is_lost(&child) {
                pos.side_to_move().name()
            } else {
                "unknown"
            });
        move_values.push((m.notation(pos.board()), v.to_string()));
    }
    progress.finish_and_clear();
    move_values
}

/// A win answers the loser's question too ("does the loser win?" is disproven) without
/// searching it: its certificate, filled in by the writer's own df-pn, when the root's
/// searches did not hold it.
fn loser_certificate(
    prefix: &Path,
    pos: Position,
    solution: &Solution,
    db: Option<&Database>,
    db_dir: Option<&Path>,
) -> Result<Option<Made>, Failure> {
    let Some(fanorona::search::Value::Win(winner)) = solution.value else {
        return Ok(None);
    };
    let goal = Goal {
        attacker: winner.opponent(),
    };
    if solution.searches.iter().any(|s| s.goal == goal) {
        return Ok(None);
    }
    let extra = fanorona::certificate::header_extra(
        json!({"algorithm": "dfpn", "note": format!("re-solved for the certificate: {winner} wins")}),
    );
    let solved = Solved {
        root: pos,
        goal,
        proves: false,
        db,
        tree: None,
        dfpn: None,
    };
    make(prefix, solved, extra, db_dir).map(Some)
}

/// Writes the searches' curves to `path` (`--curve`).
fn write_curve(path: &Path, solution: &Solution) -> CliResult {
    let rows: Vec<_> = solution
        .searches
        .iter()
        .flat_map(|s| {
            s.curve
                .iter()
                .map(|p| (s.goal.attacker.name().to_string(), *p))
        })
        .collect();
    fanorona::session::curve::write_csv(path, &rows).map_err(Failure::other)?;
    eprintln!("curve: {} points to {}", rows.len(), path.display());
    Ok(())
}

/// Why a solve ended without a value: the limit that stopped it, named with its flag.
fn undecided_reason(args: &SolveArgs, solution: &Solution) -> String {
    let open = solution
        .searches
        .iter()
        .find(|s| s.outcome == Outcome::Unknown);
    let by_nodes = match (args.nodes, open) {
        (Some(n), Some(s)) => s.stats.nodes >= n,
        _ => false,
    };
    match (open, by_nodes, args.memory) {
        // One question asked and disproven: its side does not win, which leaves two values.
        (None, _, _) if args.goal.is_some() => {
            let side = args.goal.as_deref().unwrap_or("?");
            let other = if side == "white" { "black" } else { "white" };
            format!(
                "{side} does not win ({other} wins or it is a draw; without --goal both questions are asked)"
            )
        }
        (Some(s), true, _) => format!(
            "unknown: {} stopped at --nodes {}",
            s.goal,
            args.nodes.unwrap_or(0)
        ),
        (Some(s), false, Some(m)) => format!(
            "unknown: {} stopped when its tree or table reached --memory {} MiB",
            s.goal,
            m >> 20
        ),
        _ => "unknown: a limit stopped the search".to_string(),
    }
}

/// `game_value`, or with `asked` only that question: a proof decides the value, a disproof
/// alone does not.
fn one_or_both(
    pos: &Position,
    asked: Option<Goal>,
    mut search: impl FnMut(Goal) -> SearchResult,
) -> Solution {
    let Some(goal) = asked else {
        return game_value(pos, search);
    };
    let result = search(goal);
    Solution {
        position: *pos,
        value: (result.outcome == Outcome::Proven)
            .then_some(fanorona::search::Value::Win(goal.attacker)),
        searches: vec![result],
    }
}
