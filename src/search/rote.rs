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
use std::hash::{BuildHasherDefault, Hasher};

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

/// A fast hasher for keys that are already well-mixed bit patterns (positions, hashes):
/// one multiply-rotate per word instead of SipHash, since a lookup happens at every node.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(23) ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// What is known of one position with one repeatable past, per attacker (White, Black).
type Slot = [Option<RoteEntry>; 2];

fn side(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// An in-memory rote table: one lookup answers both attackers.
#[derive(Default, Debug, Clone)]
pub struct RoteTable {
    map: HashMap<(Position, u64), Slot, BuildHasherDefault<WordHasher>>,
    len: usize,
}

impl RoteTable {
    pub fn new() -> RoteTable {
        RoteTable::default()
    }

    pub fn insert(&mut self, key: RoteKey, entry: RoteEntry) {
        let slot = &mut self.map.entry((key.pos, key.history)).or_default()[side(key.attacker)];
        if slot.is_none() {
            self.len += 1;
        }
        *slot = Some(entry);
    }

    pub fn get(&self, key: &RoteKey) -> Option<&RoteEntry> {
        self.map.get(&(key.pos, key.history))?[side(key.attacker)].as_ref()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Rote for RoteTable {
    fn lookup(&self, key: &RoteKey) -> Option<bool> {
        if self.map.is_empty() {
            return None;
        }
        let slot = self.map.get(&(key.pos, key.history))?;
        if let Some(e) = &slot[side(key.attacker)] {
            return Some(e.proven);
        }
        // A side that wins means the other side does not.
        match &slot[side(key.attacker.opponent())] {
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
