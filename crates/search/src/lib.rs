//! Proof search: one vocabulary for every solver (goal, proof and disproof numbers, outcome,
//! limits, statistics, result), and the solvers themselves.
//!
//! A solver answers one question: can the *attacker* force a win from this position? A draw
//! is two answers: White cannot force a win and Black cannot. `game_value` asks both.
//!
//! ```
//! use fanorona_rules::{Color, Position};
//! use fanorona_search::{Algorithm, Goal, LeafEval, Limits, Outcome, Value, game_value, pn};
//!
//! // The 3x5 start: White wins (the paper's Table 4).
//! let start = Position::initial("3x5".parse().unwrap());
//! let white = Goal { attacker: Color::White };
//! let rules = LeafEval::rules_only();
//! let result = pn::solve(&start, white, rules, Algorithm::Pn2, Limits::none(), |_| {});
//! assert_eq!(result.outcome, Outcome::Proven);
//!
//! // Both questions at once: a proof of one decides the value.
//! let solution = game_value(&start, |goal| {
//!     pn::solve(&start, goal, rules, Algorithm::Pn, Limits::none(), |_| {})
//! });
//! assert_eq!(solution.value, Some(Value::Win(Color::White)));
//! ```

pub mod algorithm;
pub mod alphabeta;
pub mod census;
pub mod config;
pub mod dfpn;
pub mod jobs;
pub mod leaf;
pub mod learned;
pub mod pn;
pub mod proof;
pub mod report;
pub mod rote;
pub mod second_level;
pub mod solution;
pub mod table_check;

use std::fmt;
use std::time::{Duration, Instant};

use fanorona_rules::moves::Move;
use fanorona_rules::position::{Color, Position};
use fanorona_tables::Wdl;

pub use algorithm::Algorithm;
pub use leaf::{Init, Leaf, LeafEval};
pub use second_level::SecondLevel;

/// Proof and disproof numbers: `INFINITE` marks a proven (pn 0, dn INFINITE) or disproven
/// (pn INFINITE, dn 0) node. Sums saturate below it.
pub const INFINITE: u64 = u64::MAX / 2;

/// A sum of numbers: infinite if either is, else at most one below infinity. A sum of finite
/// numbers must never reach INFINITE: a node would look decided (pn INFINITE, dn not 0)
/// without being so, and no threshold could make the search go on there.
#[inline]
pub fn add(a: u64, b: u64) -> u64 {
    if a >= INFINITE || b >= INFINITE {
        INFINITE
    } else {
        a.saturating_add(b).min(INFINITE - 1)
    }
}

/// A node's numbers from its children's: at an OR node (the attacker to move) pn = min and
/// dn = sum, at an AND node pn = sum and dn = min.
pub fn combine(or: bool, children: impl IntoIterator<Item = (u64, u64)>) -> (u64, u64) {
    let (mut min_pn, mut min_dn, mut sum_pn, mut sum_dn) = (INFINITE, INFINITE, 0, 0);
    for (pn, dn) in children {
        min_pn = min_pn.min(pn);
        min_dn = min_dn.min(dn);
        sum_pn = add(sum_pn, pn);
        sum_dn = add(sum_dn, dn);
    }
    if or {
        (min_pn, sum_dn)
    } else {
        (sum_pn, min_dn)
    }
}

/// The outcome a root's numbers say.
pub fn outcome_of(pn: u64, dn: u64) -> Outcome {
    if pn == 0 {
        Outcome::Proven
    } else if dn == 0 {
        Outcome::Disproven
    } else {
        Outcome::Unknown
    }
}

/// What a search tries to prove: that `attacker` wins.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Goal {
    pub attacker: Color,
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} wins", self.attacker)
    }
}

/// The answer to a goal. In a session's record and the daemon's answers: "proven",
/// "disproven", or "open" (not decided yet).
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The attacker can force a win.
    Proven,
    /// The attacker cannot: the defender at least draws.
    Disproven,
    /// The limits ran out first (a session's question still searched).
    #[serde(rename = "open")]
    Unknown,
}

impl Outcome {
    /// "proven", "disproven" or "open", as records, answers and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Proven => "proven",
            Outcome::Disproven => "disproven",
            Outcome::Unknown => "open",
        }
    }

    /// Whether the question is answered.
    pub fn decided(self) -> bool {
        self != Outcome::Unknown
    }
}

/// The game-theoretic value of a position under perfect play.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Value {
    Win(Color),
    Draw,
}

impl Value {
    /// "white", "black" (the winner) or "draw", as records and answers write it.
    pub fn name(self) -> &'static str {
        match self {
            Value::Win(Color::White) => "white",
            Value::Win(Color::Black) => "black",
            Value::Draw => "draw",
        }
    }

    /// The value `name` names, as `name` writes it.
    pub fn from_name(name: &str) -> Option<Value> {
        match name {
            "draw" => Some(Value::Draw),
            c => Color::from_name(c).map(Value::Win),
        }
    }

    /// This value as `side` sees it: a win, a draw or a loss. With `Value::of`, the one
    /// place an absolute value and a side-to-move result (`Wdl`, the tables' and the
    /// players' word) turn into each other.
    pub fn for_side(self, side: Color) -> Wdl {
        match self {
            Value::Win(c) if c == side => Wdl::Win,
            Value::Win(_) => Wdl::Loss,
            Value::Draw => Wdl::Draw,
        }
    }

    /// The value of a position where `side` has result `wdl`.
    pub fn of(wdl: Wdl, side: Color) -> Value {
        match wdl {
            Wdl::Win => Value::Win(side),
            Wdl::Draw => Value::Draw,
            Wdl::Loss => Value::Win(side.opponent()),
        }
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let name = String::deserialize(d)?;
        Value::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "value '{name}': expected \"white\", \"black\" or \"draw\""
            ))
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(c) => write!(f, "{c} wins"),
            Value::Draw => f.write_str("draw"),
        }
    }
}

