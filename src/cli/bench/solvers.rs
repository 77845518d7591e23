//! `fanorona bench solvers`: the proof-number solvers on fixed searches, without tables
//! (a node-count signature) or over the 5x9 tables on both cores.

use std::path::Path;

use crate::cli::args::open_tables;
use crate::cli::bench::harness as bench;
use crate::cli::output::CliResult;
use fanorona::Color;
use fanorona::Position;
use fanorona::search::pn::{self, PnTree};
use fanorona::search::{Algorithm, Goal, Init, LeafEval, Limits, game_value};
use fanorona::session::SecondLevel;

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
                fields: SolverCase {
                    board,
                    algorithm: name,
                },
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
    bench::run(cases, repeat, 1, "nodes", json)
}

/// A case of the solver workload: a board's start solved by an algorithm, both questions.
#[derive(serde::Serialize)]
struct SolverCase {
    board: &'static str,
    algorithm: &'static str,
}

/// A case of the solver workload over tables: both questions of the 5x9 start over the
/// tables, a fixed number of nodes each, with a second-level bound and first numbers.
#[derive(serde::Serialize)]
struct SolverOverTablesCase {
    board: &'static str,
    algorithm: &'static str,
    second_level: String,
    init: &'static str,
    tables: bool,
    goals: u32,
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
        (
            Algorithm::Pn2DfPn,
            SecondLevel::Fixed(SESSION_BOUND_5X9),
            Init::Mobility,
        ),
        (
            Algorithm::Pn2DfPn,
            SecondLevel::Fixed(SESSION_BOUND_5X9),
            Init::Material,
        ),
    ]
    .into_iter()
    .map(|(algorithm, bound, init)| {
        let name = algorithm.name();
        bench::Case {
            label: format!(
                "5x9 {name:<7} second level {bound:<9} {:<8} tables, both goals",
                init.name()
            ),
            fields: SolverOverTablesCase {
                board: "5x9",
                algorithm: name,
                second_level: bound.to_string(),
                init: init.name(),
                tables: true,
                goals: 2,
            },
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
    bench::run(cases, repeat, 2, "nodes", json)
}
