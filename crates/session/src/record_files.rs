//! The large values of the store (a tree's node chunks and patches), each in a file of its
//! own beside sled, with a checksum; sled keeps a short pointer to it.
//!
//! sled keeps a large value in a blob file and reads the newest ones whenever it opens: one
//! flipped byte in one session's chunk made the whole store refuse to open. Here a damaged
//! file is met only by a read of its own record, so the damage stays with its session.
//!
//! A value's file is written under a new name (never over another), made durable, and only
//! then named by the pointer sled commits; the file a pointer no longer names is removed
//! after the next sync, once sled can no longer come back to the old pointer. A crash in
//! between leaves a file no pointer names, removed when the store next opens.

use std::collections::HashSet;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder of the files, inside the store's directory.
pub const DIR: &str = "records";

/// How a pointer begins. Values kept in sled itself begin with a format version byte below
/// 0x80, so the two are never mistaken.
const POINTER_MAGIC: &[u8; 4] = b"\xffRF1";
const POINTER_LEN: usize = 4 + 8 + 8 + 4;

/// How a record file begins.
const FILE_MAGIC: &[u8; 8] = b"FNRREC01";
/// The magic, the key's length (u32), the value's length (u64), the checksum (u32).
const HEADER_LEN: usize = 8 + 4 + 8 + 4;

/// Keys longer than this are not a record's.
const MAX_KEY: usize = 1 << 12;

/// What a pointer says: the file's number, the value's length and checksum.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pointer {
    pub file: u64,
    pub len: u64,
    pub crc: u32,
}

impl Pointer {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(POINTER_LEN);
        v.extend_from_slice(POINTER_MAGIC);
        v.extend_from_slice(&self.file.to_be_bytes());
        v.extend_from_slice(&self.len.to_be_bytes());
        v.extend_from_slice(&self.crc.to_be_bytes());
        v
    }

    /// The pointer `value` is, if it is one.
    pub fn decode(value: &[u8]) -> Option<Pointer> {
        if value.len() != POINTER_LEN || !value.starts_with(POINTER_MAGIC) {
            return None;
        }
        let u64_at = |i: usize| u64::from_be_bytes(value[i..i + 8].try_into().expect("8 bytes"));
        Some(Pointer {
            file: u64_at(4),
            len: u64_at(12),
            crc: u32::from_be_bytes(value[20..24].try_into().expect("4 bytes")),
        })
    }
}

/// The checksum of a record: its key and value.
fn checksum(key: &[u8], value: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&(key.len() as u32).to_be_bytes());
    h.update(key);
    h.update(value);
    h.finalize()
}

/// The record files of one store.
pub struct RecordFiles {
    dir: PathBuf,
    /// The next file's number.
    next: AtomicU64,
    /// Files no pointer names since a commit, removed after the next sync.
    retired: Mutex<Vec<u64>>,
    /// Bytes of the files.
    bytes: AtomicU64,
}

