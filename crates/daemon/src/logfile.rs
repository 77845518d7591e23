//! The daemon's log file, `DATA_DIR/daemon.log`, rotated by size: when a line would take it
//! past `MAX_BYTES` it becomes `daemon.log.1` (`.1` becomes `.2`, ... and the oldest, `.KEEP`,
//! goes), so a week-long run keeps its recent history in bounded space. Under systemd the
//! journal keeps the log instead (`under_journal`).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::DataDir;

/// The size at which the log is rotated.
pub const MAX_BYTES: u64 = 16 << 20;
/// Rotated files kept beside the current one.
pub const KEEP: u32 = 5;

/// Where the daemon of `dir` logs.
pub fn path(dir: &DataDir) -> PathBuf {
    dir.root.join("daemon.log")
}

/// A log file rotated by size; every write is one line (or several whole lines), appended.
pub struct RotatingFile {
    inner: Mutex<Inner>,
}

struct Inner {
    path: PathBuf,
    max: u64,
    keep: u32,
    /// Opened at the first write: by then the daemon holds its data directory (the
    /// directory is made, with its permissions, by the lock and not here).
    file: Option<File>,
    written: u64,
    /// A failure to open or write was said once on stderr; the log goes on there.
    complained: bool,
}

impl RotatingFile {
    pub fn new(path: PathBuf, max: u64, keep: u32) -> RotatingFile {
        RotatingFile {
            inner: Mutex::new(Inner {
                path,
                max: max.max(1),
                keep: keep.max(1),
                file: None,
                written: 0,
                complained: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A writer that panicked mid-line leaves the file as usable as before.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    fn open(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)?;
            self.written = file.metadata()?.len();
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("just opened"))
    }

    /// `daemon.log.K` for K = keep-1 .. 1 moved one up, then `daemon.log` to `.1`.
    fn rotate(&mut self) -> io::Result<()> {
        self.file = None;
        let numbered = |k: u32| {
            let mut p = self.path.clone().into_os_string();
            p.push(format!(".{k}"));
            PathBuf::from(p)
        };
        for k in (1..self.keep).rev() {
            match std::fs::rename(numbered(k), numbered(k + 1)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&self.path, numbered(1))
    }

    fn write_line(&mut self, buf: &[u8]) -> io::Result<()> {
        // (Opened first: a file left by an earlier run counts with its size.)
        self.open()?;
        if self.written > 0 && self.written + buf.len() as u64 > self.max {
            self.rotate()?;
        }
        self.open()?.write_all(buf)?;
        self.written += buf.len() as u64;
        Ok(())
    }
}

/// One line's writer: the file's lock, held while the line is written.
pub struct LineWriter<'a>(MutexGuard<'a, Inner>);

impl Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let inner = &mut *self.0;
        if let Err(e) = inner.write_line(buf) {
            // The log must never stop the daemon: said once, and the line dropped here
            // (it went to stderr or the journal too, unless that is this file).
            if !inner.complained {
                inner.complained = true;
                eprintln!("cannot write the log file {}: {e}", inner.path.display());
            }
            inner.file = None;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RotatingFile {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> LineWriter<'a> {
        LineWriter(self.lock())
    }
}

/// The device and inode of stderr (`None` if it is closed).
fn stderr_identity() -> Option<(u64, u64)> {
    let st = rustix::fs::fstat(io::stderr()).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// Whether stderr goes to the journal: systemd sets `JOURNAL_STREAM` to the device and inode
/// of the stream it gives a service, which a process started from the service (a shell's
/// redirection) no longer has.
pub fn under_journal() -> bool {
    let Some(stream) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = stream.to_str().and_then(|s| s.split_once(':')) else {
        return false;
    };
    match (dev.parse::<u64>(), ino.parse::<u64>(), stderr_identity()) {
        (Ok(d), Ok(i), Some(own)) => own == (d, i),
        _ => false,
    }
}

/// Whether stderr is the file at `path` (a script running `fanorona daemon 2>>daemon.log`):
/// then the log is not written to it twice.
pub fn stderr_is(path: &Path) -> bool {
    match (std::fs::metadata(path), stderr_identity()) {
        (Ok(m), Some(own)) => own == (m.dev(), m.ino()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::fmt::MakeWriter;

    #[test]
    fn the_log_is_rotated_by_size_keeping_the_newest_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon.log");
        let log = RotatingFile::new(path.clone(), 100, 3);
        // As the log's layer writes: one line a call.
        let line = |log: &RotatingFile, i: u32| {
            let text = format!("line {i:03} .........\n");
            log.make_writer().write_all(text.as_bytes()).unwrap();
        };
        // 19 bytes a line: five lines a file.
        for i in 0..40 {
            line(&log, i);
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        let numbered = |k| dir.path().join(format!("daemon.log.{k}"));
        assert_eq!(read(&path).lines().count(), 5);
        assert!(read(&path).ends_with("line 039 .........\n"));
        assert!(read(&numbered(1)).starts_with("line 030"));
        assert!(read(&numbered(3)).starts_with("line 020"));
        assert!(!numbered(4).exists(), "only KEEP rotated files are kept");
        assert!(std::fs::metadata(&path).unwrap().len() <= 100);
        // Owner-only: the log names positions and paths of the owner's work.
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        // Reopened, it goes on from its size.
        let again = RotatingFile::new(path.clone(), 100, 3);
        line(&again, 40);
        assert!(read(&numbered(1)).ends_with("line 039 .........\n"));
        assert_eq!(read(&path), "line 040 .........\n");
    }

    #[test]
    fn a_log_that_cannot_be_written_does_not_fail_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let log = RotatingFile::new(dir.path().join("gone/daemon.log"), 100, 3);
        assert!(log.make_writer().write_all(b"a line\n").is_ok());
    }
}
