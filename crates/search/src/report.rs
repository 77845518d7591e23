//! What `solve --json` answers: typed, so that the command line only fills and prints it.

use fanorona_rules::position::Position;
use fanorona_tables::index::Material;
use serde::{Deserialize, Serialize};

use crate::census;

/// `solve --json`: a position's value, a best move, each question searched and the work.
///
/// Generic over a certificate's summary (`C`): certificates are written by a later layer
/// (`fanorona-certificate`), which this one cannot name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionSolved<C> {
    pub position: Position,
    /// "white", "black", "draw" or "unknown".
    pub value: String,
    pub best_move: Option<String>,
    /// Nodes of every question searched.
    pub nodes: u64,
    /// Nodes of the questions the value rests on: the same on every run.
    pub deciding_nodes: u64,
    /// Positions the rote store answered (null outside a session).
    pub rote_hits: Option<u64>,
    pub seconds: f64,
    /// The proofs the value rests on passed the independent check.
    pub verified: bool,
    pub algorithm: String,
    /// The tables' directory, when tables were read.
    pub database: Option<String>,
    /// The session it ran as (null in memory), and whether that was solved before.
    pub session: Option<u64>,
    pub solved_before: bool,
    pub searches: Vec<QuestionSearched>,
    pub certificates: Vec<C>,
    /// With `--census` only (the key is absent without it): positions created, by the pieces
    /// of the position expanded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub census: Option<Vec<CensusRow>>,
    /// With `--moves` only (absent without it): each move and the value after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<MoveValue>>,
}

/// One question of a solve ("does White win?") and the search that answered it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionSearched {
    /// "white wins" or "black wins".
    pub goal: String,
    /// "proven", "disproven" or "open".
    pub outcome: String,
    /// The value rests on this answer (another was only searched on the way, or halted).
    pub decides: bool,
    pub nodes: u64,
    pub iterations: u64,
    /// Nodes of the first-level tree (PN² as a session).
    pub first_level: Option<u64>,
    pub db_hits: u64,
    /// Positions the rote store answered (sessions only).
    pub rote_hits: Option<u64>,
    pub repetitions: u64,
    pub seconds: f64,
}

/// A row of `solve --census`: positions created by expanding one of `pieces` pieces, by the
/// pair of tables they belong to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusRow {
    pub pieces: u32,
    pub created: u64,
    pub pairs: Vec<PairCreated>,
}

/// Positions created in one pair of tables (named by its material with `a >= b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCreated {
    pub pair: Material,
    pub created: u64,
}

impl From<&census::Row> for CensusRow {
    fn from(r: &census::Row) -> CensusRow {
        CensusRow {
            pieces: r.pieces,
            created: r.created,
            pairs: r
                .pairs
                .iter()
                .map(|&(pair, created)| PairCreated { pair, created })
                .collect(),
        }
    }
}

/// A move of `solve --moves` and the value of the position after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveValue {
    #[serde(rename = "move")]
    pub mv: String,
    /// "white", "black", "draw" or "unknown".
    pub value: String,
}
