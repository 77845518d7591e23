//! Backups of the session store, taken while the daemon runs, and their restore.
//!
//! A backup is a directory holding a copy of the store (`store/`, a sled store like the
//! original) and `backup.json`, written last: a backup without it is not whole. The copy is
//! taken with every write to the store held back (`Sessions::quiesced`), so it holds each
//! session exactly as one of its checkpoints left it; the searches go on meanwhile, their
//! checkpoints waiting for the copy to end (the work stays in memory), and so do readers.
//!
//! A restore needs the data directory to itself (the daemon stopped): the backup is checked
//! (its record count against its `backup.json`), copied to `store.restoring/`, the store in
//! place (if any) moved aside to `store.before-restore-TIME/` (kept: the operator deletes
//! it), and the copy renamed `store/`.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::datadir::{DaemonError, DataDir};
use fanorona_search::config::Config;
use fanorona_session::store::{self, Contents, SledStore, Store, Table};
use fanorona_session::{SessionError, Sessions, codec};

/// The file that makes a backup whole, written last.
pub const MANIFEST: &str = "backup.json";

/// Bytes of records a backup copies per batch, and after which the copy gives back its
/// memory (as a compaction does: sled keeps every page it reads or writes).
const BATCH_BYTES: u64 = 64 << 20;
const RELEASE_BYTES: u64 = 512 << 20;

/// Room a backup leaves free on its disk beyond what it writes.
const MARGIN: u64 = 64 << 20;

/// What a backup holds, as its `backup.json` says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackupManifest {
    /// Seconds since 1970 when the copy was taken.
    pub taken: u64,
    /// Records and their bytes copied.
    pub records: u64,
    pub record_bytes: u64,
    /// Each session as the backup holds it.
    pub sessions: Vec<SessionMark>,
    /// The program that took it (`fanorona VERSION (COMMIT)`).
    pub producer: String,
    /// Records whose files were damaged, left out of the copy (their sessions are marked
    /// not whole).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// A session in a backup: how far its search had come.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionMark {
    pub id: u64,
    pub name: String,
    pub state: String,
    /// Checkpoints written, and the nodes searched, by then.
    pub checkpoints: u64,
    pub nodes: u64,
    pub seconds: f64,
    /// Whether the backup holds all of its records (none was left out as damaged): only
    /// then can the session be restored from it.
    #[serde(default = "whole")]
    pub whole: bool,
}

fn whole() -> bool {
    true
}

/// A backup taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackupTaken {
    pub dir: PathBuf,
    pub manifest: BackupManifest,
    /// Bytes the backup takes on disk.
    pub bytes: u64,
    pub seconds: f64,
}

/// A store restored from a backup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    pub from: PathBuf,
    pub manifest: BackupManifest,
    /// Where the store that was in place went (kept; `None`: there was none).
    pub set_aside: Option<PathBuf>,
    /// Per session of the store set aside that could still be read: the work the restore
    /// goes back on (its solving seconds then less the backup's).
    pub lost: Vec<WorkLost>,
    pub seconds: f64,
}

/// Work a restore goes back on, for one session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkLost {
    pub id: u64,
    pub checkpoints: u64,
    pub nodes: u64,
    pub seconds: f64,
}