impl RecordFiles {
    /// The record files of the store in `store_dir`; the folder is made if missing.
    pub fn open(store_dir: &Path) -> std::io::Result<RecordFiles> {
        let dir = store_dir.join(DIR);
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir)?;
            // Its name durable before any pointer names a file in it.
            std::fs::File::open(store_dir)?.sync_all()?;
        }
        let (mut last, mut bytes) = (0u64, 0u64);
        for e in std::fs::read_dir(&dir)?.flatten() {
            if let Some(n) = file_number(&e.file_name().to_string_lossy()) {
                last = last.max(n);
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
        Ok(RecordFiles {
            dir,
            next: AtomicU64::new(last + 1),
            retired: Mutex::new(Vec::new()),
            bytes: AtomicU64::new(bytes),
        })
    }

    fn path(&self, file: u64) -> PathBuf {
        self.dir.join(format!("{file:016x}"))
    }

    /// Bytes the files take.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Writes `value` of `key` to a new file (not yet durable: `make_durable`); returns its
    /// pointer.
    pub fn write(&self, key: &[u8], value: &[u8]) -> std::io::Result<Pointer> {
        let file = self.next.fetch_add(1, Ordering::Relaxed);
        let crc = checksum(key, value);
        let path = self.path(file);
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            let mut header = Vec::with_capacity(HEADER_LEN + key.len());
            header.extend_from_slice(FILE_MAGIC);
            header.extend_from_slice(&(key.len() as u32).to_be_bytes());
            header.extend_from_slice(&(value.len() as u64).to_be_bytes());
            header.extend_from_slice(&crc.to_be_bytes());
            header.extend_from_slice(key);
            f.write_all(&header)?;
            f.write_all(value)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        self.bytes.fetch_add(
            (HEADER_LEN + key.len() + value.len()) as u64,
            Ordering::Relaxed,
        );
        Ok(Pointer {
            file,
            len: value.len() as u64,
            crc,
        })
    }

    /// Makes the files of `written` durable, and their names in the folder.
    pub fn make_durable(&self, written: &[Pointer]) -> std::io::Result<()> {
        if written.is_empty() {
            return Ok(());
        }
        for p in written {
            std::fs::File::open(self.path(p.file))?.sync_all()?;
        }
        std::fs::File::open(&self.dir)?.sync_all()
    }

    /// Removes the files of `written` at once: the commit that was to name them failed.
    pub fn discard(&self, written: &[Pointer]) {
        for p in written {
            self.remove(p.file);
        }
    }

    /// Notes files no committed pointer names any more, to be removed after the next sync.
    pub fn retire(&self, files: impl IntoIterator<Item = u64>) {
        self.retired.lock().expect("retired lock").extend(files);
    }

    /// The files retired so far, for a sync to remove once it made the commits before it
    /// durable (`remove_all`).
    pub fn take_retired(&self) -> Vec<u64> {
        std::mem::take(&mut *self.retired.lock().expect("retired lock"))
    }

    pub fn remove_all(&self, files: &[u64]) {
        for &f in files {
            self.remove(f);
        }
    }

    fn remove(&self, file: u64) {
        let path = self.path(file);
        if let Ok(m) = std::fs::metadata(&path)
            && std::fs::remove_file(&path).is_ok()
        {
            self.bytes
                .fetch_sub(m.len().min(self.bytes()), Ordering::Relaxed);
        }
    }

    /// Removes every file no pointer of `live` names: those a crash left between their
    /// write and their commit, or after their last pointer went. Returns how many.
    pub fn remove_unnamed(&self, live: &HashSet<u64>) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for e in entries.flatten() {
            if let Some(n) = file_number(&e.file_name().to_string_lossy())
                && !live.contains(&n)
            {
                self.remove(n);
                removed += 1;
            }
        }
        removed
    }

    /// The value `p` points to for `key`, read and checked: the file is there, whole, of
    /// this key, and its checksum holds. What is wrong is said with the file's name; an error
    /// of the reading itself (no memory, too many open files, a failing device) is not taken
    /// for damage.
    pub fn read(&self, key: &[u8], p: &Pointer) -> Result<Vec<u8>, ReadError> {
        let path = self.path(p.file);
        let name = format!("{DIR}/{:016x}", p.file);
        let damaged = |why: String| ReadError::Damaged(format!("record file {name}: {why}"));
        let failed = |what: &str, e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => damaged(format!("it is missing ({e})")),
            std::io::ErrorKind::UnexpectedEof => damaged(format!("{what} is cut short")),
            _ => ReadError::Io {
                path: path.clone(),
                source: e,
            },
        };
        let mut f = std::fs::File::open(&path).map_err(|e| failed("it", e))?;
        let mut header = [0u8; HEADER_LEN];
        f.read_exact(&mut header)
            .map_err(|e| failed("its header", e))?;
        let key_len = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes")) as usize;
        let len = u64::from_be_bytes(header[12..20].try_into().expect("8 bytes"));
        let crc = u32::from_be_bytes(header[20..24].try_into().expect("4 bytes"));
        if &header[..8] != FILE_MAGIC || key_len > MAX_KEY {
            return Err(damaged("not a record file".into()));
        }
        if len != p.len || crc != p.crc {
            return Err(damaged(format!(
                "it holds another value than the store names ({len} bytes, checksum {crc:08x}; named: {} bytes, {:08x})",
                p.len, p.crc
            )));
        }
        let mut stored_key = vec![0u8; key_len];
        f.read_exact(&mut stored_key)
            .map_err(|e| failed("its key", e))?;
        if stored_key != key {
            return Err(damaged("it holds another record".into()));
        }
        let mut value = Vec::with_capacity(len.min(1 << 30) as usize);
        (&mut f)
            .take(len + 1)
            .read_to_end(&mut value)
            .map_err(|e| failed("its value", e))?;
        if value.len() as u64 != len {
            return Err(damaged(format!(
                "{} bytes of its value where {len} were written (cut short or grown)",
                value.len()
            )));
        }
        if checksum(key, &value) != crc {
            return Err(damaged(
                "its checksum does not hold (a changed byte)".into(),
            ));
        }
        Ok(value)
    }
}

