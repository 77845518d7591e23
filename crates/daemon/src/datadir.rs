//! The data directory and its lock: where the daemon keeps its store, socket, logs and
//! certificates, and the lock file that keeps a second process (a daemon, a solve, a command
//! reading the store) out while one holds it.
//!
//! Layout: `store/` (the session store) and `store.created` (written when it was made),
//! `daemon.lock`, `daemon.sock`, `logs/session-N.jsonl` (one progress log per session),
//! `certificates/session-N.*` (the certificates of solved sessions), `web.token` (the web
//! app's secret).
//!
//! The directory is its owner's alone (0700), as PostgreSQL keeps its own: the store, logs
//! and certificates are nobody else's to read, and the socket nobody else's to reach.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thiserror::Error;

use fanorona_session::SessionError;

#[derive(Debug, Error)]
pub enum DaemonError {
    #[error("{path} is in use by process {pid} (a daemon or a solve); stop it first")]
    Locked { path: PathBuf, pid: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a directory: the data directory holds the store, the lock and the logs")]
    NotADirectory { path: PathBuf },
    #[error(
        "{path} belongs to uid {owner}, not to this user (uid {me}): run as its owner, or give another --data-dir"
    )]
    NotOwner { path: PathBuf, owner: u32, me: u32 },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(
        "stopped without its final checkpoint ({0}); the store holds the checkpoint before, from which the next start resumes"
    )]
    Unwritten(String),
    /// The store failed a write (`{0}`): the daemon starts again in a new process, which
    /// reopens it.
    #[error("the store failed writing ({0}); restarting to reopen it")]
    Restart(String),
    /// A backup or a restore refused, with what to do.
    #[error("{0}")]
    Backup(String),
}

impl DaemonError {
    /// Whether the store is damaged and no backup mended it: a restart cannot either (the
    /// daemon exits 3, which its unit does not restart).
    pub fn is_damaged_store(&self) -> bool {
        matches!(self, DaemonError::Session(e) if is_damage(e))
    }

    /// Whether the user can mend it (another process holds the directory, the path is not
    /// a directory or cannot be made one: a parent missing, not a directory or not
    /// writable), as opposed to a failure of the machine (a full disk, say).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            DaemonError::Locked { .. }
                | DaemonError::NotADirectory { .. }
                | DaemonError::NotOwner { .. }
                | DaemonError::Backup(_)
        ) || matches!(
            self,
            DaemonError::Io { what: DATA_DIR_UNMADE, source, .. } if matches!(
                source.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::NotADirectory
                    | std::io::ErrorKind::ReadOnlyFilesystem
            )
        )
    }
}

/// The paths under a data directory.
#[derive(Clone, Debug)]
pub struct DataDir {
    pub root: PathBuf,
}