/// A flag set from outside to stop a search, or a writer built on one, before its limits
/// (a daemon shutting down).
pub type Cancel = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// Whether `cancel` is given and set.
pub fn cancelled(cancel: Option<&Cancel>) -> bool {
    cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
}

/// How far a search may go.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Nodes created, at most.
    pub nodes: Option<u64>,
    /// Wall-clock time, at most.
    pub time: Option<Duration>,
    /// Bytes of the search's own structures (its tree or table), at most.
    pub memory: Option<u64>,
}

impl Limits {
    pub fn none() -> Limits {
        Limits::default()
    }

    /// Whether a search that started at `start`, created `nodes` and holds `bytes` in its
    /// tree or table must stop.
    pub fn exceeded(&self, nodes: u64, start: Instant, bytes: u64) -> bool {
        self.nodes.is_some_and(|n| nodes >= n)
            || self.memory.is_some_and(|m| bytes >= m)
            || self.time.is_some_and(|t| start.elapsed() >= t)
    }
}

/// The work a search did, counted as the paper counts it: nodes created (second-level nodes
/// included), plus what explains them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Nodes created: every position an expansion generates and evaluates, at every level,
    /// table and terminal leaves included, but not children that repeat their path (those
    /// are counted in `repetitions`). df-pn counts a position when it enters its table
    /// (again if the table had dropped it); PN and PN² when a child is generated.
    pub nodes: u64,
    /// Expansions (first-level iterations for PN²).
    pub iterations: u64,
    /// Leaves decided by the endgame tables (counted among `nodes` too).
    pub db_hits: u64,
    /// Children that repeat a position of their path (a draw there); not among `nodes`.
    /// df-pn meets the same repetition each time it expands its parent, and counts each.
    pub repetitions: u64,
    /// Positions decided by the rote store instead of a search.
    pub rote_hits: u64,
    pub seconds: f64,
}

impl Stats {
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }
}

/// One point of the root's curve: the root's numbers after a (first-level) iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    pub iteration: u64,
    pub nodes: u64,
    pub seconds: f64,
    pub pn: u64,
    pub dn: u64,
}

/// What a solver returns for one goal.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub goal: Goal,
    pub outcome: Outcome,
    /// For a proven goal with the attacker to move: a winning move. For a disproven goal
    /// with the defender to move: a move that keeps the attacker from winning.
    pub best_move: Option<Move>,
    pub stats: Stats,
    pub curve: Vec<CurvePoint>,
}

/// The answer to "what is this position worth": both goals as needed.
#[derive(Clone, Debug)]
pub struct Solution {
    pub position: Position,
    /// `None` when the limits ran out before both questions were answered.
    pub value: Option<Value>,
    pub searches: Vec<SearchResult>,
}

impl Solution {
    pub fn nodes(&self) -> u64 {
        self.searches.iter().map(|s| s.stats.nodes).sum()
    }

    pub fn seconds(&self) -> f64 {
        self.searches.iter().map(|s| s.stats.seconds).sum()
    }

    /// A best move for the side to move, if the answering search found one: a winning
    /// move for a winner, a drawing move for a side that can draw.
    pub fn best_move(&self) -> Option<Move> {
        let mover = self.position.side_to_move();
        self.searches
            .iter()
            .find(|s| match s.outcome {
                Outcome::Proven => s.goal.attacker == mover,
                Outcome::Disproven => s.goal.attacker != mover,
                Outcome::Unknown => false,
            })
            .and_then(|s| s.best_move)
    }
}

/// Solves `pos` by asking `search` whether the side to move wins, and if not, whether the
/// other side does. The side to move is asked first: in most positions it is the likelier
/// winner, and a proof there ends the work.
pub fn game_value<F>(pos: &Position, mut search: F) -> Solution
where
    F: FnMut(Goal) -> SearchResult,
{
    let mover = pos.side_to_move();
    let first = search(Goal { attacker: mover });
    let mut searches = vec![first];
    let value = match searches[0].outcome {
        Outcome::Proven => Some(Value::Win(mover)),
        Outcome::Unknown => None,
        Outcome::Disproven => {
            let second = search(Goal {
                attacker: mover.opponent(),
            });
            let v = match second.outcome {
                Outcome::Proven => Some(Value::Win(mover.opponent())),
                Outcome::Disproven => Some(Value::Draw),
                Outcome::Unknown => None,
            };
            searches.push(second);
            v
        }
    };
    Solution {
        position: *pos,
        value,
        searches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_and_a_sides_result_turn_into_each_other() {
        let (w, b) = (Color::White, Color::Black);
        assert_eq!(Value::Win(w).for_side(w), Wdl::Win);
        assert_eq!(Value::Win(w).for_side(b), Wdl::Loss);
        assert_eq!(Value::Draw.for_side(b), Wdl::Draw);
        assert_eq!(Value::of(Wdl::Loss, b), Value::Win(w));
        for v in [Value::Win(w), Value::Win(b), Value::Draw] {
            for side in [w, b] {
                assert_eq!(Value::of(v.for_side(side), side), v);
                assert_eq!(v.for_side(side.opponent()), v.for_side(side).flipped());
            }
        }
    }
}