/// Why a record's value could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Its file is damaged or gone.
    #[error("{0}")]
    Damaged(String),
    /// Reading it failed (the file at the path): it may succeed later.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The number of a record file's name, if it is one.
fn file_number(name: &str) -> Option<u64> {
    (name.len() == 16)
        .then(|| u64::from_str_radix(name, 16).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_comes_back_and_any_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let files = RecordFiles::open(dir.path()).unwrap();
        let value: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let p = files.write(b"key-1", &value).unwrap();
        files.make_durable(&[p]).unwrap();
        assert_eq!(Pointer::decode(&p.encode()), Some(p));
        assert_eq!(files.read(b"key-1", &p).unwrap(), value);
        assert!(
            files
                .read(b"key-2", &p)
                .unwrap_err()
                .to_string()
                .contains("another record")
        );
        let path = files.path(p.file);
        let whole = std::fs::read(&path).unwrap();

        let mut flipped = whole.clone();
        flipped[HEADER_LEN + 5 + 100] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(
            files
                .read(b"key-1", &p)
                .unwrap_err()
                .to_string()
                .contains("checksum")
        );
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert!(
            files
                .read(b"key-1", &p)
                .unwrap_err()
                .to_string()
                .contains("cut short")
        );
        std::fs::write(&path, &whole[..10]).unwrap();
        assert!(
            files
                .read(b"key-1", &p)
                .unwrap_err()
                .to_string()
                .contains("header is cut short")
        );
        std::fs::remove_file(&path).unwrap();
        assert!(
            files
                .read(b"key-1", &p)
                .unwrap_err()
                .to_string()
                .contains("missing")
        );
    }

    #[test]
    fn numbers_go_on_after_a_reopen_and_unnamed_files_go() {
        let dir = tempfile::tempdir().unwrap();
        let files = RecordFiles::open(dir.path()).unwrap();
        let a = files.write(b"a", b"first").unwrap();
        let b = files.write(b"b", b"second").unwrap();
        drop(files);
        let files = RecordFiles::open(dir.path()).unwrap();
        let c = files.write(b"c", b"third").unwrap();
        assert!(c.file > b.file && b.file > a.file);
        assert_eq!(files.remove_unnamed(&HashSet::from([a.file, c.file])), 1);
        assert!(files.read(b"b", &b).is_err());
        assert_eq!(files.read(b"a", &a).unwrap(), b"first");
        files.retire([a.file]);
        files.remove_all(&files.take_retired());
        assert!(files.read(b"a", &a).is_err());
        assert_eq!(files.bytes(), (HEADER_LEN + 1 + 5) as u64);
    }

    #[test]
    fn values_in_sled_are_never_taken_for_pointers() {
        // Every value kept inline begins with a format version byte.
        for first in 0u8..0x80 {
            let mut v = vec![first];
            v.extend_from_slice(&[0u8; POINTER_LEN - 1]);
            assert_eq!(Pointer::decode(&v), None);
        }
    }
}
