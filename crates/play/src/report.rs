//! What `match` and `stats` answer with `--json`: typed, so that the command line only fills
//! and prints them.

use fanorona_rules::{Board, Position};
use serde::{Deserialize, Serialize};

use crate::arena::Summary;
use crate::stats::CutRow;

/// `match --json`: the score of A against B, with what was asked and how long it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchPlayed {
    /// The players, as named (`KIND:LEVEL`).
    pub a: String,
    pub b: String,
    pub board: Board,
    /// The first start (the only one without `--starts`).
    pub start: Position,
    pub starts: usize,
    #[serde(flatten)]
    pub score: Summary,
    pub mean_plies: f64,
    pub a_seconds_per_move: f64,
    pub b_seconds_per_move: f64,
    pub seconds: f64,
    pub threads: usize,
    pub seed: u64,
    /// Games asked for: more than `games` when the match was interrupted.
    pub games_asked: usize,
    pub interrupted: bool,
    /// A's and B's moves by where they came from (certificate, tables, win, fallback), for
    /// players that say (the proof player); absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_moves_from: Option<MovesFrom>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_moves_from: Option<MovesFrom>,
}

/// A player's moves over a match by where they came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovesFrom {
    pub certificate: u64,
    pub tables: u64,
    pub win: u64,
    pub fallback: u64,
}

impl MovesFrom {
    /// The sum of the games' counts (`MoveFrom::index` order); `None` if the player never
    /// said where a move came from.
    pub fn total<'a>(games: impl IntoIterator<Item = &'a [u32; 4]>) -> Option<MovesFrom> {
        let mut n = [0u64; 4];
        for g in games {
            for (t, x) in n.iter_mut().zip(g) {
                *t += u64::from(*x);
            }
        }
        (n.iter().sum::<u64>() > 0).then_some(MovesFrom {
            certificate: n[0],
            tables: n[1],
            win: n[2],
            fallback: n[3],
        })
    }
}

impl std::fmt::Display for MovesFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} from certificates, {} from the tables, {} wins found, {} fallback",
            self.certificate, self.tables, self.win, self.fallback
        )
    }
}

/// `stats --json`: the game measured as the paper's Section 3 (game length, branching), and
/// with each virtual database.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GamesMeasured {
    pub board: Board,
    pub games: usize,
    pub draws: usize,
    pub depth: u32,
    pub noise: f64,
    pub seed: u64,
    pub mean_length: f64,
    pub mean_branching: f64,
    /// The paper's figures, on 5x9 (null elsewhere: it measured 5x9 only).
    pub paper: Option<PaperMeans>,
    /// The averages had a database of so many pieces ended the games (2 to 10 pieces).
    pub virtual_databases: Vec<CutRow>,
    pub seconds: f64,
    pub games_asked: usize,
    pub interrupted: bool,
}

/// The paper's mean game length and branching factor.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaperMeans {
    pub mean_length: f64,
    pub mean_branching: f64,
}
