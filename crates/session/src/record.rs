//! A session: what is being solved, how, and how far it got.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use fanorona_rules::Board;
use fanorona_rules::position::Color;
pub use fanorona_search::SecondLevel;
use fanorona_search::learned::{Model, WeightsError};
use fanorona_search::{Algorithm, Init, LeafEval, Outcome, Value};
use fanorona_tables::Database;

/// Where a session stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// To be worked on (the daemon runs running sessions one at a time, oldest first).
    Running,
    /// Put aside by the user; `resume` continues it.
    Paused,
    /// Ended by the user before it was solved; `resume` continues it.
    Stopped,
    /// Both questions answered: `value` holds the result.
    Solved,
    /// The search cannot go on (its tables are missing, say): `error` says why.
    Failed,
    /// Its records cannot be read (a file of the store damaged): `error` says which, and
    /// what to do. The daemon puts it back from the newest backup that holds it whole.
    Damaged,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Paused => "paused",
            State::Stopped => "stopped",
            State::Solved => "solved",
            State::Failed => "failed",
            State::Damaged => "damaged",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a session is solved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// PN or PN² (an algorithm with a first-level tree to keep).
    pub algo: Algorithm,
    /// Endgame tables for the leaves; none for the smallest boards.
    pub db_dir: Option<PathBuf>,
    pub second_level: SecondLevel,
    /// How new leaves get their first numbers. (Records written before this key: mobility.)
    #[serde(default)]
    pub init: Init,
    /// With `init` learned: weights of the config's `weights` file instead of the built-in
    /// ones. (Records written before this key: the built-in weights.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<crate::weights::Weights>,
    /// Checkpoint at least this often, in milliseconds.
    pub checkpoint_ms: u64,
    /// Re-check each decided goal's proof independently.
    pub verify: bool,
    /// 2: both questions ("does White win?", "does Black win?") searched at once; 1: one
    /// after the other. (Records of format 1 written before this key mean 1.)
    #[serde(default = "one")]
    pub threads: usize,
    /// With PN² and df-pn, two threads and one question left: expand two first-level leaves
    /// at a time (see `pn::iterate_pair`). Off unless asked for: it has not paid yet.
    #[serde(default)]
    pub pairs: bool,
}

fn one() -> usize {
    1
}

impl Settings {
    /// The session's own weights where its first numbers are learned (`None` for the
    /// built-in weights and for the other inits, which keep any weights a tune put aside).
    pub fn own_weights(&self) -> Option<&crate::weights::Weights> {
        self.weights.as_ref().filter(|_| self.init == Init::Learned)
    }

    /// The model of the session's learned first numbers when they are not the built-in
    /// weights' (`None` for the built-in ones and for the other inits).
    pub fn model(&self, board: Board) -> Result<Option<Model>, WeightsError> {
        self.own_weights().map(|w| w.model(board)).transpose()
    }

    /// The session's leaves: decided by the rules and `db`, first numbers by its init (with
    /// `model`, from `model`, when it has one).
    pub fn leaf<'a>(&self, db: Option<&'a Database>, model: Option<&'a Model>) -> LeafEval<'a> {
        LeafEval::new(db).with_first_numbers(self.init, model)
    }

    /// Why the session's first numbers cannot run on `board`, if they cannot: learned ones
    /// with neither the session's weights nor built-in ones for the board.
    pub fn refused_on(&self, board: Board) -> Option<String> {
        match self.own_weights() {
            Some(_) => None,
            None => self.init.refused_on(board),
        }
    }
}

/// One question ("does this side win?") and how far its search got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalRecord {
    /// Whose win is asked ("white" or "black" in the record).
    pub attacker: Color,
    /// "proven", "disproven" or "open" in the record.
    pub outcome: Outcome,
    pub nodes: u64,
    pub iterations: u64,
    pub seconds: f64,
    pub db_hits: u64,
    pub rote_hits: u64,
    pub repetitions: u64,
    /// Nodes in the first-level tree.
    pub first_level: u64,
    /// Whether the decided proof passed the independent check (None: not checked).
    pub verified: Option<bool>,
    /// Leaves of that proof taken from the rote store instead of proved again.
    #[serde(default)]
    pub rote_leaves: u64,
    /// Leaves of the kept first-level tree decided by second-level searches, taken as given
    /// by the first check; the certificate re-solves them.
    #[serde(default)]
    pub second_level_leaves: u64,
    /// Whether the certificate (written when the session was solved, every leaf re-solved
    /// down to the rules and the tables) passed the checker; `None` until it is written.
    #[serde(default)]
    pub certificate_verified: Option<bool>,
    /// The iterations at which a run of this question went on from a checkpoint (after a
    /// restart, a crash or a pause): the curve marks them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_at: Vec<u64>,
}

impl GoalRecord {
    /// The question whether `attacker` wins, not searched yet.
    pub fn open(attacker: Color) -> GoalRecord {
        GoalRecord {
            attacker,
            outcome: Outcome::Unknown,
            nodes: 0,
            iterations: 0,
            seconds: 0.0,
            db_hits: 0,
            rote_hits: 0,
            repetitions: 0,
            first_level: 0,
            verified: None,
            rote_leaves: 0,
            second_level_leaves: 0,
            certificate_verified: None,
            resumed_at: Vec::new(),
        }
    }

    /// The question it asks.
    pub fn goal(&self) -> fanorona_search::Goal {
        fanorona_search::Goal {
            attacker: self.attacker,
        }
    }
}

/// A session as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: u64,
    pub name: String,
    /// The root position, in the position text format.
    pub root: String,
    pub settings: Settings,
    pub state: State,
    /// Once solved ("white", "black" or "draw" in the record).
    pub value: Option<Value>,
    /// Why the session failed, if it did.
    pub error: Option<String>,
    /// The questions asked so far; the last is the one being searched until solved.
    pub goals: Vec<GoalRecord>,
    pub checkpoints: u64,
    /// Seconds since the Unix epoch.
    pub created: u64,
}

impl SessionRecord {
    /// Work over all goals: nodes, seconds, rote hits.
    pub fn totals(&self) -> (u64, f64, u64) {
        self.goals.iter().fold((0, 0.0, 0), |(n, s, r), g| {
            (n + g.nodes, s + g.seconds, r + g.rote_hits)
        })
    }
}
