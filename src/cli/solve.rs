//! `fanorona solve`: the game-theoretic value of a board's start or of a position.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::anyhow;
use serde_json::json;

use crate::cli::bench;
use crate::cli::certificate::{check_prefix, make};
use crate::cli::output::{CliResult, Failure, check_output, input};
use crate::cli::solve_report::{Question, Report};
use fanorona::certificate::{Made, Solved};
use fanorona::config::Config;
use fanorona::egdb::Database;
use fanorona::egdb::file::board_dir;
use fanorona::search::census;
use fanorona::search::dfpn::DfPn;
use fanorona::search::pn::{self, PnTree};
use fanorona::search::proof::{check, extract};
use fanorona::search::{
    Algorithm, CurvePoint, Goal, Init, LeafEval, Limits, Outcome, SearchResult, Solution,
    game_value,
};
use fanorona::session::SecondLevel;
use fanorona::{Board, Color, Position, legal_moves};

/// `--algo`'s parser: one of `choices` by name, each listed with what it is.
pub fn algorithm_parser(
    choices: &'static [Algorithm],
) -> impl clap::builder::TypedValueParser<Value = Algorithm> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = choices
        .iter()
        .map(|a| PossibleValue::new(a.name()).help(a.about()));
    PossibleValuesParser::new(names).map(|name| name.parse::<Algorithm>().expect("a listed name"))
}

/// How a repetition of the path is scored.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum RepetitionRule {
    /// A draw, as the rules say.
    Draw,
    /// A win for the attacker (df-pn only; a stress test of disproofs).
    Attacker,
}

/// Entries the df-pn table keeps at most (the cheapest go when it is full).
const DFPN_TABLE: usize = 20_000_000;

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
    /// "mobility" (Allis) or "material" (mobility weighted by the material lead, after
    /// EF-PN).
    #[arg(long, value_name = "mobility|material")]
    pub init: Option<Init>,
    /// Threads of a solve run as a session (default: threads of the config).
    ///
    /// 2 searches both questions at once. A run in memory asks one question at a time.
    #[arg(long, value_parser = crate::cli::threads)]
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

/// With no target: a board whose proof takes about a second.
const DEFAULT_BOARD: &str = "7x3";

fn target(text: Option<&str>) -> Result<Position, Failure> {
    crate::cli::rules::target_position(text.unwrap_or(DEFAULT_BOARD))
}

/// The whole tables of `board` under `dir`, or the refusal that names what is missing (exit
/// 2: build it) or damaged (exit 1).
pub fn open_tables(dir: &Path, board: Board) -> Result<Database, Failure> {
    Database::open_whole(dir, board).map_err(|e| {
        if e.is_missing() {
            Failure::input(e)
        } else {
            Failure::other(e)
        }
    })
}

/// One goal searched, its proof extracted and re-checked; `verified` says whether it held.
struct Checked {
    result: SearchResult,
    verified: Option<bool>,
    certificate: Option<Result<Made, Failure>>,
}

/// Where a goal's certificate goes: the prefix and the tables' directory.
type CertificateTo<'p> = Option<(&'p Path, Option<&'p Path>)>;

/// The header keys a certificate from `solve` adds: the search that decided it.
fn certificate_extra(
    algo: Algorithm,
    result: &SearchResult,
) -> serde_json::Map<String, serde_json::Value> {
    fanorona::certificate::header_extra(
        json!({"algorithm": algo.name(), "nodes": result.stats.nodes, "seconds": result.stats.seconds}),
    )
}

