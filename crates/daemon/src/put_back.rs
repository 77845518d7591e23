//! A damaged session put back from a backup: the others never stop for it.
//!
//! When a session's records cannot be read (a record file changed, cut short or gone), its
//! run marks it `damaged`. The daemon then looks through its backups, newest first, for one
//! that holds the session whole; it reads the session's records there (each file's checksum
//! checked) and loads its trees, and only then replaces what the store has of the session
//! with them, in one batch. The session goes on from that backup's checkpoint: the work since
//! is lost, and said.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backup::{self, WorkLost};
use fanorona_session::store::{SledStore, Store, Table, Write};
use fanorona_session::{SessionError, SessionRecord, Sessions, State};

/// A session put back from a backup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PutBack {
    pub id: u64,
    pub from: PathBuf,
    /// When the backup was taken (seconds since 1970).
    pub taken: u64,
    /// The work since the backup, lost.
    pub lost: WorkLost,
}

/// Why no backup could put a session back: each backup tried, and what was wrong with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoBackup {
    pub tried: Vec<(PathBuf, String)>,
}

impl NoBackup {
    /// In words, for the session's error.
    pub fn words(&self) -> String {
        if self.tried.is_empty() {
            return "no backup holds it".into();
        }
        let tried: Vec<String> = self
            .tried
            .iter()
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect();
        format!("no backup could put it back ({})", tried.join("; "))
    }
}

/// Puts session `id` of `sessions` back from the newest backup under `root` that holds it
/// whole and reads back whole; `cache_bytes` is the page cache of the backup opened.
pub fn from_newest(
    sessions: &Sessions,
    id: u64,
    root: &Path,
    cache_bytes: u64,
) -> Result<PutBack, NoBackup> {
    let mut tried = Vec::new();
    let damaged = sessions.get(id).ok();
    for (path, manifest) in backup::whole_backups(root) {
        match manifest.sessions.iter().find(|m| m.id == id) {
            None => continue,
            Some(m) if !m.whole => {
                tried.push((path, "its copy of the session was damaged too".into()));
                continue;
            }
            Some(_) => {}
        }
        match put_back(sessions, id, &path, cache_bytes) {
            Ok(rec) => {
                return Ok(PutBack {
                    id,
                    taken: manifest.taken,
                    lost: lost_since(damaged.as_ref(), &rec),
                    from: path,
                });
            }
            Err(e) => tried.push((path, e.to_string())),
        }
    }
    Err(NoBackup { tried })
}

/// Whether every tree of session `id` reads whole from `sessions` now (an error of the reading
/// itself may have passed).
pub fn reads_whole(sessions: &Sessions, id: u64) -> bool {
    let Ok(rec) = sessions.get(id) else {
        return false;
    };
    let Ok(root) = rec.root.parse::<fanorona_rules::Position>() else {
        return false;
    };
    rec.goals.iter().enumerate().all(|(g, goal)| {
        sessions
            .load_saved(id, g as u8, root.board(), goal.first_level)
            .is_ok()
    })
}

/// Reads session `id` from the backup in `from`, checks that its trees load, and puts it
/// back in `sessions`.
fn put_back(
    sessions: &Sessions,
    id: u64,
    from: &Path,
    cache_bytes: u64,
) -> Result<SessionRecord, SessionError> {
    let store = std::sync::Arc::new(SledStore::open(&from.join("store"), cache_bytes)?);
    let backup = Sessions::open(store.clone(), true)?;
    let mut rec = backup.get(id)?;
    let board = rec
        .root
        .parse::<fanorona_rules::Position>()
        .map_err(|e| SessionError::Damaged(format!("the backup's root of session {id}: {e}")))?
        .board();
    for (g, goal) in rec.goals.iter().enumerate() {
        backup.load_saved(id, g as u8, board, goal.first_level)?;
    }
    let mut records = Vec::new();
    for table in [Table::Nodes, Table::Patches, Table::Curve] {
        store.scan(table, &id.to_be_bytes(), &mut |k, v| {
            records.push(Write::put(table, k.to_vec(), v.to_vec()))
        })?;
    }
    drop(backup);
    // It was running when its damage was found: it runs on (unless it was solved or failed
    // in the backup already).
    if !matches!(rec.state, State::Solved | State::Failed) {
        rec.state = State::Running;
        rec.error = None;
    }
    sessions.put_back(rec, records)
}