fn refuse(message: String) -> DaemonError {
    DaemonError::Backup(message)
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DaemonError + use<> {
    let path = path.to_path_buf();
    move |source| DaemonError::Io { what, path, source }
}

/// Takes a backup of `sessions` into `into`, a new or empty directory; `progress` sees each
/// table and what was copied so far.
pub fn take(
    sessions: &Sessions,
    into: &Path,
    progress: &mut dyn FnMut(Table, &Contents),
) -> Result<BackupTaken, DaemonError> {
    let start = Instant::now();
    check_empty(into)?;
    std::fs::create_dir_all(into).map_err(io("cannot make the backup directory", into))?;
    let copy = into.join("store");
    let result = copy_into(sessions, &copy, progress);
    let manifest = match result {
        Ok(m) => m,
        Err(e) => {
            // Nothing half made is left to be taken for a backup.
            let _ = std::fs::remove_dir_all(&copy);
            return Err(e);
        }
    };
    write_manifest(into, &manifest)?;
    Ok(BackupTaken {
        dir: into.to_path_buf(),
        bytes: dir_bytes(into),
        manifest,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Refuses a backup directory that holds anything: a backup never writes over files.
fn check_empty(into: &Path) -> Result<(), DaemonError> {
    match std::fs::read_dir(into) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(refuse(format!(
                    "{} is not empty: give a new or empty directory (a backup never writes over files)",
                    into.display()
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("cannot read the backup directory", into)(e)),
    }
}

/// Copies the store of `sessions` into a new sled store at `to` under the record lock, and
/// describes what it copied.
fn copy_into(
    sessions: &Sessions,
    to: &Path,
    progress: &mut dyn FnMut(Table, &Contents),
) -> Result<BackupManifest, DaemonError> {
    let target = SledStore::open(to, 64 << 20).map_err(SessionError::from)?;
    let mut left_out = Vec::new();
    let (contents, records) = sessions.quiesced(|from, records| {
        // The store's own size bounds its live records: refused at once where it cannot
        // fit, rather than after filling the disk.
        let need = from.size_on_disk();
        if let Some(free) = target.free_bytes()
            && free < need.min(u64::MAX - MARGIN) + MARGIN
        {
            return Err(refuse(format!(
                "{} has {} MiB free; the backup may take up to {} MiB (the store's size on disk) and {} MiB to spare: free space or give a directory on another disk",
                to.display(),
                free >> 20,
                need >> 20,
                MARGIN >> 20
            )));
        }
        let copied = store::copy_all(
            from,
            &target,
            BATCH_BYTES,
            RELEASE_BYTES,
            Some(&mut left_out),
            progress,
        )
        .map_err(SessionError::from)?;
        Ok::<_, DaemonError>((copied, records))
    })??;
    target.sync().map_err(SessionError::from)?;
    drop(target);
    Ok(BackupManifest {
        taken: unix_seconds(),
        records: contents.records,
        record_bytes: contents.bytes,
        sessions: records
            .iter()
            .map(|r| SessionMark {
                id: r.id,
                name: r.name.clone(),
                state: r.state.name().to_string(),
                checkpoints: r.checkpoints,
                nodes: r.goals.iter().map(|g| g.nodes).sum(),
                seconds: r.goals.iter().map(|g| g.seconds).sum(),
                whole: !left_out
                    .iter()
                    .any(|l| codec::session_of_key(&l.key) == Some(r.id)),
            })
            .collect(),
        producer: fanorona_rules::version::producer(),
        left_out: left_out.iter().map(|l| l.why.clone()).collect(),
    })
}

/// Writes `backup.json` (to a temporary name, synced, then renamed: it is there whole or not
/// at all).
fn write_manifest(into: &Path, manifest: &BackupManifest) -> Result<(), DaemonError> {
    let path = into.join(MANIFEST);
    let tmp = into.join(format!("{MANIFEST}.tmp"));
    let text = serde_json::to_vec_pretty(manifest).expect("a manifest serialises");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        std::fs::File::open(into)?.sync_all()
    };
    write().map_err(io("cannot write", &path))
}

/// Reads the manifest of the backup in `from`.
pub fn read_manifest(from: &Path) -> Result<BackupManifest, DaemonError> {
    let path = from.join(MANIFEST);
    let text = std::fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            refuse(format!(
                "{} is not a whole backup (no {MANIFEST}: the backup did not finish, or this is not one)",
                from.display()
            ))
        } else {
            io("cannot read", &path)(e)
        }
    })?;
    serde_json::from_slice(&text)
        .map_err(|e| refuse(format!("{}: not a backup's manifest ({e})", path.display())))
}

/// Restores the store of data directory `dir` (locked by the caller) from the backup in
/// `from`. `cache_bytes` is the page cache of the stores opened.
pub fn restore(dir: &DataDir, from: &Path, cache_bytes: u64) -> Result<Restored, DaemonError> {
    let start = Instant::now();
    let manifest = read_manifest(from)?;
    let source = from.join("store");
    let damaged = |what: String| {
        refuse(format!(
            "the backup in {} is damaged ({what}): restore an older one",
            from.display()
        ))
    };
    let backup = SledStore::open(&source, cache_bytes).map_err(|e| damaged(e.to_string()))?;
    let restoring = dir.root.join("store.restoring");
    let _ = std::fs::remove_dir_all(&restoring);
    let copy = SledStore::open(&restoring, cache_bytes).map_err(SessionError::from)?;
    let copied = store::copy_all(
        &backup,
        &copy,
        BATCH_BYTES,
        RELEASE_BYTES,
        None,
        &mut |_, _| {},
    )
    .map_err(|e| damaged(e.to_string()))?;
    if copied.records != manifest.records || copied.bytes != manifest.record_bytes {
        let _ = std::fs::remove_dir_all(&restoring);
        return Err(damaged(format!(
            "{} records of {} bytes read where its manifest says {} of {}",
            copied.records, copied.bytes, manifest.records, manifest.record_bytes
        )));
    }
    copy.sync().map_err(SessionError::from)?;
    drop(copy);
    drop(backup);
    let current = dir.store();
    let existed = current.exists();
    let lost = if existed {
        work_lost(&current, cache_bytes, &manifest)
    } else {
        Vec::new()
    };
    let set_aside = if existed {
        let aside = dir
            .root
            .join(format!("store.before-restore-{}", unix_seconds()));
        std::fs::rename(&current, &aside).map_err(io("cannot move aside", &current))?;
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&restoring, &current).map_err(io("cannot rename", &restoring))?;
    std::fs::File::open(&dir.root)
        .and_then(|d| d.sync_all())
        .map_err(io("cannot sync", &dir.root))?;
    Ok(Restored {
        from: from.to_path_buf(),
        manifest,
        set_aside,
        lost,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The work the store at `current` holds beyond the backup, per session, where it can still
/// be read (a damaged store says nothing).
fn work_lost(current: &Path, cache_bytes: u64, manifest: &BackupManifest) -> Vec<WorkLost> {
    let Ok(store) = SledStore::open(current, cache_bytes) else {
        return Vec::new();
    };
    let Ok(sessions) = Sessions::open(std::sync::Arc::new(store), true) else {
        return Vec::new();
    };
    let Ok((records, _)) = sessions.list_readable() else {
        return Vec::new();
    };
    records
        .iter()
        .filter_map(|r| {
            let nodes: u64 = r.goals.iter().map(|g| g.nodes).sum();
            let seconds: f64 = r.goals.iter().map(|g| g.seconds).sum();
            let then = manifest.sessions.iter().find(|m| m.id == r.id);
            let (c, n, s) = then.map_or((0, 0, 0.0), |m| (m.checkpoints, m.nodes, m.seconds));
            (r.checkpoints > c).then(|| WorkLost {
                id: r.id,
                checkpoints: r.checkpoints - c,
                nodes: nodes.saturating_sub(n),
                seconds: (seconds - s).max(0.0),
            })
        })
        .collect()
}

/// Seconds since 1970 now: a backup's time, in its manifest and its directory names.
fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// Where the daemon's own backups go.
pub fn rolling_dir(config: &Config, dir: &DataDir) -> PathBuf {
    config
        .backup_dir
        .clone()
        .unwrap_or_else(|| dir.root.join("backups"))
}

/// The whole backups under `root` (those with their manifest), newest first.
pub fn whole_backups(root: &Path) -> Vec<(PathBuf, BackupManifest)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, BackupManifest)> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| read_manifest(&p).ok().map(|m| (p, m)))
        .collect();
    found.sort_by(|a, b| b.1.taken.cmp(&a.1.taken).then_with(|| b.0.cmp(&a.0)));
    found
}

/// The daemon's backups as `session status` shows them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackupsView {
    pub dir: PathBuf,
    /// Whole backups kept, and the bytes they take.
    pub count: usize,
    pub bytes: u64,
    /// When the newest was taken (seconds since 1970).
    pub newest: Option<u64>,
    /// How often one is taken (`None`: never).
    pub every_seconds: Option<u64>,
    /// Why the last try failed, until one succeeds.
    pub problem: Option<String>,
}