fn search(
    pos: &Position,
    goal: Goal,
    leaf: LeafEval<'_>,
    args: &SolveArgs,
    db: Option<&Database>,
    certificate: CertificateTo<'_>,
) -> Checked {
    let limits = Limits {
        nodes: args.nodes,
        time: None,
        memory: args.memory,
    };
    let mut last = Instant::now();
    let progress = |p: &CurvePoint| {
        if last.elapsed().as_secs_f64() >= 1.0 {
            eprintln!(
                "  {goal}: iteration {}, {} nodes, root pn {} dn {}, {:.1} s",
                p.iteration, p.nodes, p.pn, p.dn, p.seconds
            );
            last = Instant::now();
        }
    };
    if args.algo == Algorithm::DfPn {
        let mut search = DfPn::new(goal, leaf, limits, DFPN_TABLE);
        search.repetition_wins = args.repetition == RepetitionRule::Attacker;
        let result = search.result(pos, progress);
        // The check and the certificate create positions of their own, not the search's.
        let (verified, certificate) = census::set_aside(|| {
            // The independent check: the solution tree, re-verified from the rules and tables.
            let verified = (result.outcome != Outcome::Unknown)
                .then(|| search.solution(pos).is_some_and(|t| check(&t, db).is_ok()));
            let certificate = certificate
                .filter(|_| result.outcome != Outcome::Unknown)
                .map(|(prefix, dir)| {
                    let solved = Solved {
                        root: *pos,
                        goal,
                        proves: result.outcome == Outcome::Proven,
                        db,
                        tree: None,
                        dfpn: Some(&mut search),
                    };
                    make(prefix, solved, certificate_extra(args.algo, &result), dir)
                });
            (verified, certificate)
        });
        return Checked {
            result,
            verified,
            certificate,
        };
    }
    let mut tree = PnTree::new(*pos, goal, leaf, Vec::new());
    if let Some(bound) = args.second_level {
        tree.second_level = bound;
    }
    if args.second_level_table > 0 {
        tree.second_level_table = args.second_level_table;
    }
    let curve = pn::run(&mut tree, args.algo, limits, progress);
    let result = tree.result(curve);
    // The check and the certificate create positions of their own, not the search's.
    let (verified, certificate) = census::set_aside(|| {
        // The independent check: the solution tree, re-verified from the rules and tables.
        let verified = (tree.outcome() != Outcome::Unknown).then(|| {
            extract(&tree, leaf)
                .map(|t| check(&t, db).is_ok())
                .unwrap_or(false)
        });
        let certificate = certificate.filter(|_| tree.decided()).map(|(prefix, dir)| {
            let solved = Solved {
                root: *pos,
                goal,
                proves: tree.outcome() == Outcome::Proven,
                db,
                tree: Some(&tree),
                dfpn: None,
            };
            make(prefix, solved, certificate_extra(args.algo, &result), dir)
        });
        (verified, certificate)
    });
    Checked {
        result,
        verified,
        certificate,
    }
}

