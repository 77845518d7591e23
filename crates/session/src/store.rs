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

use crate::record_files::{self, Pointer, ReadError, RecordFiles};

/// The record kinds, one tree each.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
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
    #[error(
        "store {path}: it failed writing ({why}) and takes no more writes until the process that has it open restarts"
    )]
    Poisoned { path: PathBuf, why: String },
    /// Its files are damaged: met opening it, reading it (sled panicked), or by a write in
    /// what the write had to read (a blob file deleted, cut short or changed). A store that
    /// meets it in a write takes other writes still: a restart would not mend it.
    #[error("store {path}: its files are damaged ({message}){DAMAGED_HINT}")]
    Damaged { path: PathBuf, message: String },
    /// One record's own file is damaged (`record_files`): the store and its other records
    /// are whole.
    #[error("store {path}: a record is damaged: {message}")]
    RecordDamaged { path: PathBuf, message: String },
}

/// `each` for the keys inside `prefix`: returns whether the key was inside (a scan from the
/// prefix on stops at the first key past it).
fn inside<'a>(prefix: &'a [u8], each: &'a mut dyn FnMut(&[u8])) -> impl FnMut(&[u8]) -> bool + 'a {
    move |k| {
        let inside = k.starts_with(prefix);
        if inside {
            each(k);
        }
        inside
    }
}