/// The work the session had done beyond the backup's copy (`then`), now lost.
fn lost_since(damaged: Option<&SessionRecord>, then: &SessionRecord) -> WorkLost {
    let totals = |r: &SessionRecord| {
        let (nodes, seconds, _) = r.totals();
        (r.checkpoints, nodes, seconds)
    };
    let (c0, n0, s0) = totals(then);
    let (c1, n1, s1) = damaged.map_or((c0, n0, s0), totals);
    WorkLost {
        id: then.id,
        checkpoints: c1.saturating_sub(c0),
        nodes: n1.saturating_sub(n0),
        seconds: (s1 - s0).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backup::tests::settings;
    use crate::datadir::DataDir;
    use fanorona_rules::position::Position;
    use fanorona_session::runner::{Control, run};
    use std::sync::Arc;
    use std::time::Duration;

    /// Runs session `id` for about `ms` milliseconds, then stops it (checkpointed).
    fn run_for(sessions: &Sessions, dir: &DataDir, id: u64, ms: u64) {
        let control = Control::default();
        std::thread::scope(|s| {
            let h = s.spawn(|| run(sessions, id, &control, &dir.logs()));
            std::thread::sleep(Duration::from_millis(ms));
            control.request_stop();
            let r = h.join().unwrap().unwrap();
            assert_ne!(r.state, State::Solved, "the test needs a longer solve");
        });
    }

    /// Three sessions solved a while, a backup, more work, then one byte changed in one
    /// record file of the second: only it fails to load; put back, it loads, the others
    /// are untouched, and the work lost is what it did after the backup.
    #[test]
    fn a_damaged_session_is_put_back_and_the_others_are_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let store: Arc<dyn Store> = Arc::new(SledStore::open(&dir.store(), 16 << 20).unwrap());
        let sessions = Sessions::open(store, false).unwrap();
        let root = Position::initial("3x9".parse().unwrap());
        for _ in 0..3 {
            sessions.create(&root, None, settings()).unwrap();
        }
        for id in 1..=3 {
            run_for(&sessions, &dir, id, 150);
        }
        let backups = tmp.path().join("backups");
        let taken = backup::take(&sessions, &backups.join("b1"), &mut |_, _| {}).unwrap();
        assert!(taken.manifest.sessions.iter().all(|m| m.whole));
        for id in 1..=3 {
            run_for(&sessions, &dir, id, 150);
        }
        let before: Vec<SessionRecord> = (1..=3).map(|id| sessions.get(id).unwrap()).collect();
        // Damage: one byte of the largest record file of session 2.
        let file = largest_file_of(&sessions, &dir.store(), 2);
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 7;
        bytes[at] ^= 1;
        std::fs::write(&file, bytes).unwrap();
        let load = |id: u64| {
            let r = sessions.get(id).unwrap();
            (0..r.goals.len())
                .map(|g| sessions.load_saved(id, g as u8, root.board(), r.goals[g].first_level))
                .collect::<Result<Vec<_>, _>>()
                .map(|trees| trees.len())
        };
        assert!(load(1).is_ok() && load(3).is_ok());
        let e = load(2).unwrap_err();
        assert!(fanorona_session::runner::is_damage(&e), "{e}");
        assert!(e.to_string().contains("checksum"), "{e}");
        sessions
            .update(2, Vec::new(), |r| {
                r.state = State::Damaged;
                Ok(())
            })
            .unwrap();
        let put = from_newest(&sessions, 2, &backups, 8 << 20).unwrap();
        assert!(load(2).is_ok());
        let after = sessions.get(2).unwrap();
        assert_eq!(
            after.state,
            State::Running,
            "running again, as in the backup"
        );
        assert_eq!(after.checkpoints, taken.manifest.sessions[1].checkpoints);
        assert_eq!(
            put.lost.checkpoints,
            before[1].checkpoints - after.checkpoints
        );
        assert!(put.lost.checkpoints > 0 && put.lost.nodes > 0);
        for id in [1, 3] {
            assert_eq!(sessions.get(id).unwrap(), before[id as usize - 1]);
        }
        // Resumed, it goes on from the backup's checkpoint.
        sessions.set_state(2, State::Running).unwrap();
        run_for(&sessions, &dir, 2, 100);
        assert!(sessions.get(2).unwrap().checkpoints > after.checkpoints);
    }

    /// The record file of session `id` that holds the most bytes.
    fn largest_file_of(sessions: &Sessions, store: &Path, id: u64) -> PathBuf {
        let mut keys = Vec::new();
        sessions
            .store()
            .scan_keys(Table::Nodes, &id.to_be_bytes(), &mut |k| {
                keys.push(k.to_vec())
            })
            .unwrap();
        assert!(!keys.is_empty());
        std::fs::read_dir(store.join("records"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let bytes = std::fs::read(p).unwrap();
                let key_len = u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
                keys.iter().any(|k| bytes[24..24 + key_len] == k[..])
            })
            .max_by_key(|p| std::fs::metadata(p).unwrap().len())
            .unwrap()
    }
}