pub fn solve(mut args: SolveArgs, config: &Config) -> CliResult {
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
    args.second_level = Some(config.second_level);
    args.second_level_table = fanorona::search::pn::second_level_entries(config.second_level_table);
    let config = &config;
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
    let default_db = config.db_dir.as_path();
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
        match crate::cli::session_solve::solve(&pos, &args, config)? {
            None => {}
            Some(()) => return Ok(()),
        }
    }
    // The tables, if any are built for this board; whole, or the solve refuses.
    let dir = args.db.clone().unwrap_or_else(|| default_db.to_path_buf());
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
    let leaf = LeafEval::new(db.as_ref()).with_init(config.init);
    // Whether every decided search's solution tree passed the check, and how many there were.
    let (mut verified, mut checked) = (true, 0);
    let mut certificates: Vec<Made> = Vec::new();
    let mut failure = None;
    let db_dir = db.as_ref().map(|_| dir.as_path());
    let mut solve_one = |p: &Position| -> Solution {
        // Certificates are written for the root's goals only.
        let to = args
            .certificate
            .as_deref()
            .filter(|_| *p == pos)
            .map(|prefix| (prefix, db_dir));
        let asked = args.goal.as_deref().map(|g| Goal {
            attacker: Color::from_name(g).unwrap_or(Color::Black),
        });
        one_or_both(p, asked, |goal| {
            let c = search(p, goal, leaf, &args, db.as_ref(), to);
            if let Some(ok) = c.verified {
                verified &= ok;
                checked += 1;
            }
            match c.certificate {
                Some(Ok(made)) => {
                    verified &= made.verified();
                    certificates.push(made);
                }
                Some(Err(e)) => failure = Some(e),
                None => {}
            }
            c.result
        })
    };
    let start = Instant::now();
    census::take();
    let solution = solve_one(&pos);
    let mut move_values = Vec::new();
    if args.moves {
        let moves = legal_moves(&pos);
        // Each move is a search of its own, some long: say which one is under way.
        let progress = if std::io::stderr().is_terminal() && !args.json {
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
            let child = m.apply(&pos);
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
    }
    let taken_census = args.census.then(census::take);
    // A win answers the loser's question too ("does the loser win?" is disproven) without
    // searching it; its certificate is filled in by the writer's own df-pn.
    if let (Some(prefix), Some(fanorona::search::Value::Win(winner))) =
        (args.certificate.as_deref(), solution.value)
    {
        let goal = Goal {
            attacker: winner.opponent(),
        };
        if !solution.searches.iter().any(|s| s.goal == goal) {
            let extra = fanorona::certificate::header_extra(
                json!({"algorithm": "dfpn", "note": format!("re-solved for the certificate: {winner} wins")}),
            );
            let solved = Solved {
                root: pos,
                goal,
                proves: false,
                db: db.as_ref(),
                tree: None,
                dfpn: None,
            };
            let made = make(prefix, solved, extra, db_dir)?;
            verified &= made.verified();
            certificates.push(made);
        }
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
    report.print(args.json);
    // The curve after the result: a failure here cannot hide the value.
    if let Some(path) = &args.curve {
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

/// The fixed workload of `fanorona bench solvers`: starts solved without tables.
const SOLVER_BENCH: [(&str, Algorithm); 4] = [
    ("3x7", Algorithm::Pn),
    ("7x3", Algorithm::Pn),
    ("3x7", Algorithm::Pn2),
    ("7x3", Algorithm::Pn2),
];

/// Runs the solver workload `repeat` times: nodes (a signature) and the median speed.
pub fn bench(repeat: usize, db: Option<&Path>, json: bool) -> CliResult {
    if let Some(dir) = db {
        return bench_with_tables(dir, repeat, json);
    }
    let cases = SOLVER_BENCH
        .iter()
        .map(|&(board, algorithm)| {
            let pos = Position::initial(board.parse().expect("bench boards are supported"));
            let name = algorithm.name();
            bench::Case {
                label: format!("{board} {name:<4}"),
                fields: json!({"board": board, "algorithm": name}),
                run: Box::new(move || {
                    game_value(&pos, |goal| {
                        pn::solve(
                            &pos,
                            goal,
                            LeafEval::rules_only(),
                            algorithm,
                            Limits::none(),
                            |_| {},
                        )
                    })
                    .nodes()
                }),
            }
        })
        .collect();
    bench::run(cases, repeat, 1, "nodes", json);
    Ok(())
}

/// Nodes per goal of the workload over tables.
const TABLE_BENCH_NODES: u64 = 10_000_000;

/// The second-level bound `scripts/solve-5x9.sh` gives its sessions while their trees hold
/// under 3 million nodes (`max(30000,tree/100)`; docs/journal/5x9.md, "The second level's bound"):
/// the bench's trees stay far below that.
const SESSION_BOUND_5X9: u64 = 30_000;

/// The solvers over endgame tables on both cores: from the 5x9 start, "White wins?" and
/// "Black wins?" searched at once (as a two-thread session does), each for a fixed number of
/// nodes, by PN² and by PN² with df-pn at the second level, bounded by the first-level
/// tree's size (the paper's) and by the 5x9 sessions' fixed bound, first numbers from
/// mobility and, last, from material.
fn bench_with_tables(dir: &Path, repeat: usize, json: bool) -> CliResult {
    let pos = Position::initial("5x9".parse().expect("5x9 is supported"));
    let db = open_tables(dir, pos.board())?;
    let db = &db;
    let cases = [
        (Algorithm::Pn2, SecondLevel::TreeSize, Init::Mobility),
        (Algorithm::Pn2DfPn, SecondLevel::TreeSize, Init::Mobility),
        (Algorithm::Pn2DfPn, SecondLevel::Fixed(SESSION_BOUND_5X9), Init::Mobility),
        (Algorithm::Pn2DfPn, SecondLevel::Fixed(SESSION_BOUND_5X9), Init::Material),
    ]
    .into_iter()
    .map(|(algorithm, bound, init)| {
            let name = algorithm.name();
            bench::Case {
                label: format!(
                    "5x9 {name:<7} second level {bound:<9} {:<8} tables, both goals",
                    init.name()
                ),
                fields: json!({"board": "5x9", "algorithm": name, "second_level": bound.to_string(), "init": init.name(), "tables": true, "goals": 2}),
                run: Box::new(move || {
                    let limits = Limits {
                        nodes: Some(TABLE_BENCH_NODES),
                        ..Limits::none()
                    };
                    std::thread::scope(|s| {
                        let goals = [Color::White, Color::Black].map(|attacker| {
                            s.spawn(move || {
                                let leaf = LeafEval::new(Some(db)).with_init(init);
                                let mut tree = PnTree::new(pos, Goal { attacker }, leaf, vec![]);
                                tree.second_level = bound;
                                pn::run(&mut tree, algorithm, limits, |_| {});
                                tree.stats.nodes
                            })
                        });
                        goals
                            .into_iter()
                            .map(|h| h.join().expect("a bench search does not panic"))
                            .sum()
                    })
                }),
            }
        })
        .collect();
    bench::run(cases, repeat, 2, "nodes", json);
    Ok(())
}
