//! The session store: the only file that calls sled.
//!
//! Records live in one tree per kind (`Table`). Everything else sees the small `Store` trait,
//! so a second backend, or the in-memory model the tests run against, fits in unchanged. A
//! checkpoint is one `apply`: all its writes in one atomic transaction, then a flush and an
//! fsync of the store's files, so after `kill -9` the store holds the last checkpoint whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

/// The record kinds, one tree each.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Table {
    /// Format version, the program that created the store, the rules.
    Meta,
    /// One record per session.
    Sessions,
    /// The first-level trees, in chunks of nodes.
    Nodes,
    /// The root's pn/dpn curve, one record per iteration.
    Curve,
    /// Solved positions.
    Rote,
    /// What checkpoints changed in first-level nodes stored before them, one record a
    /// checkpoint, until folded into the node chunks.
    Patches,
}

impl Table {
    pub const ALL: [Table; 6] = [
        Table::Meta,
        Table::Sessions,
        Table::Nodes,
        Table::Curve,
        Table::Rote,
        Table::Patches,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Meta => "meta",
            Table::Sessions => "sessions",
            Table::Nodes => "nodes",
            Table::Curve => "curve",
            Table::Rote => "rote",
            Table::Patches => "patches",
        }
    }
}

/// One write of a batch: `value` `None` removes the key.
#[derive(Clone, Debug)]
pub struct Write {
    pub table: Table,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl Write {
    /// Bytes of the value written (0 for a removal).
    pub fn value_bytes(&self) -> u64 {
        self.value.as_ref().map_or(0, |v| v.len() as u64)
    }

    pub fn put(table: Table, key: Vec<u8>, value: Vec<u8>) -> Write {
        Write {
            table,
            key,
            value: Some(value),
        }
    }
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("store {path}: {message}")]
    Backend { path: PathBuf, message: String },
    #[error("store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);

/// A key-value store with one ordered map per `Table`.
pub trait Store: Send + Sync {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Every key starting with `prefix`, in key order, handed to `each`.
    fn scan(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError>;
    /// Every key starting with `prefix` from `from` on, in key order.
    fn scan_from(
        &self,
        table: Table,
        prefix: &[u8],
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError>;
    /// The last key starting with `prefix`, with its value.
    fn last(&self, table: Table, prefix: &[u8]) -> Result<Option<Pair>, StoreError>;
    /// All of `writes` or none, durable when this returns.
    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        self.commit(writes)?;
        self.sync()
    }
    /// All of `writes` or none, seen by every later read; durable after the next `sync`.
    fn commit(&self, writes: &[Write]) -> Result<(), StoreError>;
    /// Makes every commit so far durable.
    fn sync(&self) -> Result<(), StoreError>;
    /// Bytes the store takes on disk (0 for a store in memory).
    fn size_on_disk(&self) -> u64;
}

/// The store on disk, in sled.
pub struct SledStore {
    path: PathBuf,
    db: sled::Db,
    trees: Vec<sled::Tree>,
}

impl SledStore {
    /// Opens (or creates) the store in directory `path`; `cache_bytes` is sled's page cache.
    pub fn open(path: &Path, cache_bytes: u64) -> Result<SledStore, StoreError> {
        let err = |e: sled::Error| StoreError::Backend {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(cache_bytes)
            .mode(sled::Mode::LowSpace)
            .open()
            .map_err(err)?;
        let trees = Table::ALL
            .iter()
            .map(|t| db.open_tree(t.name()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        Ok(SledStore {
            path: path.to_path_buf(),
            db,
            trees,
        })
    }

    fn tree(&self, t: Table) -> &sled::Tree {
        &self.trees[t as usize]
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Backend {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// sled's flush uses sync_file_range, which does not survive a power loss: fsync its
    /// files (the log, its config, the large pages it keeps as blob files) and directories.
    fn sync_files(&self) -> Result<(), StoreError> {
        let sync = |p: PathBuf| {
            std::fs::File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|source| StoreError::Io { path: p, source })
        };
        for name in ["db", "conf"] {
            let p = self.path.join(name);
            if p.exists() {
                sync(p)?;
            }
        }
        let blobs = self.path.join("blobs");
        if let Ok(entries) = std::fs::read_dir(&blobs) {
            for e in entries.flatten() {
                // A blob sled replaced meanwhile is gone: nothing to sync.
                match sync(e.path()) {
                    Err(StoreError::Io { source, .. })
                        if source.kind() == std::io::ErrorKind::NotFound => {}
                    other => other?,
                }
            }
            sync(blobs)?;
        }
        sync(self.path.clone())
    }
}

impl Store for SledStore {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.tree(table)
            .get(key)
            .map(|v| v.map(|v| v.to_vec()))
            .map_err(|e| self.err(e))
    }

    fn scan(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        for kv in self.tree(table).scan_prefix(prefix) {
            let (k, v) = kv.map_err(|e| self.err(e))?;
            each(&k, &v);
        }
        Ok(())
    }

    fn scan_from(
        &self,
        table: Table,
        prefix: &[u8],
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        for kv in self.tree(table).range(from..) {
            let (k, v) = kv.map_err(|e| self.err(e))?;
            if !k.starts_with(prefix) {
                break;
            }
            each(&k, &v);
        }
        Ok(())
    }

    fn last(&self, table: Table, prefix: &[u8]) -> Result<Option<Pair>, StoreError> {
        match self.tree(table).scan_prefix(prefix).next_back() {
            None => Ok(None),
            Some(kv) => {
                let (k, v) = kv.map_err(|e| self.err(e))?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
        }
    }

    fn commit(&self, writes: &[Write]) -> Result<(), StoreError> {
        use sled::Transactional;
        let mut batches: Vec<sled::Batch> =
            Table::ALL.iter().map(|_| sled::Batch::default()).collect();
        for w in writes {
            let b = &mut batches[w.table as usize];
            match &w.value {
                Some(v) => b.insert(w.key.as_slice(), v.as_slice()),
                None => b.remove(w.key.as_slice()),
            }
        }
        let t = &self.trees;
        let result: sled::transaction::TransactionResult<(), ()> =
            (&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]).transaction(|(a, b, c, d, e, f)| {
                for (tree, batch) in [a, b, c, d, e, f].into_iter().zip(&batches) {
                    tree.apply_batch(batch)?;
                }
                Ok(())
            });
        result.map_err(|e| self.err(format!("{e:?}")))
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.db.flush().map_err(|e| self.err(e))?;
        self.sync_files()
    }

    fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }
}

/// Every table's map in one, keyed by (table, key).
type Tables = BTreeMap<(Table, Vec<u8>), Vec<u8>>;

/// The store in memory: the model the sled store is tested against, and a store for runs
/// that need no persistence. `fail_writes` makes every `apply` fail (a full disk).
#[derive(Default)]
pub struct MemStore {
    maps: Mutex<Tables>,
    pub fail_writes: std::sync::atomic::AtomicBool,
}

impl MemStore {
    pub fn new() -> MemStore {
        MemStore::default()
    }
}

impl Store for MemStore {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let maps = self.maps.lock().expect("store lock");
        Ok(maps.get(&(table, key.to_vec())).cloned())
    }

    fn scan(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        self.scan_from(table, prefix, prefix, each)
    }

    fn scan_from(
        &self,
        table: Table,
        prefix: &[u8],
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        let maps = self.maps.lock().expect("store lock");
        for ((_, k), v) in maps
            .range((table, from.to_vec())..)
            .take_while(|((t, k), _)| *t == table && k.starts_with(prefix))
        {
            each(k, v);
        }
        Ok(())
    }

    fn last(&self, table: Table, prefix: &[u8]) -> Result<Option<Pair>, StoreError> {
        let mut last = None;
        self.scan(table, prefix, &mut |k, v| {
            last = Some((k.to_vec(), v.to_vec()))
        })?;
        Ok(last)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), StoreError> {
        if self.fail_writes.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(StoreError::Io {
                path: PathBuf::from("(memory)"),
                source: std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left"),
            });
        }
        let mut maps = self.maps.lock().expect("store lock");
        for w in writes {
            let key = (w.table, w.key.clone());
            match &w.value {
                Some(v) => maps.insert(key, v.clone()),
                None => maps.remove(&key),
            };
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn size_on_disk(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same operations give the same answers on both backends.
    fn exercise(s: &dyn Store) {
        let w = |t, k: &[u8], v: &[u8]| Write::put(t, k.to_vec(), v.to_vec());
        s.apply(&[
            w(Table::Curve, &[1, 0, 2], b"b"),
            w(Table::Curve, &[1, 0, 1], b"a"),
            w(Table::Curve, &[2, 0, 0], b"other"),
            w(Table::Meta, b"format", b"1"),
        ])
        .unwrap();
        let mut seen = Vec::new();
        s.scan(Table::Curve, &[1], &mut |k, v| {
            seen.push((k.to_vec(), v.to_vec()))
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                (vec![1, 0, 1], b"a".to_vec()),
                (vec![1, 0, 2], b"b".to_vec())
            ]
        );
        assert_eq!(
            s.last(Table::Curve, &[1]).unwrap().unwrap().1,
            b"b".to_vec()
        );
        assert_eq!(s.last(Table::Curve, &[3]).unwrap(), None);
        // From a key on, within the prefix only.
        let mut from = Vec::new();
        s.scan_from(Table::Curve, &[1], &[1, 0, 2], &mut |k, _| {
            from.push(k.to_vec())
        })
        .unwrap();
        assert_eq!(from, vec![vec![1, 0, 2]]);
        let mut none = Vec::new();
        s.scan_from(Table::Curve, &[1], &[1, 1], &mut |k, _| {
            none.push(k.to_vec())
        })
        .unwrap();
        assert!(none.is_empty(), "{none:?}");
        assert_eq!(s.get(Table::Meta, b"format").unwrap(), Some(b"1".to_vec()));
        assert_eq!(s.get(Table::Sessions, b"format").unwrap(), None);
        s.apply(&[Write {
            table: Table::Meta,
            key: b"format".to_vec(),
            value: None,
        }])
        .unwrap();
        assert_eq!(s.get(Table::Meta, b"format").unwrap(), None);
    }

    #[test]
    fn memory_and_sled_agree() {
        exercise(&MemStore::new());
        let dir = tempfile::tempdir().unwrap();
        exercise(&SledStore::open(&dir.path().join("store"), 1 << 20).unwrap());
    }

    #[test]
    fn a_failed_batch_changes_nothing() {
        let s = MemStore::new();
        s.apply(&[Write::put(Table::Meta, b"k".to_vec(), b"1".to_vec())])
            .unwrap();
        s.fail_writes
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            s.apply(&[Write::put(Table::Meta, b"k".to_vec(), b"2".to_vec())])
                .is_err()
        );
        assert_eq!(s.get(Table::Meta, b"k").unwrap(), Some(b"1".to_vec()));
    }
}
