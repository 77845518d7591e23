//! df-pn's transposition table, bounded, with a replacement policy that keeps expensive
//! entries: SmallTreeGC (Nagai, "Df-pn algorithm for searching AND/OR trees and its
//! applications", PhD thesis, University of Tokyo, 2002, section 4.4). Each entry counts the
//! nodes its searches created below it; when the table is full, the entries with the
//! smallest counts go, about half of them, so the proofs and disproofs that cost the most to
//! find stay however long the search runs. (Dropping everything, or refusing new entries,
//! makes a long search re-find the same subtrees over and over.)

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

use crate::search::rote::WordHasher;

/// An entry: the numbers a search left and the nodes its searches created below it.
#[derive(Clone, Copy, Debug)]
struct Slot<V> {
    value: V,
    work: u64,
}

/// A map from keys to values of at most `capacity` entries, the cheapest dropped when full.
pub struct Table<K, V> {
    map: HashMap<K, Slot<V>, BuildHasherDefault<WordHasher>>,
    capacity: usize,
    /// Collections so far, and the entries they dropped (for reports and tests).
    pub collections: u64,
    pub dropped: u64,
}

impl<K: Hash + Eq + Copy, V: Copy> Table<K, V> {
    /// An empty table that will hold at most `capacity` entries (at least 2).
    pub fn new(capacity: usize) -> Table<K, V> {
        Table {
            map: HashMap::default(),
            capacity: capacity.max(2),
            collections: 0,
            dropped: 0,
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        self.map.get(key).map(|s| s.value)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes the entries take, with about as much again of hash-map overhead.
    pub fn bytes(&self) -> u64 {
        (self.map.capacity() * 2 * std::mem::size_of::<(K, Slot<V>)>()) as u64
    }

    /// Sets `key` to `value`, adding `work` to the nodes counted below it; a full table
    /// first drops its cheapest entries.
    pub fn store(&mut self, key: K, value: V, work: u64) {
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            self.collect();
        }
        self.map
            .entry(key)
            .and_modify(|s| {
                s.value = value;
                s.work = s.work.saturating_add(work);
            })
            .or_insert(Slot { value, work });
    }

    /// Drops the entries with the smallest work until at most half the capacity is left:
    /// whole classes of work by powers of two (cheap to find, and no entry is kept over one
    /// that cost more).
    pub fn collect(&mut self) {
        let class = |w: u64| 64 - w.leading_zeros() as usize;
        let mut counts = [0usize; 65];
        for s in self.map.values() {
            counts[class(s.work)] += 1;
        }
        // The smallest class from which on the entries fit in half the table.
        let keep = self.capacity / 2;
        let mut kept = 0;
        let mut from = 65;
        while from > 0 && kept + counts[from - 1] <= keep {
            from -= 1;
            kept += counts[from];
        }
        let before = self.map.len();
        self.map.retain(|_, s| class(s.work) >= from);
        self.collections += 1;
        self.dropped += (before - self.map.len()) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_keeps_the_most_expensive_entries() {
        let mut t: Table<u64, u64> = Table::new(8);
        // Work 1, 2, 3, ..., 8: classes 1, 2, 2, 3, 3, 3, 3, 4.
        for k in 1..=8u64 {
            t.store(k, k * 10, k);
        }
        assert_eq!(t.len(), 8);
        assert_eq!(t.collections, 0);
        // The ninth key makes room: at most 4 kept, the costliest (4..=8 are 5 entries,
        // so only the classes above 3 fit: key 8 alone).
        t.store(9, 90, 1);
        assert_eq!(t.collections, 1);
        assert_eq!(t.get(&8), Some(80));
        for k in 1..=7 {
            assert_eq!(t.get(&k), None, "key {k}");
        }
        assert_eq!(t.get(&9), Some(90));
        assert_eq!(t.dropped, 7);
    }

    #[test]
    fn storing_again_adds_the_work_and_replaces_the_value() {
        let mut t: Table<u64, u64> = Table::new(4);
        t.store(1, 5, 1);
        t.store(1, 6, 100);
        for k in 2..=4 {
            t.store(k, 0, 3);
        }
        // Full: key 1 has work 101, the others 3; a new key drops those three.
        t.store(5, 0, 1);
        assert_eq!(t.get(&1), Some(6));
        assert_eq!(t.len(), 2);
        // Updating a key the table holds never collects.
        t.store(5, 7, 1);
        assert_eq!(t.collections, 1);
    }

    #[test]
    fn it_never_holds_more_than_its_capacity() {
        let mut t: Table<u64, ()> = Table::new(1000);
        for k in 0..100_000u64 {
            t.store(k, (), k % 17 + 1);
            assert!(t.len() <= 1000);
        }
        assert!(t.collections > 0);
    }
}
