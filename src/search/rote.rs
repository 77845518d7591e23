//! Rote learning: positions already solved, looked up before a search expands them.
//!
//! A value found for a position may depend on its path, because a repeated position is a
//! draw. It can only repeat positions since the last capture, so an entry is keyed by the
//! position and the (order-free hash of the) positions since the last capture before it:
//! the same key means the same future and the same repeatable past, so the entry holds for
//! every path that reaches it. Right after a capture that set is empty, so an entry made
//! there is shared by every path. (The set is a 64-bit hash: exact up to a collision, and
//! every proof is still re-checked independently.)

use std::collections::HashMap;

use crate::position::{Color, Position};
use crate::search::Goal;

/// Which position, with which repeatable past, for which attacker.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RoteKey {
    pub pos: Position,
    /// Hash of the positions since the last capture before `pos` (0 right after a capture).
    pub history: u64,
    pub attacker: Color,
}

/// What a search learned about a key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RoteEntry {
    /// The attacker wins (true) or does not (false).
    pub proven: bool,
    /// The move that decides it for the side to move, if the search kept it: a winning
    /// move when the attacker is to move and wins, a holding move when the defender is.
    pub best_move: Option<crate::moves::Move>,
}

/// The solved positions a search may consult.
pub trait Rote {
    /// Whether the attacker of `key` is known to win (`Some(true)`) or not (`Some(false)`).
    fn lookup(&self, key: &RoteKey) -> Option<bool>;
}

/// An in-memory rote table.
#[derive(Default, Debug)]
pub struct RoteTable {
    map: HashMap<RoteKey, RoteEntry>,
}

impl RoteTable {
    pub fn new() -> RoteTable {
        RoteTable::default()
    }

    pub fn insert(&mut self, key: RoteKey, entry: RoteEntry) {
        self.map.insert(key, entry);
    }

    pub fn get(&self, key: &RoteKey) -> Option<&RoteEntry> {
        self.map.get(key)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&RoteKey, &RoteEntry)> {
        self.map.iter()
    }
}

impl Rote for RoteTable {
    fn lookup(&self, key: &RoteKey) -> Option<bool> {
        if let Some(e) = self.map.get(key) {
            return Some(e.proven);
        }
        // A side that wins means the other side does not.
        let other = RoteKey {
            attacker: key.attacker.opponent(),
            ..*key
        };
        match self.map.get(&other) {
            Some(e) if e.proven => Some(false),
            _ => None,
        }
    }
}

/// A table the session can add to between searches while a tree holds it.
impl Rote for std::cell::RefCell<RoteTable> {
    fn lookup(&self, key: &RoteKey) -> Option<bool> {
        self.borrow().lookup(key)
    }
}

impl RoteKey {
    pub fn new(pos: Position, history: u64, goal: Goal) -> RoteKey {
        RoteKey {
            pos,
            history,
            attacker: goal.attacker,
        }
    }
}
