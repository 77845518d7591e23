//! Compacting the session store: sled never gives back the space of records rewritten or
//! deleted (a checkpoint's patches, folded chunks, old formats' rewrites), so a store that
//! ran for days holds mostly garbage. Compaction copies every record into a new store beside
//! the old one, checks the copy against the original, and swaps the two directories.
//!
//! Every step leaves the data directory loadable, and `recover` (run whenever the store is
//! opened) finishes or undoes a compaction a crash stopped:
//! 1. the copy is written to `store.compacting/` (a crash here: the copy is deleted);
//! 2. once synced and checked, the marker `store.compacted` is written and synced;
//! 3. `store/` is renamed `store.old/`, `store.compacting/` renamed `store/` (a crash
//!    between the two: the marker says the copy is whole, so the rename is finished);
//! 4. the marker is removed, then `store.old/`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::datadir::{DaemonError, DataDir};
use fanorona_search::config::Config;
use fanorona_session::SessionError;
use fanorona_session::store::{self, Contents, SledStore, Table};

/// Bytes of records the copy writes per batch.
const BATCH_BYTES: u64 = 64 << 20;

/// Bytes copied after which both stores give back their memory (sled keeps every page it
/// reads: the first compaction of a 23 GB store with 4.2 GB of records reached 16 GB
/// resident before it was stopped).
const RELEASE_BYTES: u64 = 512 << 20;

impl DataDir {
    /// Where a compaction writes the new store.
    pub fn compacting(&self) -> PathBuf {
        self.root.join("store.compacting")
    }
    /// Written once the new store is whole and checked: the swap may go on.
    pub fn compacted(&self) -> PathBuf {
        self.root.join("store.compacted")
    }
    /// The old store, between the swap and its removal.
    pub fn old_store(&self) -> PathBuf {
        self.root.join("store.old")
    }
}

/// What a compaction did.
#[derive(Clone, Copy, Debug)]
pub struct Compaction {
    pub contents: Contents,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub seconds: f64,
}

/// `store compact --json`: the store compacted, the live records copied, and its bytes on
/// disk before and after.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoreCompacted {
    pub store: PathBuf,
    pub records: u64,
    /// The records' own bytes (keys and values).
    pub record_bytes: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub seconds: f64,
}

impl Compaction {
    /// As `store compact --json` reports it, for the store at `store`.
    pub fn report(&self, store: PathBuf) -> StoreCompacted {
        StoreCompacted {
            store,
            records: self.contents.records,
            record_bytes: self.contents.bytes,
            bytes_before: self.bytes_before,
            bytes_after: self.bytes_after,
            seconds: self.seconds,
        }
    }
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DaemonError + use<> {
    let path = path.to_path_buf();
    move |source| DaemonError::Io { what, path, source }
}

/// fsync of a file, or of a directory so that the renames and removals in it are durable.
fn sync_path(path: &Path) -> Result<(), DaemonError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(io("cannot sync", path))
}

/// A removal's result, where what was to go being gone already is success.
fn removed(path: &Path, result: std::io::Result<()>) -> Result<(), DaemonError> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("cannot remove", path)(e)),
        _ => Ok(()),
    }
}

fn remove_dir(path: &Path) -> Result<(), DaemonError> {
    removed(path, std::fs::remove_dir_all(path))
}

/// Finishes or undoes a compaction that a crash stopped (the data directory locked); says
/// what it did, if anything.
pub fn recover(dir: &DataDir) -> Result<Option<&'static str>, DaemonError> {
    let (marker, new, old) = (dir.compacted(), dir.compacting(), dir.old_store());
    if marker.exists() {
        // The copy was whole and checked: finish the swap.
        if new.exists() {
            if dir.store().exists() {
                std::fs::rename(dir.store(), &old).map_err(io("cannot rename", &dir.store()))?;
            }
            std::fs::rename(&new, dir.store()).map_err(io("cannot rename", &new))?;
            sync_path(&dir.root)?;
        }
        removed(&marker, std::fs::remove_file(&marker))?;
        sync_path(&dir.root)?;
        remove_dir(&old)?;
        return Ok(Some(
            "finished a compaction of the store that was stopped after its copy",
        ));
    }
    let mut did = None;
    if new.exists() {
        remove_dir(&new)?;
        did = Some("removed the copy of a compaction of the store that was stopped");
    }
    if old.exists() {
        remove_dir(&old)?;
        did = Some("removed the old store a compaction had replaced");
    }
    Ok(did)
}