impl BackupsView {
    /// The backups under `dir` now.
    pub fn of(dir: &Path, every: Option<std::time::Duration>) -> BackupsView {
        let whole = whole_backups(dir);
        BackupsView {
            dir: dir.to_path_buf(),
            count: whole.len(),
            bytes: whole.iter().map(|(p, _)| dir_bytes(p)).sum(),
            newest: whole.first().map(|(_, m)| m.taken),
            every_seconds: every.map(|d| d.as_secs()),
            problem: None,
        }
    }
}

/// Takes the daemon's next backup into `root` if `every` has passed since the newest whole
/// one (or since `since`, the daemon's start, when there is none), then keeps the newest
/// `keep`. A backup that failed half way is removed (by `take`).
pub fn take_if_due(
    sessions: &Sessions,
    root: &Path,
    every: std::time::Duration,
    keep: usize,
    since: SystemTime,
) -> Result<Option<BackupTaken>, DaemonError> {
    let now = SystemTime::now();
    let last = whole_backups(root)
        .first()
        .map(|(_, m)| UNIX_EPOCH + std::time::Duration::from_secs(m.taken))
        .unwrap_or(since);
    if now.duration_since(last).unwrap_or_default() < every {
        return Ok(None);
    }
    std::fs::create_dir_all(root).map_err(io("cannot make the backup directory", root))?;
    let name = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let taken = take(
        sessions,
        &root.join(format!("backup-{name}")),
        &mut |_, _| {},
    )?;
    prune(root, keep);
    Ok(Some(taken))
}

