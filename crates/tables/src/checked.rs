//! Large slices whose payload checksum was checked, remembered from process to process.
//!
//! Opening a slice checks the CRC of its whole payload, which for the 9-piece 5x9 layer
//! means reading 29 GB, a minute or more, at every `solve`, worker start or simulation, and
//! pushing everything else out of the page cache. A slice file is never written after it is
//! finished (a new one is renamed over it), so once its payload passed, the same file (same
//! device, inode, size and modification time, same header checksum) is taken as checked
//! without reading it again. The stamps live in the user's cache directory, not among the
//! tables (which may be read-only or shared); damage that leaves all of that alone is what
//! `fanorona db verify --quick` finds (every file hashed against SHA256SUMS).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where stamps are kept: `$XDG_CACHE_HOME/fanorona/checked`, else
/// `$HOME/.cache/fanorona/checked`; none without either.
pub fn stamps_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(cache.join("fanorona").join("checked"))
}

/// The stamp file of `path` under `dir` and what it holds while `path` is the file that was
/// checked, with `crc` its header's payload checksum.
fn stamp(dir: &Path, path: &Path, crc: u32) -> Option<(PathBuf, String)> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&canonical).ok()?;
    let text = format!(
        "{} dev {} ino {} len {} mtime {}.{:09} crc {crc:08x}\n",
        canonical.display(),
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    );
    let name = fanorona_rules::machine::path_hash(&canonical);
    Some((dir.join(format!("{name:016x}")), text))
}

/// Whether `path`, as it is now, was checked with payload checksum `crc` (a stamp under
/// `dir` says so).
pub fn was_checked(dir: &Path, path: &Path, crc: u32) -> bool {
    stamp(dir, path, crc)
        .is_some_and(|(file, text)| std::fs::read_to_string(file).is_ok_and(|t| t == text))
}

/// Records under `dir` that `path`'s payload passed its checksum `crc`. A stamp that
/// cannot be written is left out (the next open checks again).
pub fn mark_checked(dir: &Path, path: &Path, crc: u32) {
    let Some((file, text)) = stamp(dir, path, crc) else {
        return;
    };
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, &file));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_holds_for_the_same_file_only() {
        let tables = tempfile::tempdir().unwrap();
        let stamps = tempfile::tempdir().unwrap();
        let dir = stamps.path().join("checked");
        let path = tables.path().join("slice.bin");
        std::fs::write(&path, b"a payload").unwrap();
        assert!(!was_checked(&dir, &path, 7));
        mark_checked(&dir, &path, 7);
        assert!(was_checked(&dir, &path, 7));
        // Another header checksum is another file.
        assert!(!was_checked(&dir, &path, 8));
        // A new file renamed over it (as a rebuild does) is not the one checked, even of the
        // same size.
        let new = tables.path().join("new.bin");
        std::fs::write(&new, b"b payload").unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert!(!was_checked(&dir, &path, 7));
        mark_checked(&dir, &path, 7);
        assert!(was_checked(&dir, &path, 7));
        // Written in place: its modification time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"c payload").unwrap();
        assert!(!was_checked(&dir, &path, 7));
        // A stamp that cannot be written changes nothing.
        let blocked = stamps.path().join("a-file");
        std::fs::write(&blocked, b"").unwrap();
        mark_checked(&blocked.join("checked"), &path, 7);
        assert!(!was_checked(&blocked.join("checked"), &path, 7));
    }
}