impl DataDir {
    pub fn new(root: &Path) -> DataDir {
        DataDir {
            root: root.to_path_buf(),
        }
    }
    pub fn store(&self) -> PathBuf {
        self.root.join("store")
    }
    /// Written when the store was created: a store missing beside it is damaged, not new.
    pub fn created(&self) -> PathBuf {
        self.root.join("store.created")
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join("daemon.lock")
    }
    pub fn socket(&self) -> PathBuf {
        self.root.join("daemon.sock")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
}

/// Holds the data directory for this process until dropped.
pub struct DataLock {
    _file: File,
}

/// What a data directory that cannot be created is called in its error.
const DATA_DIR_UNMADE: &str = "cannot create the data directory";

/// Takes the data directory's lock as `lock` does, waiting up to `patience` while another
/// command holds it for a moment (`session list` reading the store); a daemon (or a solve)
/// that answers on the socket keeps it, and is named at once.
pub fn lock_patiently(dir: &DataDir, patience: Duration) -> Result<DataLock, DaemonError> {
    let since = Instant::now();
    loop {
        match lock(dir) {
            Err(DaemonError::Locked { .. })
                if since.elapsed() < patience
                    && std::os::unix::net::UnixStream::connect(dir.socket()).is_err() =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Takes the data directory's lock, or names the process that holds it. The process that
/// holds it writes the directory's files, which are its owner's alone: its umask becomes 077
/// (`owner_only_files`), whether it is the daemon or a command working without one.
pub fn lock(dir: &DataDir) -> Result<DataLock, DaemonError> {
    owner_only_files();
    let io = |what, source| DaemonError::Io {
        what,
        path: dir.lock(),
        source,
    };
    if let Privacy::Tightened { from } = make_private(&dir.root)? {
        tracing::warn!(
            "{}: was mode {from:o}, open to other users; now 0700 (the owner's alone)",
            dir.root.display()
        );
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.lock())
        .map_err(|e| io("cannot open", e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            return Err(DaemonError::Locked {
                path: dir.root.clone(),
                pid: pid.trim().to_string(),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io("cannot lock", e)),
    }
    file.set_len(0).map_err(|e| io("cannot write", e))?;
    file.rewind().map_err(|e| io("cannot write", e))?;
    write!(file, "{}", std::process::id()).map_err(|e| io("cannot write", e))?;
    file.sync_all().map_err(|e| io("cannot write", e))?;
    Ok(DataLock { _file: file })
}

/// The data directory's mode: its owner's alone.
const PRIVATE: u32 = 0o700;

/// What `make_private` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// The directory was made, owner-only.
    Made,
    /// It was there, owner-only already.
    Kept,
    /// It was there with this mode, open to group or others, and is 0700 now.
    Tightened { from: u32 },
}

/// Makes the data directory owner-only: created 0700 whatever the umask (its parents as the
/// umask says: they are not ours), or, when it exists with group or other bits, tightened to
/// 0700. A directory of another user is refused rather than written into.
///
/// Tightened rather than refused: every directory made before this rule (under the usual
/// umask 022) is 0755, and the fix is one the owner would make anyway.
pub fn make_private(root: &Path) -> Result<Privacy, DaemonError> {
    let unmade = |source| DaemonError::Io {
        what: DATA_DIR_UNMADE,
        path: root.to_path_buf(),
        source,
    };
    if root.exists() && !root.is_dir() {
        return Err(DaemonError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(unmade)?;
    }
    let made = match DirBuilder::new().mode(PRIVATE).create(root) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(unmade(e)),
    };
    let meta = std::fs::metadata(root).map_err(unmade)?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(DaemonError::NotOwner {
            path: root.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.mode() & 0o777;
    // Made, it is 0700 unless a umask that took owner bits too left it less (never more).
    let tighten = if made {
        mode != PRIVATE
    } else {
        mode & 0o077 != 0
    };
    if tighten {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(PRIVATE)).map_err(
            |source| DaemonError::Io {
                what: "cannot make owner-only",
                path: root.to_path_buf(),
                source,
            },
        )?;
    }
    Ok(match (made, tighten) {
        (true, _) => Privacy::Made,
        (false, false) => Privacy::Kept,
        (false, true) => Privacy::Tightened { from: mode },
    })
}

/// Every file and directory this process creates from here on is its owner's alone (umask
/// 077), so the daemon's store, logs, certificates and curves are born unreadable to others.
/// Taking the data directory's lock calls it, before anything is created there.
pub fn owner_only_files() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// Removes, below `dir`, the files certificate writers leave when killed: `*.tmp` (a file
/// being written, renamed only once whole, or a list not yet in place) and a list of open
/// leaves (`X.open.jsonl`) whose partial certificate (`X.partial.cert.gz`) is not there.
/// Only called with the data directory locked, so no writer of this directory runs.
pub fn remove_unfinished_certificates(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            removed += remove_unfinished_certificates(&path);
        } else if (path.extension().is_some_and(|x| x == "tmp") || orphan_list(&path))
            && std::fs::remove_file(&path).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Whether `path` is a list of open leaves whose partial certificate is gone.
fn orphan_list(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.strip_suffix(".open.jsonl")
        .is_some_and(|stem| !Path::new(&format!("{stem}.partial.cert.gz")).exists())
}

/// Whether opening the store failed on damage, which a backup mends (not a lock, a full
/// disk or a format of another version).
pub fn is_damage(e: &SessionError) -> bool {
    use fanorona_session::store::StoreError;
    matches!(
        e,
        SessionError::Damaged(_)
            | SessionError::Decode(_)
            | SessionError::Store(StoreError::Damaged { .. })
    )
}