/// Removes the whole backups under `root` past the newest `keep`, and what unfinished ones
/// left (a directory without a manifest, older than the newest whole one).
fn prune(root: &Path, keep: usize) {
    let whole = whole_backups(root);
    // A session the kept backups hold damaged keeps the newest older one holding it whole.
    let mut needed = std::collections::HashSet::new();
    for kept in whole.iter().take(keep) {
        for m in kept.1.sessions.iter().filter(|m| !m.whole) {
            let older = whole
                .iter()
                .skip(keep)
                .find(|(_, b)| b.sessions.iter().any(|o| o.id == m.id && o.whole));
            needed.extend(older.map(|(p, _)| p.clone()));
        }
    }
    for (path, _) in whole.iter().skip(keep).filter(|(p, _)| !needed.contains(p)) {
        if let Err(e) = std::fs::remove_dir_all(path) {
            tracing::warn!("backups: cannot remove {}: {e}", path.display());
        }
    }
    let Some((newest, _)) = whole.first() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && !p.join(MANIFEST).exists() && p.file_name() < newest.file_name() {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
}

/// At the daemon's start, a store that will not open: restored from the newest whole backup
/// under `root` that reads back whole, the older ones tried in turn. Returns what it did, or
/// `None` when no backup could serve.
pub fn restore_newest(dir: &DataDir, root: &Path, cache_bytes: u64) -> Option<Restored> {
    for (path, _) in whole_backups(root) {
        match restore(dir, &path, cache_bytes) {
            Ok(r) => return Some(r),
            Err(e) => tracing::error!("backups: {}: {e}; trying an older one", path.display()),
        }
    }
    None
}

/// How long ago `taken` (seconds since 1970) was, in words.
pub fn age(taken: u64) -> String {
    let s = unix_seconds().saturating_sub(taken);
    match s {
        0..120 => format!("taken {s} s ago"),
        120..7200 => format!("taken {} min ago", s / 60),
        _ => format!("taken {:.1} h ago", s as f64 / 3600.0),
    }
}

/// What a restore went back on, in words.
pub fn lost_words(r: &Restored) -> String {
    if r.lost.is_empty() {
        return "no checkpoint lost that the store set aside could still tell".into();
    }
    r.lost
        .iter()
        .map(|l| {
            format!(
                "session {} back {} checkpoints ({} nodes, {:.0} s of solving)",
                l.id, l.checkpoints, l.nodes, l.seconds
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use fanorona_rules::position::Position;
    use fanorona_search::{Algorithm, Init};
    use fanorona_session::runner::{Control, run};
    use fanorona_session::{SecondLevel, Settings, State};
    use std::sync::Arc;
    use std::time::Duration;

    /// A 3x9 session's settings, checkpointing every 5 ms.
    pub fn settings() -> Settings {
        Settings {
            algo: Algorithm::Pn2,
            db_dir: None,
            second_level: SecondLevel::Fixed(3000),
            init: Init::Mobility,
            weights: None,
            checkpoint_ms: 5,
            verify: false,
            threads: 1,
            pairs: false,
        }
    }

    fn sled_sessions(path: &Path) -> Sessions {
        let created = path.exists();
        let store: Arc<dyn Store> = Arc::new(SledStore::open(path, 16 << 20).unwrap());
        Sessions::open(store, created).unwrap()
    }

    /// A backup taken while a session runs, restored into another data directory: the
    /// session resumes there and finishes with the value it has where it was taken.
    #[test]
    fn a_backup_taken_while_a_session_runs_restores_to_the_same_value_elsewhere() {
        let tmp = tempfile::tempdir().unwrap();
        let here = DataDir::new(&tmp.path().join("here"));
        std::fs::create_dir_all(&here.root).unwrap();
        let sessions = sled_sessions(&here.store());
        let root = Position::initial("3x9".parse().unwrap());
        let id = sessions.create(&root, None, settings()).unwrap().id;
        let into = tmp.path().join("backup");
        let control = Control::default();
        let taken = std::thread::scope(|s| {
            let h = s.spawn(|| run(&sessions, id, &control, &here.logs()));
            while sessions.get(id).unwrap().checkpoints < 3 {
                assert!(!h.is_finished(), "solved before the backup");
                std::thread::sleep(Duration::from_millis(2));
            }
            let taken = take(&sessions, &into, &mut |_, _| {}).unwrap();
            assert!(
                !h.is_finished(),
                "the search went on while the backup was taken"
            );
            // The rest of the solve, where the backup was taken.
            let done = h.join().unwrap().unwrap();
            assert_eq!(done.state, State::Solved);
            taken
        });
        let value = sessions.get(id).unwrap().value;
        assert!(value.is_some());
        let mark = &taken.manifest.sessions[0];
        assert_eq!((mark.id, mark.state.as_str()), (id, "running"));
        assert!(mark.checkpoints >= 3 && taken.manifest.records > 0);

        // A backup directory that holds anything is refused, and left as it was.
        let again = take(&sessions, &into, &mut |_, _| {}).unwrap_err();
        assert!(again.to_string().contains("is not empty"), "{again}");
        assert_eq!(read_manifest(&into).unwrap(), taken.manifest);

        // Elsewhere: restored, resumed from the backup's checkpoint, solved the same.
        let there = DataDir::new(&tmp.path().join("there"));
        std::fs::create_dir_all(&there.root).unwrap();
        let restored = restore(&there, &into, 16 << 20).unwrap();
        assert_eq!(restored.set_aside, None);
        let moved = sled_sessions(&there.store());
        let rec = moved.get(id).unwrap();
        assert_eq!(rec.checkpoints, mark.checkpoints, "as the backup has it");
        assert_eq!(rec.state, State::Running);
        let done = run(&moved, id, &Control::default(), &there.logs()).unwrap();
        assert_eq!(done.state, State::Solved);
        assert_eq!(done.value, value);

        // Here again, over the store in place: it is set aside, and the work lost said.
        drop(sessions);
        let restored = restore(&here, &into, 16 << 20).unwrap();
        let aside = restored
            .set_aside
            .clone()
            .expect("the store in place is kept");
        assert!(aside.join("db").is_file() || aside.is_dir());
        assert_eq!(restored.lost.len(), 1, "{restored:?}");
        assert!(restored.lost[0].checkpoints > 0);
    }

    #[test]
    fn a_backup_without_its_manifest_or_with_a_damaged_store_is_not_restored() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::new(&tmp.path().join("data"));
        std::fs::create_dir_all(&data.root).unwrap();
        let none = restore(&data, &tmp.path().join("nothing"), 16 << 20).unwrap_err();
        assert!(none.to_string().contains("not a whole backup"), "{none}");
        // A manifest whose counts the store does not hold.
        let sessions = sled_sessions(&tmp.path().join("src"));
        let root = Position::initial("3x3".parse().unwrap());
        sessions.create(&root, None, settings()).unwrap();
        let into = tmp.path().join("b");
        let taken = take(&sessions, &into, &mut |_, _| {}).unwrap();
        let mut wrong = taken.manifest.clone();
        wrong.records += 1;
        std::fs::write(into.join(MANIFEST), serde_json::to_vec(&wrong).unwrap()).unwrap();
        let e = restore(&data, &into, 16 << 20).unwrap_err();
        assert!(e.to_string().contains("is damaged"), "{e}");
        assert!(
            !data.store().exists(),
            "nothing restored from a damaged backup"
        );
    }
}
