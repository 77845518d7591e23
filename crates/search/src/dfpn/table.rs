//! df-pn's transposition table, bounded, with a replacement policy that keeps expensive
//! entries: SmallTreeGC (Nagai, "Df-pn algorithm for searching AND/OR trees and its
//! applications", PhD thesis, University of Tokyo, 2002, section 4.4). Each entry counts the
//! nodes its searches created below it; when the table is full, the entries with the
//! smallest counts go, about half of them, so the proofs and disproofs that cost the most to
//! find stay however long the search runs. (Dropping everything, or refusing new entries,
//! makes a long search re-find the same subtrees over and over.)
//!
//! Why not a hash map: a long second-level search spent most of its time waiting for memory,
//! one miss for the map's control bytes and one for the entry. Here an entry is one cache
//! line holding its key, found by linear probing from its home slot (the table at most three
//! quarters full, so a probe is short), and `prefetch` starts loading a key's home so that a
//! node asks for all its children's at once before it reads them. Which entries are kept is
//! exactly what a map with the same bound kept: every new entry goes in, and a full table
//! drops its cheapest half.

use std::hash::{BuildHasher, BuildHasherDefault, Hash};

use crate::rote::WordHasher;

/// Slots of a new table (it doubles from here as it fills).
const FIRST_SLOTS: usize = 1024;

/// An entry: the key, the numbers a search left, and the nodes its searches created below it.
#[derive(Clone, Copy, Debug)]
struct Entry<K, V> {
    key: K,
    value: V,
    work: u64,
}

/// One cache line: an entry or nothing.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Slot<K, V>(Option<Entry<K, V>>);

/// Slots for `entries` at most three quarters full: a power of two.
fn slots_for(entries: usize) -> usize {
    (entries + entries / 3 + 1).next_power_of_two()
}

/// A map from keys to values of at most `capacity` entries, the cheapest dropped when full.
pub struct Table<K, V> {
    slots: Vec<Slot<K, V>>,
    /// Entries held.
    len: usize,
    capacity: usize,
    hasher: BuildHasherDefault<WordHasher>,
    /// Collections so far, and the entries they dropped (for reports and tests).
    pub collections: u64,
    pub dropped: u64,
}

impl<K: Hash + Eq + Copy, V: Copy> Table<K, V> {
    /// An empty table that will hold at most `capacity` entries (at least 2).
    pub fn new(capacity: usize) -> Table<K, V> {
        let capacity = capacity.max(2);
        Table {
            slots: vec![Slot(None); FIRST_SLOTS.min(slots_for(capacity))],
            len: 0,
            capacity,
            hasher: BuildHasherDefault::default(),
            collections: 0,
            dropped: 0,
        }
    }

