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

use crate::Goal;
use fanorona_rules::position::{Color, Position};

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
    pub best_move: Option<fanorona_rules::moves::Move>,
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

/// What is known of one position with one repeatable past: two bits per attacker (White in
/// bits 0-1, Black in 2-3), 0 unknown, `WINS` or `HOLDS` (the attacker does not win). Best
/// moves stay in the store: a search needs only the verdicts, and a move kept here would make
/// each entry five times larger (millions of them, one copy per search, on 5x9).
type Slot = u8;

const WINS: u8 = 1;
const HOLDS: u8 = 2;

fn verdict(slot: Slot, attacker: Color) -> Option<bool> {
    match (slot >> (2 * side(attacker))) & 3 {
        WINS => Some(true),
        HOLDS => Some(false),
        _ => None,
    }
}

fn side(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// An in-memory rote table of verdicts: one lookup answers both attackers.
#[derive(Default, Debug, Clone)]
pub struct RoteTable {
    map: HashMap<(Position, u64), Slot, BuildHasherDefault<WordHasher>>,
    len: usize,
}

impl RoteTable {
    pub fn new() -> RoteTable {
        RoteTable::default()
    }

    /// Keeps `entry`'s verdict for `key` (its best move stays in the store).
    pub fn insert(&mut self, key: RoteKey, entry: RoteEntry) {
        let slot = self.map.entry((key.pos, key.history)).or_default();
        if verdict(*slot, key.attacker).is_none() {
            self.len += 1;
        }
        let shift = 2 * side(key.attacker);
        let v = if entry.proven { WINS } else { HOLDS };
        *slot = (*slot & !(3 << shift)) | v << shift;
    }

    /// The verdict kept for exactly `key` (`lookup` also infers one from the other attacker's).
    pub fn known(&self, key: &RoteKey) -> Option<bool> {
        verdict(*self.map.get(&(key.pos, key.history))?, key.attacker)
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
        let slot = *self.map.get(&(key.pos, key.history))?;
        if let Some(v) = verdict(slot, key.attacker) {
            return Some(v);
        }
        // A side that wins means the other side does not.
        match verdict(slot, key.attacker.opponent()) {
            Some(true) => Some(false),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_per_attacker_and_the_other_inferred() {
        let pos = Position::initial("3x5".parse().unwrap());
        let key = |history, attacker| RoteKey {
            pos,
            history,
            attacker,
        };
        let entry = |proven| RoteEntry {
            proven,
            best_move: None,
        };
        let mut t = RoteTable::new();
        assert_eq!(t.lookup(&key(0, Color::White)), None);
        t.insert(key(0, Color::White), entry(true));
        assert_eq!(t.known(&key(0, Color::White)), Some(true));
        assert_eq!(t.known(&key(0, Color::Black)), None);
        assert_eq!(
            t.lookup(&key(0, Color::Black)),
            Some(false),
            "White wins: Black does not"
        );
        assert_eq!(t.lookup(&key(1, Color::White)), None, "another past");
        t.insert(key(1, Color::Black), entry(false));
        assert_eq!(t.lookup(&key(1, Color::Black)), Some(false));
        assert_eq!(
            t.lookup(&key(1, Color::White)),
            None,
            "Black not winning says nothing of White"
        );
        t.insert(key(1, Color::White), entry(false));
        assert_eq!(t.known(&key(1, Color::White)), Some(false));
        assert_eq!(t.known(&key(1, Color::Black)), Some(false));
        // Written again: the count stays, the verdict is the new one.
        t.insert(key(1, Color::White), entry(true));
        assert_eq!(t.known(&key(1, Color::White)), Some(true));
        assert_eq!(t.known(&key(1, Color::Black)), Some(false));
        assert_eq!(t.len(), 3);
    }
}
