//! Leaves: what a solver knows about a position without searching it: the end of the game
//! (a side with no pieces or no move has lost) and the endgame tables.

use crate::egdb::{Database, Wdl};
use crate::movegen::is_lost;
use crate::position::Position;
use crate::search::{Goal, Stats};

/// A leaf's verdict for a goal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Leaf {
    /// The attacker wins from here.
    Proven,
    /// The attacker does not win from here.
    Disproven,
    /// Not known without searching.
    Open,
}

/// Decides leaves from the rules' terminal positions and, if given, the endgame tables.
#[derive(Clone, Copy)]
pub struct LeafEval<'a> {
    pub db: Option<&'a Database>,
}

impl<'a> LeafEval<'a> {
    /// Leaves from the rules alone (the smallest boards need nothing more).
    pub fn rules_only() -> LeafEval<'static> {
        LeafEval { db: None }
    }

    pub fn with_db(db: &'a Database) -> LeafEval<'a> {
        LeafEval { db: Some(db) }
    }

    /// The verdict on `pos` for `goal`.
    pub fn eval(&self, pos: &Position, goal: Goal, stats: &mut Stats) -> Leaf {
        let mover_is_attacker = pos.side_to_move() == goal.attacker;
        if let Some(db) = self.db
            && let Some(v) = db.probe(pos)
        {
            stats.db_hits += 1;
            return match (v, mover_is_attacker) {
                (Wdl::Win, true) | (Wdl::Loss, false) => Leaf::Proven,
                _ => Leaf::Disproven,
            };
        }
        if is_lost(pos) {
            return if mover_is_attacker {
                Leaf::Disproven
            } else {
                Leaf::Proven
            };
        }
        Leaf::Open
    }
}