    /// `key`'s home slot (the hash's high bits, the best mixed).
    fn home(&self, key: &K) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (self.hasher.hash_one(key) >> (64 - bits)) as usize
    }

    /// The slot holding `key`, or else the empty slot where it would go.
    fn find(&self, key: &K) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            match &self.slots[i].0 {
                None => return Err(i),
                Some(e) if e.key == *key => return Ok(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        let i = self.find(key).ok()?;
        self.slots[i].0.map(|e| e.value)
    }

    /// Starts loading `key`'s home slot and the next into the cache (a hint: nothing else
    /// changes).
    pub fn prefetch(&self, key: &K) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let i = self.home(key);
            for s in &self.slots[i..(i + 2).min(self.slots.len())] {
                let line = (s as *const Slot<K, V>).cast::<i8>();
                // A prefetch reads nothing and cannot fault; the address is a slot's.
                #[allow(unsafe_code)]
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(line)
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        assert_eq!(
            self.len,
            self.slots.iter().filter(|s| s.0.is_some()).count()
        );
        self.len
    }

    /// Bytes the slots take.
    pub fn bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<Slot<K, V>>()) as u64
    }

    /// Sets `key` to `value`, adding `work` to the nodes counted below it; a full table
    /// first drops its cheapest entries.
    pub fn store(&mut self, key: K, value: V, work: u64) {
        let free = match self.find(&key) {
            Ok(i) => {
                if let Some(e) = &mut self.slots[i].0 {
                    e.value = value;
                    e.work = e.work.saturating_add(work);
                }
                return;
            }
            Err(free) => free,
        };
        let e = Entry { key, value, work };
        let full = self.len >= self.capacity;
        if full {
            self.collect();
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        } else if !full {
            // Nothing moved: the empty slot the search found is the key's.
            self.put(free, e);
            return;
        }
        self.insert(e);
    }

    /// Puts a key the table does not hold in the first empty slot from its home.
    fn insert(&mut self, e: Entry<K, V>) {
        let (Ok(i) | Err(i)) = self.find(&e.key);
        self.put(i, e);
    }

    fn put(&mut self, i: usize, e: Entry<K, V>) {
        self.slots[i].0 = Some(e);
        self.len += 1;
    }

    /// The entries again, in twice the slots.
    fn grow(&mut self) {
        let doubled = vec![Slot(None); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.len = 0;
        for e in old.into_iter().flat_map(|s| s.0) {
            self.insert(e);
        }
    }

    /// Drops, in place, the entries with a class of work below `from`. Each entry left is
    /// then put again where a search from its home finds it: taken out and inserted, in slot
    /// order from an empty slot on, so it lands at or before where it was, near its home
    /// (one pass through memory in order, not a miss per entry).
    fn drop_below(&mut self, from: usize) {
        for s in &mut self.slots {
            if s.0.is_some_and(|e| class(e.work) < from) {
                s.0 = None;
                self.len -= 1;
                self.dropped += 1;
            }
        }
        let n = self.slots.len();
        let Some(empty) = self.slots.iter().position(|s| s.0.is_none()) else {
            return;
        };
        for k in 1..=n {
            let j = (empty + k) % n;
            if let Some(e) = self.slots[j].0.take() {
                self.len -= 1;
                self.insert(e);
            }
        }
    }

    /// Drops the entries with the smallest work until at most half the capacity is left:
    /// whole classes of work by powers of two (cheap to find, and no entry is kept over one
    /// that cost more).
    pub fn collect(&mut self) {
        let mut counts = [0usize; 65];
        for e in self.slots.iter().flat_map(|s| s.0.as_ref()) {
            counts[class(e.work)] += 1;
        }
        // The smallest class from which on the entries fit in half the table.
        let keep = self.capacity / 2;
        let mut kept = 0;
        let mut from = 65;
        while from > 0 && kept + counts[from - 1] <= keep {
            from -= 1;
            kept += counts[from];
        }
        self.drop_below(from);
        self.collections += 1;
    }
}

/// An entry's class of work: its bit length.
fn class(w: u64) -> usize {
    64 - w.leading_zeros() as usize
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
    fn every_entry_kept_is_found_after_collections_and_growth() {
        // 1535 entries fill 2048 slots three quarters: long runs to repair after a collection.
        let mut t: Table<u64, u64> = Table::new(1535);
        let mut checked = 0;
        for k in 0..50_000u64 {
            let before = (t.collections, t.slots.len());
            // Varied work, so a collection keeps entries from all over the table.
            t.store(k, k + 1, (k * 7919) % 1000 + 1);
            if (t.collections, t.slots.len()) != before {
                let held: Vec<(u64, u64)> = t
                    .slots
                    .iter()
                    .flat_map(|s| s.0.map(|e| (e.key, e.value)))
                    .collect();
                assert_eq!(held.len(), t.len());
                for (key, value) in held {
                    assert_eq!(t.get(&key), Some(value), "key {key} after {k}");
                }
                checked += 1;
            }
        }
        assert!(t.collections > 10 && checked > t.collections);
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
