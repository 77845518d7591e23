//! `fanorona bench agents`: the players' speed. Alpha-beta nodes a second (6 plies from
//! the 5x9 start and two positions after it), MCTS playouts a second (20,000 from the same
//! positions), and with --db DIR perfect play's moves from 7-piece 5x9 table positions.

use std::path::Path;

use crate::cli::bench::harness as bench;
use crate::cli::output::CliResult;
use fanorona::play::alphabeta::{AlphaBeta, Settings};
use fanorona::play::mcts::{self, Mcts};
use fanorona::play::{Agent, Game, Tools, make};
use fanorona::{Board, Position};

/// The 5x9 start and the positions after d3-e3A and after f2-e3A.
fn positions() -> Vec<Position> {
    let start = Position::initial(Board::STANDARD);
    let mut out = vec![start];
    for m in ["d3-e3A", "f2-e3A"] {
        let mut g = Game::new(start, None);
        g.play_text(m).expect("an opening move of 5x9");
        out.push(*g.position());
    }
    out
}

/// Drawn 4-against-3 positions of the 5x9 tables (from scripts/players-report.sh).
const TABLE_POSITIONS: [&str; 4] = [
    "...BWW.../......W../........W/B.......B/......... w",
    "........./........./..W....../W.B....W./.B..B..W. b",
    "....B..B./........./W..W...../.W...B.../..W...... b",
    "...BW..../........W/.B......./...W...../B.....W.. b",
];

/// A case of the players' workload: which player, and the work it is given.
#[derive(serde::Serialize)]
#[serde(tag = "player", rename_all = "lowercase")]
enum PlayerCase {
    Alphabeta { depth: u32 },
    Mcts { playouts: u32 },
    Perfect { positions: usize },
}

pub fn bench(repeat: usize, db: Option<&Path>, json: bool) -> CliResult {
    let games: Vec<Game> = positions()
        .into_iter()
        .map(|p| Game::new(p, None))
        .collect();
    let games = &games;
    let alphabeta = bench::Case {
        label: "alpha-beta 5x9, 6 plies, 3 positions".into(),
        fields: PlayerCase::Alphabeta { depth: 6 },
        run: Box::new(move || {
            let mut ab = AlphaBeta::new(
                Settings {
                    depth: 6,
                    time: None,
                    prune: true,
                    noise: 0.0,
                    material_only: false,
                },
                1,
            );
            for g in games {
                ab.choose(g);
            }
            ab.nodes()
        }),
    };
    bench::run(vec![alphabeta], repeat, 1, "nodes", json)?;
    let mcts = bench::Case {
        label: "MCTS 5x9, 20000 playouts, 3 positions".into(),
        fields: PlayerCase::Mcts { playouts: 20_000 },
        run: Box::new(move || {
            let mut m = Mcts::new(
                mcts::Settings {
                    playouts: 20_000,
                    time: None,
                    c: mcts::DEFAULT_C,
                    rollout: mcts::Rollout::Captures,
                },
                1,
            );
            for g in games {
                m.choose(g);
            }
            m.playouts()
        }),
    };
    bench::run(vec![mcts], repeat, 1, "playouts", json)?;
    if let Some(dir) = db {
        let tables = std::sync::Arc::new(crate::cli::args::open_tables(dir, Board::STANDARD)?);
        let tools = Tools {
            db: Some(tables),
            ..Tools::default()
        };
        let tools = &tools;
        let perfect = bench::Case {
            label: "perfect play 5x9, 7-piece table positions".into(),
            fields: PlayerCase::Perfect {
                positions: TABLE_POSITIONS.len(),
            },
            run: Box::new(move || {
                let mut p = make("perfect".parse().expect("a player"), tools);
                for text in TABLE_POSITIONS {
                    let pos: Position = text.parse().expect("a 5x9 position");
                    p.choose(&Game::new(pos, None));
                }
                TABLE_POSITIONS.len() as u64
            }),
        };
        bench::run(vec![perfect], repeat, 1, "moves", json)?;
    }
    Ok(())
}