/// Bytes the files under `path` take.
fn size_of_dir(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => size_of_dir(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Compacts the store of `dir` (locked by the caller, so no daemon runs on it);
/// `progress` sees each table and what was copied so far.
pub fn compact(
    dir: &DataDir,
    config: &Config,
    progress: &mut dyn FnMut(Table, &Contents),
) -> Result<Compaction, DaemonError> {
    let start = Instant::now();
    recover(dir)?;
    if !dir.created().exists() || !dir.store().is_dir() {
        return Err(SessionError::Damaged(format!(
            "{} holds no session store to compact",
            dir.root.display()
        ))
        .into());
    }
    let bytes_before = size_of_dir(&dir.store());
    let copied = {
        let from = SledStore::open(&dir.store(), config.store_cache).map_err(SessionError::from)?;
        let mut copy = || -> Result<Contents, DaemonError> {
            let to = SledStore::open(&dir.compacting(), config.store_cache)
                .map_err(SessionError::from)?;
            let copied = store::copy_all(&from, &to, BATCH_BYTES, RELEASE_BYTES, None, progress)
                .map_err(SessionError::from)?;
            // Read back: the copy holds exactly what the original does.
            let read = store::contents(&to, RELEASE_BYTES).map_err(SessionError::from)?;
            if read != copied {
                return Err(SessionError::Damaged(format!(
                    "the copy in {} reads back {} records, {} bytes; {} and {} were written",
                    dir.compacting().display(),
                    read.records,
                    read.bytes,
                    copied.records,
                    copied.bytes
                ))
                .into());
            }
            Ok(copied)
        };
        match copy() {
            Ok(c) => c,
            Err(e) => {
                // Nothing of the original changed; the partial copy goes.
                let _ = remove_dir(&dir.compacting());
                return Err(e);
            }
        }
    };
    let marker = dir.compacted();
    std::fs::write(&marker, format!("{} records\n", copied.records))
        .map_err(io("cannot write", &marker))?;
    sync_path(&marker)?;
    sync_path(&dir.root)?;
    recover(dir)?;
    Ok(Compaction {
        contents: copied,
        bytes_before,
        bytes_after: size_of_dir(&dir.store()),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_session::store::Write;

    fn config(root: &Path) -> Config {
        Config {
            data_dir: root.to_path_buf(),
            store_cache: 1 << 20,
            ..Config::defaults()
        }
    }

    /// A store that rewrote its records many times, as a long run does.
    fn garbage_store(dir: &DataDir, c: &Config) -> Contents {
        let sessions = super::super::open_sessions(dir, c).unwrap();
        for round in 0..30u8 {
            let writes: Vec<Write> = (0..3000u32)
                .map(|i| Write::put(Table::Rote, i.to_be_bytes().to_vec(), vec![round; 300]))
                .collect();
            sessions.store().apply(&writes).unwrap();
        }
        store::contents(sessions.store(), 1 << 18).unwrap()
    }

    #[test]
    fn compaction_keeps_every_record_and_frees_the_garbage() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let c = config(tmp.path());
        let before = garbage_store(&dir, &c);
        let done = compact(&dir, &c, &mut |_, _| {}).unwrap();
        assert_eq!(done.contents, before);
        assert!(
            done.bytes_after < done.bytes_before / 2,
            "{} -> {}",
            done.bytes_before,
            done.bytes_after
        );
        assert!(!dir.compacting().exists() && !dir.old_store().exists());
        assert!(!dir.compacted().exists());
        let sessions = super::super::open_sessions(&dir, &c).unwrap();
        assert_eq!(store::contents(sessions.store(), 1 << 18).unwrap(), before);
        assert_eq!(
            sessions
                .store()
                .get(Table::Rote, &7u32.to_be_bytes())
                .unwrap(),
            Some(vec![29; 300])
        );
    }

    /// A crash at each step leaves a directory that opens with the same records.
    #[test]
    fn a_compaction_stopped_anywhere_is_finished_or_undone() {
        for step in 0..4 {
            let tmp = tempfile::tempdir().unwrap();
            let dir = DataDir::new(tmp.path());
            let c = config(tmp.path());
            let before = garbage_store(&dir, &c);
            {
                let from = SledStore::open(&dir.store(), 1 << 20).unwrap();
                let to = SledStore::open(&dir.compacting(), 1 << 20).unwrap();
                store::copy_all(&from, &to, 1 << 16, 1 << 18, None, &mut |_, _| {}).unwrap();
            }
            match step {
                // The copy made, no marker: undone.
                0 => {}
                // Marked whole: finished.
                1 => std::fs::write(dir.compacted(), "").unwrap(),
                // Marked, and the old store moved aside: finished.
                2 => {
                    std::fs::write(dir.compacted(), "").unwrap();
                    std::fs::rename(dir.store(), dir.old_store()).unwrap();
                }
                // Swapped, the marker gone, the old store left: removed.
                _ => {
                    std::fs::rename(dir.store(), dir.old_store()).unwrap();
                    std::fs::rename(dir.compacting(), dir.store()).unwrap();
                }
            }
            let sessions = super::super::open_sessions(&dir, &c).unwrap();
            assert_eq!(
                store::contents(sessions.store(), 1 << 18).unwrap(),
                before,
                "step {step}"
            );
            drop(sessions);
            for p in [dir.compacting(), dir.old_store(), dir.compacted()] {
                assert!(!p.exists(), "step {step}: {} left", p.display());
            }
        }
    }
}