/// Runs `scan` with a visit that hands each readable record to `each` and ends at the first
/// that cannot be read, whose error it then returns.
fn until_damage(
    each: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    scan: impl FnOnce(&mut CheckedVisit<'_>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut damage = None;
    scan(&mut |k, v| match v {
        Ok(v) => each(k, v),
        Err(e) => {
            damage = Some(e);
            false
        }
    })?;
    damage.map_or(Ok(()), Err)
}

/// A key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);

/// What `Store::scan_while_checked` hands each record: its key, and its value or why it
/// cannot be read; returns whether to go on.
pub type CheckedVisit<'a> = dyn FnMut(&[u8], Result<&[u8], StoreError>) -> bool + 'a;

/// A key-value store with one ordered map per `Table`.
pub trait Store: Send + Sync {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Every key starting with `prefix`, in key order, handed to `each`.
    fn scan(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        self.scan_from(table, prefix, prefix, each)
    }
    /// Every key starting with `prefix` from `from` on, in key order.
    fn scan_from(
        &self,
        table: Table,
        prefix: &[u8],
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        self.scan_while(table, from, &mut |k, v| {
            let inside = k.starts_with(prefix);
            if inside {
                each(k, v);
            }
            inside
        })
    }
    /// Every key from `from` on, in key order, until `each` returns false.
    fn scan_while(
        &self,
        table: Table,
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StoreError>;
    /// As `scan_while`, but a record whose value cannot be read (`RecordDamaged`) is handed
    /// to `each` as its error instead of ending the scan.
    fn scan_while_checked(
        &self,
        table: Table,
        from: &[u8],
        each: &mut CheckedVisit<'_>,
    ) -> Result<(), StoreError> {
        self.scan_while(table, from, &mut |k, v| each(k, Ok(v)))
    }
    /// Every key starting with `prefix`, in key order, without reading the values (a
    /// damaged value is no error here).
    fn scan_keys(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<(), StoreError> {
        let mut inside = inside(prefix, each);
        self.scan_while_checked(table, prefix, &mut |k, _| inside(k))
    }
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
    /// Gives back the memory of what was read (a backend that keeps it); every record stays.
    fn release_cache(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Why the store takes no more writes, once one failed in a way it keeps (a full disk
    /// under sled); `None` while it works. Only a new process heals it.
    fn poisoned(&self) -> Option<String> {
        None
    }
    /// Bytes free on the store's file system (`None` for a store in memory).
    fn free_bytes(&self) -> Option<u64> {
        None
    }
}

/// The store on disk, in sled.
///
/// sled 0.34 keeps every page it reads in memory while the database is open, whatever its
/// cache capacity: reading a first-level tree's chunks on resume left their gigabytes
/// resident for good. `release_cache` therefore closes and reopens the database, which the
/// store does itself once its scans have read `RELEASE_AFTER_READING` (the open handles are
/// behind a lock: every call waits for it).
pub struct SledStore {
    path: PathBuf,
    cache_bytes: u64,
    /// `None` only after a reopen failed: every call then reports it.
    open: std::sync::RwLock<Option<Sled>>,
    /// Bytes of values scans read since the last release.
    read_since_release: std::sync::atomic::AtomicU64,
    /// The first write error. sled 0.34 keeps it: every later flush fails, and closing the
    /// database hangs in its flush on drop, so the store is not closed or reopened in this
    /// process after one (the daemon restarts itself instead).
    poisoned: std::sync::OnceLock<String>,
    /// The disk was seen short of room (below `DISK_MARGIN`) since the last sync.
    short: std::sync::atomic::AtomicBool,
    /// The values of `Table::Nodes` and `Table::Patches`, each in a file of its own.
    files: RecordFiles,
    /// Held by a commit from reading the pointers it replaces to its end.
    commits: Mutex<()>,
}

/// Whether `table` keeps its values in record files (sled keeps a pointer): the large values,
/// each one session's.
fn in_files(table: Table) -> bool {
    matches!(table, Table::Nodes | Table::Patches)
}

/// How long a commit or flush may take once the disk was short of room, and in any case,
/// before the store is taken for failed (`SledStore::bounded`).
const PATIENCE_AFTER_SHORT: std::time::Duration = std::time::Duration::from_secs(30);
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(600);

/// What to do with a store that cannot be read, said with its error.
const DAMAGED_HINT: &str = "; if the disk was full or the machine crashed, free space and try again; otherwise `fanorona store restore BACKUP` puts a backup in its place (the daemon keeps its own under DATA_DIR/backups and restores the newest by itself when it starts), or move the store aside (keep it) and start again";

/// Removes the snapshot files sled was still writing when it stopped (`snap.N.generating`): a
/// full disk leaves an empty one, which sled then reads as corrupt data for good. sled never
/// reads an unfinished snapshot otherwise; the finished ones are renamed without the suffix.
fn remove_unfinished_snapshots(path: &Path) {
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `path`'s store named damaged, with what sled said (`message`).
fn damaged(path: &Path, message: String) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        message,
    }
}

/// `key` in hexadecimal, to name a record (and to keep bytes in a JSON record).
pub(crate) fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `f`, catching a panic without the default hook's text on stderr: sled panics on some
/// damaged files, and the store answers those with one line of its own. A panic elsewhere,
/// or on another thread, is printed as before.
fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                before(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    result
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
}

/// Bytes scans read after which the store gives back what sled keeps of them.
const RELEASE_AFTER_READING: u64 = 256 << 20;

/// Opens tried when the store reopens (50 ms apart: a minute).
const REOPEN_TRIES: u32 = 1200;

/// Opens tried while the store's file lock is held (50 ms apart: two seconds), for a handle of
/// this process whose background threads are still ending; another process's lock is longer.
const LOCK_TRIES: u32 = 40;

/// Whether sled could not open because the store's file lock is taken.
fn is_locked(e: &sled::Error) -> bool {
    // sled wraps the lock's WouldBlock in an error of its own words ("could not acquire
    // lock on ...") whose kind is Other.
    matches!(e, sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock
        || io.to_string().contains("could not acquire lock"))
}

/// An open sled database and its trees, one per `Table`.
struct Sled {
    db: sled::Db,
    trees: Vec<sled::Tree>,
}

impl SledStore {
    /// Opens (or creates) the store in directory `path`; `cache_bytes` is sled's page cache.
    pub fn open(path: &Path, cache_bytes: u64) -> Result<SledStore, StoreError> {
        let sled = Self::open_sled(path, cache_bytes)?;
        let files = RecordFiles::open(path).map_err(|source| StoreError::Io {
            path: path.join(record_files::DIR),
            source,
        })?;
        let store = SledStore {
            path: path.to_path_buf(),
            cache_bytes,
            open: std::sync::RwLock::new(Some(sled)),
            read_since_release: std::sync::atomic::AtomicU64::new(0),
            poisoned: std::sync::OnceLock::new(),
            short: Default::default(),
            files,
            commits: Mutex::new(()),
        };
        // What sled replayed at its open made durable first: a file the replayed log no
        // longer names may be named again if that log were lost.
        store.sync_files()?;
        store.remove_unnamed_files()?;
        Ok(store)
    }

    /// Removes the record files no pointer names (a crash between a file's write and its
    /// commit, or between a commit and the sync that removes what it replaced, leaves them).
    fn remove_unnamed_files(&self) -> Result<(), StoreError> {
        let mut live = std::collections::HashSet::new();
        for table in Table::ALL.into_iter().filter(|&t| in_files(t)) {
            self.scan_raw(table, &[], &mut |_, v| {
                if let Some(p) = Pointer::decode(v) {
                    live.insert(p.file);
                }
                true
            })?;
        }
        let removed = self.files.remove_unnamed(&live);
        if removed > 0 {
            tracing::info!(
                "store {}: removed {removed} record files no record names (left by a stop between a write and its commit)",
                self.path.display()
            );
        }
        Ok(())
    }

    /// Every key of `table` from `from` on with the value sled holds (a pointer for the
    /// tables in files), until `each` returns false.
    fn scan_raw(
        &self,
        table: Table,
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StoreError> {
        let mut read = 0;
        self.with(|s| {
            for kv in s.trees[table as usize].range(from..) {
                let (k, v) = kv.map_err(|e| self.err(e))?;
                read += v.len() as u64;
                if !each(&k, &v) {
                    break;
                }
            }
            Ok(())
        })?;
        self.note_read(read)
    }

    /// Every key of `table` from `from` on while it starts with `prefix`, with its value
    /// (read from its file for the tables in files) or why it cannot be read, until `each`
    /// returns false. A key past `prefix` ends the scan before its value is read.
    fn scan_resolved(
        &self,
        table: Table,
        from: &[u8],
        prefix: &[u8],
        each: &mut CheckedVisit<'_>,
    ) -> Result<(), StoreError> {
        self.scan_raw(table, from, &mut |k, raw| {
            k.starts_with(prefix)
                && match self.resolve(table, k, raw) {
                    Ok(v) => each(k, Ok(&v)),
                    Err(e) => each(k, Err(e)),
                }
        })
    }

    /// The value of `key` that sled holds as `raw`: read from its file when it is a pointer.
    fn resolve<'a>(
        &self,
        table: Table,
        key: &[u8],
        raw: &'a [u8],
    ) -> Result<std::borrow::Cow<'a, [u8]>, StoreError> {
        match Pointer::decode(raw).filter(|_| in_files(table)) {
            None => Ok(std::borrow::Cow::Borrowed(raw)),
            Some(p) => self
                .files
                .read(key, &p)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| match e {
                    ReadError::Damaged(why) => StoreError::RecordDamaged {
                        path: self.path.clone(),
                        message: format!("{} {}: {why}", table.name(), hex(key)),
                    },
                    ReadError::Io { path, source } => StoreError::Io { path, source },
                }),
        }
    }

    fn open_sled(path: &Path, cache_bytes: u64) -> Result<Sled, StoreError> {
        let err = |e: sled::Error| match &e {
            // sled's own words ("Read corrupted data at file offset None backtrace ()") name
            // neither the damage nor a way out.
            sled::Error::Corruption { .. } => damaged(path, "sled: corrupted data".into()),
            // sled is pinned to one version: an open it calls unsupported (its config file
            // `conf` failing its checksum, say) or a bug met reading is damage.
            sled::Error::Unsupported(why) | sled::Error::ReportableBug(why) => {
                damaged(path, format!("sled: {why}"))
            }
            e => StoreError::Backend {
                path: path.to_path_buf(),
                message: if is_locked(e) {
                    format!("{e}: another process has the store open")
                } else {
                    format!("{e}{DAMAGED_HINT}")
                },
            },
        };
        remove_unfinished_snapshots(path);
        // sled panics on some damaged files (an index out of bounds in its segment reader on a
        // truncated log): caught here, at the store's door, and named like any other damage.
        let opened = quietly(|| {
            // A handle of this process dropped just before keeps the file lock until the last
            // of its background threads ends: its lock is waited for a little.
            let mut tries = 0;
            let db = loop {
                match sled::Config::new()
                    .path(path)
                    .cache_capacity(cache_bytes)
                    .mode(sled::Mode::LowSpace)
                    .open()
                {
                    Err(e) if is_locked(&e) && tries < LOCK_TRIES => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    other => break other?,
                }
            };
            let trees = Table::ALL
                .iter()
                .map(|t| db.open_tree(t.name()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok::<_, sled::Error>(Sled { db, trees })
        });
        match opened {
            Ok(result) => result.map_err(err),
            Err(panic) => Err(damaged(
                path,
                format!("sled: {}", panic_text(panic.as_ref())),
            )),
        }
    }

    /// Runs `f` on the open database.
    fn with<R>(&self, f: impl FnOnce(&Sled) -> Result<R, StoreError>) -> Result<R, StoreError> {
        let open = self.open.read().expect("store lock");
        match open.as_ref() {
            // sled panics on some damaged pages (an assertion in its node search, seen on a
            // tree whose blob file was deleted): caught, and named as damage.
            Some(s) => quietly(|| f(s))
                .unwrap_or_else(|panic| {
                    Err(damaged(
                        &self.path,
                        format!("sled: {}", panic_text(panic.as_ref())),
                    ))
                }),
            None => Err(self.err(
                "closed: it could not be opened again after an error; the next try may (free space if the disk is full)",
            )),
        }
    }

    /// Counts `bytes` read by a scan, and gives the memory back once the scans since the
    /// last release read `RELEASE_AFTER_READING` (the daemon's periodic reads of the rote
    /// table, a certificate writer's or `session moves`' read of a tree: 2.8 GB had piled up
    /// 45 minutes after a resume).
    fn note_read(&self, bytes: u64) -> Result<(), StoreError> {
        use std::sync::atomic::Ordering;
        let total = self.read_since_release.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total >= RELEASE_AFTER_READING {
            self.read_since_release.store(0, Ordering::Relaxed);
            self.release_cache()?;
        }
        Ok(())
    }

    /// All of `writes` or none: the values of the tables in files written to new files and
    /// made durable first, then every record (pointers for those) in one sled transaction;
    /// the files of the pointers it replaced are retired, for the next sync to remove.
    fn commit_with_files(&self, writes: &[Write]) -> Result<(), StoreError> {
        let _one = self.commits.lock().expect("commit lock");
        let mut written = Vec::new();
        let mut replaced = Vec::new();
        let mut pointers = Vec::with_capacity(writes.len());
        let io = |source| StoreError::Io {
            path: self.path.join(record_files::DIR),
            source,
        };
        let staged = (|| {
            for w in writes {
                if !in_files(w.table) {
                    pointers.push(None);
                    continue;
                }
                let old = self.with(|s| {
                    s.trees[w.table as usize]
                        .get(&w.key)
                        .map_err(|e| self.err(e))
                })?;
                replaced.extend(old.and_then(|v| Pointer::decode(&v)).map(|p| p.file));
                pointers.push(match &w.value {
                    Some(v) => {
                        let p = self.files.write(&w.key, v).map_err(io)?;
                        written.push(p);
                        Some(p.encode())
                    }
                    None => None,
                });
            }
            self.files.make_durable(&written).map_err(io)
        })();
        if let Err(e) = staged {
            self.files.discard(&written);
            return Err(e);
        }
        // A failed commit leaves its files: sled may still apply it (a commit that timed
        // out goes on in its thread); the next open removes them if nothing names them.
        self.commit_sled(writes, &pointers)?;
        self.files.retire(replaced);
        Ok(())
    }

    /// All of `writes` or none, in one sled transaction over the tables; a write whose
    /// `pointers` entry is set stores that pointer for its value.
    fn commit_sled(
        &self,
        writes: &[Write],
        pointers: &[Option<Vec<u8>>],
    ) -> Result<(), StoreError> {
        use sled::Transactional;
        let mut batches: Vec<sled::Batch> =
            Table::ALL.iter().map(|_| sled::Batch::default()).collect();
        for (w, p) in writes.iter().zip(pointers) {
            let b = &mut batches[w.table as usize];
            match (p, &w.value) {
                (Some(p), _) => b.insert(w.key.as_slice(), p.as_slice()),
                (None, Some(v)) => b.insert(w.key.as_slice(), v.as_slice()),
                (None, None) => b.remove(w.key.as_slice()),
            }
        }
        let t = self.with(|s| Ok(s.trees.clone()))?;
        self.bounded("commit", move || {
            let result: sled::transaction::TransactionResult<(), ()> =
                (&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]).transaction(|(a, b, c, d, e, f)| {
                    for (tree, batch) in [a, b, c, d, e, f].into_iter().zip(&batches) {
                        tree.apply_batch(batch)?;
                    }
                    Ok(())
                });
            result.map_err(|e| match e {
                sled::transaction::TransactionError::Storage(e) => e,
                sled::transaction::TransactionError::Abort(()) => {
                    sled::Error::Unsupported("the transaction aborted".into())
                }
            })
        })
    }

    /// Runs sled's `what` (a commit or a flush) on a thread of its own and waits for it, but
    /// not forever: after a write error sled may wait for good on a buffer it never writes
    /// (seen after a full disk, with room back and no error returned). A wait past
    /// `PATIENCE_AFTER_SHORT` once the disk was short of room since the last sync, or past
    /// `PATIENCE` in any case, takes the store for failed; the thread is left behind, for
    /// the process's restart to end.
    fn bounded(
        &self,
        what: &str,
        f: impl FnOnce() -> Result<(), sled::Error> + Send + 'static,
    ) -> Result<(), StoreError> {
        use crossbeam_channel::RecvTimeoutError;
        let (done, result) = crossbeam_channel::bounded(1);
        std::thread::Builder::new()
            .name(format!("store-{what}"))
            .spawn(move || {
                let _ = done.send(f());
            })
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })?;
        let start = std::time::Instant::now();
        loop {
            match result.recv_timeout(std::time::Duration::from_secs(1)) {
                Ok(r) => {
                    return r.map_err(|e| match &e {
                        // A page that could not be read back: damage, not a failed write.
                        sled::Error::Corruption { .. } => {
                            damaged(&self.path, format!("sled: {e:?}"))
                        }
                        sled::Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
                            damaged(&self.path, format!("a file of it is missing: {io}"))
                        }
                        _ => self.err(format!("{e:?}")),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.err(format!("sled's {what} panicked")));
                }
                Err(RecvTimeoutError::Timeout) => {
                    // (Notes a disk short of room.)
                    let _ = self.free_bytes();
                    let waited = start.elapsed();
                    let short = self.short.load(std::sync::atomic::Ordering::SeqCst);
                    if waited > PATIENCE || short && waited > PATIENCE_AFTER_SHORT {
                        return Err(self.err(format!(
                            "sled's {what} has not returned in {} s{}",
                            waited.as_secs(),
                            if short {
                                " since the disk was short of room"
                            } else {
                                ""
                            }
                        )));
                    }
                }
            }
        }
    }

    /// sled's flush of every commit so far, bounded (`bounded`); a failure poisons the store.
    fn flush(&self) -> Result<(), StoreError> {
        self.writable()?;
        let db = self.with(|s| Ok(s.db.clone()))?;
        self.bounded("flush", move || db.flush().map(|_| ()))
            .inspect_err(|e| self.poison(e))
    }

    /// Refuses a write once one failed (a write to a failed sled may block for good).
    fn writable(&self) -> Result<(), StoreError> {
        match self.poisoned.get() {
            Some(why) => Err(StoreError::Poisoned {
                path: self.path.clone(),
                why: why.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Notes write error `e` as the one the store keeps, unless it is damage met reading.
    fn poison(&self, e: &StoreError) {
        if !matches!(e, StoreError::Damaged { .. }) {
            let _ = self.poisoned.set(e.to_string());
        }
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
        let raw = self.with(|s| s.trees[table as usize].get(key).map_err(|e| self.err(e)))?;
        raw.map(|v| self.resolve(table, key, &v).map(|v| v.into_owned()))
            .transpose()
    }

    fn scan_while(
        &self,
        table: Table,
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StoreError> {
        until_damage(each, |visit| self.scan_resolved(table, from, &[], visit))
    }

    /// Only the records inside `prefix` are read from their files: the one after it may be
    /// another session's, and damaged.
    fn scan_from(
        &self,
        table: Table,
        prefix: &[u8],
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), StoreError> {
        until_damage(
            &mut |k, v| {
                each(k, v);
                true
            },
            |visit| self.scan_resolved(table, from, prefix, visit),
        )
    }

    fn scan_keys(
        &self,
        table: Table,
        prefix: &[u8],
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<(), StoreError> {
        let mut inside = inside(prefix, each);
        self.scan_raw(table, prefix, &mut |k, _| inside(k))
    }

    fn scan_while_checked(
        &self,
        table: Table,
        from: &[u8],
        each: &mut CheckedVisit<'_>,
    ) -> Result<(), StoreError> {
        self.scan_resolved(table, from, &[], each)
    }

    fn last(&self, table: Table, prefix: &[u8]) -> Result<Option<Pair>, StoreError> {
        let raw = self.with(
            |s| match s.trees[table as usize].scan_prefix(prefix).next_back() {
                None => Ok(None),
                Some(kv) => kv.map(Some).map_err(|e| self.err(e)),
            },
        )?;
        raw.map(|(k, v)| Ok((k.to_vec(), self.resolve(table, &k, &v)?.into_owned())))
            .transpose()
    }

    fn commit(&self, writes: &[Write]) -> Result<(), StoreError> {
        self.writable()?;
        self.commit_with_files(writes).inspect_err(|e| {
            // A record file that could not be written leaves sled as it was.
            if !matches!(e, StoreError::Io { .. }) {
                self.poison(e)
            }
        })
    }

    fn sync(&self) -> Result<(), StoreError> {
        // What was retired before the flush is named by no record the flush makes durable.
        let retired = self.files.take_retired();
        let synced = self
            .flush()
            .and_then(|()| self.sync_files().inspect_err(|e| self.poison(e)));
        if let Err(e) = synced {
            self.files.retire(retired);
            return Err(e);
        }
        self.files.remove_all(&retired);
        self.short.store(false, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn poisoned(&self) -> Option<String> {
        self.poisoned.get().cloned()
    }

    fn free_bytes(&self) -> Option<u64> {
        let free = fanorona_rules::machine::disk_available(&self.path);
        if free.is_some_and(|f| f < super::DISK_MARGIN) {
            self.short.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        free
    }

    fn size_on_disk(&self) -> u64 {
        self.with(|s| Ok(s.db.size_on_disk().unwrap_or(0)))
            .unwrap_or(0)
            + self.files.bytes()
    }

    fn release_cache(&self) -> Result<(), StoreError> {
        // A failed store is not closed (its close hangs); flushed first, outside the lock,
        // so that the close below has nothing left to wait for (as the flush here always
        // was: reading is no reason to fsync).
        if self.poisoned().is_some() {
            return Ok(());
        }
        self.flush()?;
        let mut open = self.open.write().expect("store lock");
        drop(open.take());
        // The old database is dropped before the new one opens; its file lock goes with the
        // last of its background threads, so the open is tried again for a while.
        let mut tries = 0;
        let sled = loop {
            match Self::open_sled(&self.path, self.cache_bytes) {
                Ok(s) => break s,
                Err(e) if tries >= REOPEN_TRIES => return Err(e),
                Err(_) => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        };
        *open = Some(sled);
        fanorona_rules::machine::give_back_free_memory();
        Ok(())
    }
}

/// A store's records summed up: how many, the bytes of their keys and values, and a digest
/// of them all in table and key order (so two stores with equal contents agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    pub records: u64,
    pub bytes: u64,
    pub digest: u64,
}

impl Contents {
    fn add(&mut self, table: Table, key: &[u8], value: &[u8]) {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        (self.digest, table as u8, key, value).hash(&mut h);
        self.digest = h.finish();
        self.records += 1;
        self.bytes += (key.len() + value.len()) as u64;
    }
}

/// A record a copy left out: its value could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    pub table: Table,
    pub key: Vec<u8>,
    pub why: String,
}

/// Reads the next piece of `table` from `start` on: every record to `each`, until the piece
/// holds `max_bytes` of keys and values or `max_records` records. `start` is left at the
/// key after the last one read, for the next piece. Returns whether the piece held any
/// record. Between pieces no scan is open, so the caller may write, and a store that keeps
/// what it reads can let go of it. A record whose value cannot be read ends the piece with
/// its error, unless `left_out` is given: then it is skipped and said there.
fn next_piece(
    store: &dyn Store,
    table: Table,
    start: &mut Vec<u8>,
    max_bytes: u64,
    max_records: usize,
    mut left_out: Option<&mut Vec<LeftOut>>,
    each: &mut dyn FnMut(&[u8], &[u8]),
) -> Result<bool, StoreError> {
    let (mut bytes, mut records) = (0u64, 0usize);
    let mut last = None;
    let mut damage = None;
    store.scan_while_checked(table, start, &mut |k, v| {
        match (v, left_out.as_deref_mut()) {
            (Ok(v), _) => {
                each(k, v);
                bytes += (k.len() + v.len()) as u64;
            }
            (Err(e), Some(list)) => list.push(LeftOut {
                table,
                key: k.to_vec(),
                why: e.to_string(),
            }),
            (Err(e), None) => {
                damage = Some(e);
                return false;
            }
        }
        records += 1;
        let more = bytes < max_bytes && records < max_records;
        if !more {
            last = Some(k.to_vec());
        }
        more
    })?;
    if let Some(e) = damage {
        return Err(e);
    }
    match last {
        Some(key) => {
            *start = key;
            start.push(0);
            Ok(true)
        }
        // The table's end was reached.
        None => Ok(false),
    }
}

/// What `store` holds, read through in pieces of about `scan_bytes` each (so that a store
/// that keeps what it reads can let go of it between them). A damaged record is an error.
pub fn contents(store: &dyn Store, scan_bytes: u64) -> Result<Contents, StoreError> {
    let mut c = Contents::default();
    for table in Table::ALL {
        let mut start = Vec::new();
        while next_piece(
            store,
            table,
            &mut start,
            scan_bytes,
            usize::MAX,
            None,
            &mut |k, v| c.add(table, k, v),
        )? {}
    }
    Ok(c)
}

/// Records a copy writes per batch at most: sled's transactions slow down and take memory
/// out of all proportion with many small writes (a batch of 1.4 million curve points took
/// minutes and gigabytes).
const COPY_BATCH_RECORDS: usize = 10_000;

/// Copies every record of `from` into `to` (a new, empty store) in batches of about
/// `batch_bytes` (or `COPY_BATCH_RECORDS`), and syncs `to`; `progress` sees each table's
/// name and the contents copied so far after every batch. The copy gives back what it keeps
/// in memory every `release_bytes` copied (the source does so by itself), so the copy of a
/// large store takes little memory. A record whose value cannot be read fails the copy,
/// unless `left_out` is given: then the copy goes on without it and says it there. Returns
/// what was copied.
pub fn copy_all(
    from: &dyn Store,
    to: &dyn Store,
    batch_bytes: u64,
    release_bytes: u64,
    mut left_out: Option<&mut Vec<LeftOut>>,
    progress: &mut dyn FnMut(Table, &Contents),
) -> Result<Contents, StoreError> {
    let mut copied = Contents::default();
    // `copied.bytes` at the last release.
    let mut released_at = 0u64;
    for table in Table::ALL {
        let mut start = Vec::new();
        loop {
            let mut batch = Vec::new();
            let more = next_piece(
                from,
                table,
                &mut start,
                batch_bytes,
                COPY_BATCH_RECORDS,
                left_out.as_deref_mut(),
                &mut |k, v| {
                    copied.add(table, k, v);
                    batch.push(Write::put(table, k.to_vec(), v.to_vec()));
                },
            )?;
            if !batch.is_empty() {
                to.commit(&batch)?;
                progress(table, &copied);
            }
            if copied.bytes - released_at >= release_bytes {
                // The source lets go of what it read by itself; the copy of what it wrote.
                to.sync()?;
                to.release_cache()?;
                released_at = copied.bytes;
            }
            if !more {
                break;
            }
        }
    }
    to.sync()?;
    Ok(copied)
}

/// Every table's map in one, keyed by (table, key).
type Tables = BTreeMap<(Table, Vec<u8>), Vec<u8>>;

/// The store in memory: the model the sled store is tested against, and a store for runs
/// that need no persistence. `fail_writes` makes every `apply` fail (a full disk),
/// `fail_reads` every scan of the first-level trees (a damaged file);
/// `free`, if set, is the room it says its disk has (`u64::MAX`: none said).
pub struct MemStore {
    maps: Mutex<Tables>,
    pub fail_writes: std::sync::atomic::AtomicBool,
    pub fail_reads: std::sync::atomic::AtomicBool,
    pub free: std::sync::atomic::AtomicU64,
}

impl Default for MemStore {
    fn default() -> MemStore {
        MemStore {
            maps: Mutex::default(),
            fail_writes: Default::default(),
            fail_reads: Default::default(),
            free: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
    }
}

impl MemStore {
    pub fn new() -> MemStore {
        MemStore::default()
    }
}

impl Store for MemStore {
    fn free_bytes(&self) -> Option<u64> {
        let free = self.free.load(std::sync::atomic::Ordering::SeqCst);
        (free != u64::MAX).then_some(free)
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let maps = self.maps.lock().expect("store lock");
        Ok(maps.get(&(table, key.to_vec())).cloned())
    }

    fn scan_while(
        &self,
        table: Table,
        from: &[u8],
        each: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StoreError> {
        if table == Table::Nodes && self.fail_reads.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(StoreError::RecordDamaged {
                path: PathBuf::from("(memory)"),
                message: "a node chunk cannot be read (a test's damage)".into(),
            });
        }
        let maps = self.maps.lock().expect("store lock");
        for ((_, k), v) in maps
            .range((table, from.to_vec())..)
            .take_while(|((t, _), _)| *t == table)
        {
            if !each(k, v) {
                break;
            }
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

    /// A store whose files were cut short (at many lengths) or that a full disk left with an
    /// empty unfinished snapshot opens or says it is damaged; it never panics.
    #[test]
    fn a_damaged_store_is_named_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        {
            let s = SledStore::open(&path, 1 << 20).unwrap();
            for i in 0..2000u32 {
                s.apply(&[Write::put(
                    Table::Curve,
                    i.to_be_bytes().to_vec(),
                    vec![7; 300],
                )])
                .unwrap();
            }
            s.sync().unwrap();
        }
        // An empty unfinished snapshot, as a full disk leaves it: the store still opens whole.
        std::fs::write(path.join("snap.00000000000001F0.generating"), b"").unwrap();
        let s = SledStore::open(&path, 1 << 20).unwrap();
        assert_eq!(
            s.get(Table::Curve, &5u32.to_be_bytes()).unwrap(),
            Some(vec![7; 300])
        );
        drop(s);
        let db = path.join("db");
        let whole = std::fs::read(&db).unwrap();
        let (mut opened, mut refused) = (0, 0);
        let cuts = [
            whole.len() - 1,
            whole.len() / 2,
            whole.len() / 3,
            65536,
            5000,
            4096,
            700,
            100,
            10,
            0,
        ];
        for cut in cuts {
            let copy = dir.path().join(format!("cut-{cut}"));
            std::fs::create_dir_all(&copy).unwrap();
            for e in std::fs::read_dir(&path).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_file() {
                    std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
                }
            }
            std::fs::write(copy.join("db"), &whole[..cut]).unwrap();
            match SledStore::open(&copy, 1 << 20) {
                Ok(_) => opened += 1,
                Err(e) => {
                    refused += 1;
                    let text = e.to_string();
                    assert!(text.contains(&copy.display().to_string()), "{text}");
                    assert!(text.contains("move the store aside"), "{text}");
                }
            }
        }
        assert_eq!(opened + refused, cuts.len());
        // Its config file with a byte changed: named damaged (so the daemon restores a
        // backup), not "unsupported".
        let conf = path.join("conf");
        let mut bytes = std::fs::read(&conf).unwrap();
        bytes[3] ^= 0x20;
        std::fs::write(&conf, bytes).unwrap();
        let e = SledStore::open(&path, 1 << 20).err().expect("refused");
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
    }

    /// Reopening the database while other threads write and read loses nothing.
    #[test]
    fn releasing_the_cache_beside_writers_keeps_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let s = SledStore::open(&dir.path().join("store"), 1 << 20).unwrap();
        std::thread::scope(|scope| {
            for t in 0..2u8 {
                let s = &s;
                scope.spawn(move || {
                    for i in 0..300u32 {
                        let key = [&[t][..], &i.to_be_bytes()].concat();
                        s.apply(&[Write::put(Table::Curve, key.clone(), vec![t; 100])])
                            .unwrap();
                        assert_eq!(s.get(Table::Curve, &key).unwrap(), Some(vec![t; 100]));
                    }
                });
            }
            for _ in 0..20 {
                s.release_cache().unwrap();
            }
        });
        assert_eq!(contents(&s, 1000).unwrap().records, 600);
    }

    /// Scans that read more than `RELEASE_AFTER_READING` release the cache themselves, and
    /// every record stays.
    #[test]
    fn long_reading_releases_the_cache_by_itself() {
        let dir = tempfile::tempdir().unwrap();
        let s = SledStore::open(&dir.path().join("store"), 1 << 20).unwrap();
        let writes: Vec<Write> = (0..64u32)
            .map(|i| {
                Write::put(
                    Table::Nodes,
                    i.to_be_bytes().to_vec(),
                    vec![i as u8; 1 << 16],
                )
            })
            .collect();
        s.apply(&writes).unwrap();
        let per_scan = 64 << 16;
        let scans = RELEASE_AFTER_READING / per_scan + 1;
        for _ in 0..scans {
            let mut n = 0;
            s.scan(Table::Nodes, &[], &mut |_, v| n += v.len() as u64)
                .unwrap();
            assert_eq!(n, per_scan);
        }
        let since = s
            .read_since_release
            .load(std::sync::atomic::Ordering::Relaxed);
        assert!(since < RELEASE_AFTER_READING, "{since}: never released");
        assert_eq!(
            s.get(Table::Nodes, &63u32.to_be_bytes()).unwrap(),
            Some(vec![63; 1 << 16])
        );
    }

    #[test]
    fn a_copy_holds_the_same_contents() {
        let dir = tempfile::tempdir().unwrap();
        let from = SledStore::open(&dir.path().join("a"), 1 << 20).unwrap();
        // Many rewrites of the same keys: the garbage a copy leaves behind.
        for round in 0..20u8 {
            let writes: Vec<Write> = (0..2000u32)
                .map(|i| {
                    let t = Table::ALL[i as usize % Table::ALL.len()];
                    Write::put(t, i.to_be_bytes().to_vec(), vec![round; 200])
                })
                .collect();
            from.apply(&writes).unwrap();
        }
        let to = SledStore::open(&dir.path().join("b"), 1 << 20).unwrap();
        let mut seen = 0;
        let copied = copy_all(&from, &to, 50_000, 120_000, None, &mut |_, c| {
            seen = c.records
        })
        .unwrap();
        assert_eq!(copied.records, 2000);
        assert_eq!(seen, 2000);
        assert_eq!(copied.bytes, 2000 * 204);
        assert_eq!(contents(&from, 100_000).unwrap(), copied);
        assert_eq!(contents(&to, u64::MAX).unwrap(), copied);
        assert_eq!(
            to.get(Table::Rote, &4u32.to_be_bytes()).unwrap(),
            Some(vec![19; 200])
        );
        // Any change shows in the digest.
        to.apply(&[Write::put(
            Table::Meta,
            0u32.to_be_bytes().to_vec(),
            vec![18; 200],
        )])
        .unwrap();
        assert_ne!(contents(&to, u64::MAX).unwrap().digest, copied.digest);
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
