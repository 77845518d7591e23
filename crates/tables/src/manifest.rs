//! The manifest of a board's tables: `SHA256SUMS` in the board's directory, one line per
//! slice file (`<SHA-256 in hex>  <file name>`, sorted by name), the format `sha256sum -c`
//! reads. A build adds a file's line once the file is under its final name; `db checksums`
//! writes the manifest anew for tables built before manifests were kept; `db verify --quick`
//! compares the files with it.
//!
//! The manifest is replaced whole (written to `SHA256SUMS.tmp`, synced, renamed), with the
//! board's directory locked, so two builds in one directory do not lose each other's lines.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::file::{FileError, Kind, board_dir};
use crate::index::Material;
use fanorona_rules::geometry::Board;

/// The manifest's file name, in each board's directory.
pub const NAME: &str = "SHA256SUMS";

/// Bytes hashed between two calls of a progress callback.
pub const CHUNK: usize = 16 << 20;

/// File name to SHA-256 (64 lowercase hex digits), sorted by name.
pub type Entries = BTreeMap<String, String>;

/// The manifest of the board directory `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(NAME)
}

/// A SHA-256 being computed, fed in pieces.
#[derive(Default, Clone)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Hashes `bytes` in chunks of `CHUNK`, telling `progress` each chunk's length.
    pub fn update(&mut self, bytes: &[u8], progress: &dyn Fn(u64)) {
        for chunk in bytes.chunks(CHUNK) {
            self.0.update(chunk);
            progress(chunk.len() as u64);
        }
    }

    /// The digest in lowercase hex, as `sha256sum` prints it.
    pub fn hex(self) -> String {
        use std::fmt::Write as _;
        self.0
            .finalize()
            .iter()
            .fold(String::with_capacity(64), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256(bytes: &[u8], progress: &dyn Fn(u64)) -> String {
    let mut h = Hasher::default();
    h.update(bytes, progress);
    h.hex()
}

/// The name of a slice file in its board's directory (`3-2.wdl`).
pub fn file_name(material: Material, kind: Kind) -> String {
    format!("{material}.{}", kind.extension())
}

/// The slice and kind a file name stands for, if it is a slice file's (`3-2.wdl`, `3-2.dtc`).
pub fn parse_file_name(name: &str) -> Option<(Material, Kind)> {
    let (stem, ext) = name.rsplit_once('.')?;
    let kind = [Kind::Wdl, Kind::Distance]
        .into_iter()
        .find(|k| k.extension() == ext)?;
    let material: Material = stem.parse().ok()?;
    (file_name(material, kind) == name).then_some((material, kind))
}

/// Every slice file under the directory of `board`, by piece count, then as the slices are
/// built, the values before the distances. None when the directory is not there.
pub fn slice_files(root: &Path, board: Board) -> Result<Option<Vec<(Material, Kind)>>, FileError> {
    let dir = board_dir(root, board);
    let io = |source| FileError::Io {
        path: dir.clone(),
        source,
    };
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io)?;
        if let Some(found) = entry.file_name().to_str().and_then(parse_file_name)
            && entry.file_type().map_err(io)?.is_file()
        {
            files.push(found);
        }
    }
    files.sort_by_key(|(m, k)| (m.pieces(), std::cmp::Reverse(m.a), *k as u8));
    Ok(Some(files))
}

/// Reads a manifest's lines. `sha256sum` writes `HASH  NAME` (text mode) or `HASH *NAME`
/// (binary mode); both are read.
pub fn parse(text: &str) -> Result<Entries, usize> {
    let mut entries = Entries::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || i + 1;
        let (hash, rest) = line.split_once(' ').ok_or_else(bad)?;
        let name = rest.strip_prefix([' ', '*']).ok_or_else(bad)?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) || name.is_empty() {
            return Err(bad());
        }
        entries.insert(name.to_string(), hash.to_ascii_lowercase());
    }
    Ok(entries)
}

/// The manifest's text: a line per file, sorted by name.
pub fn render(entries: &Entries) -> String {
    entries
        .iter()
        .map(|(name, hash)| format!("{hash}  {name}\n"))
        .collect()
}

/// What names a board's tables up to `pieces` pieces, wherever they are: the SHA-256 of
/// the manifest's lines for those slices (16 hex digits). Two directories with the same
/// fingerprint hold the same files. None without a manifest.
pub fn fingerprint(root: &Path, board: Board, pieces: usize) -> Result<Option<String>, FileError> {
    let Some(entries) = read(&board_dir(root, board))? else {
        return Ok(None);
    };
    let kept: Entries = entries
        .into_iter()
        .filter(|(name, _)| parse_file_name(name).is_some_and(|(m, _)| m.pieces() <= pieces))
        .collect();
    let mut hex = sha256(render(&kept).as_bytes(), &|_| {});
    hex.truncate(16);
    Ok(Some(hex))
}

/// The manifest of the board directory `dir`: None when there is none.
pub fn read(dir: &Path) -> Result<Option<Entries>, FileError> {
    let path = path(dir);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(FileError::Io { path, source }),
    };
    parse(&text)
        .map(Some)
        .map_err(|line| FileError::ManifestLine { path, line })
}

/// Holds the lock on a board directory's manifest while alive.
struct Locked {
    _dir: File,
}

fn lock(dir: &Path) -> Result<Locked, FileError> {
    let io = |source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    };
    // The directory itself is locked: no lock file is left beside the tables.
    let d = File::open(dir).map_err(io)?;
    d.lock().map_err(io)?;
    Ok(Locked { _dir: d })
}

/// Replaces the manifest with `entries`: written to a temporary name, synced, renamed.
fn write(dir: &Path, entries: &Entries, _locked: &Locked) -> Result<(), FileError> {
    let path = path(dir);
    let tmp = dir.join(format!("{NAME}.tmp"));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(render(entries).as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, &path)?;
        File::open(dir)?.sync_all()
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&tmp);
        FileError::Io { path, source }
    })
}

/// Records `hash` as the SHA-256 of the file `name` of the board directory `dir`, replacing
/// any line it had. A manifest that cannot be read is left as it is, and named.
pub fn record(dir: &Path, name: &str, hash: &str) -> Result<(), FileError> {
    let locked = lock(dir)?;
    let mut entries = read(dir)?.unwrap_or_default();
    entries.insert(name.to_string(), hash.to_string());
    write(dir, &entries, &locked)
}

/// Replaces the manifest of `dir` with `fresh`, keeping of the lines there the ones for the
/// names in `keep` (files that could not be hashed). A manifest that cannot be read is
/// replaced. Returns the lines it had (None: no manifest, or one that could not be read).
pub fn replace(dir: &Path, fresh: &Entries, keep: &[String]) -> Result<Option<Entries>, FileError> {
    let locked = lock(dir)?;
    let old = read(dir).ok().flatten();
    let mut entries = fresh.clone();
    for name in keep {
        if let Some(hash) = old.as_ref().and_then(|o| o.get(name)) {
            entries.insert(name.clone(), hash.clone());
        }
    }
    write(dir, &entries, &locked)?;
    Ok(old)
}

/// Removes what a process killed while it wrote the manifest of `dir` left.
pub fn tidy(dir: &Path) {
    if let Ok(_locked) = lock(dir) {
        let _ = fs::remove_file(dir.join(format!("{NAME}.tmp")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(
            sha256(b"", &|_| {}),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let mut h = Hasher::default();
        h.update(b"a", &|_| {});
        h.update(b"bc", &|_| {});
        assert_eq!(
            h.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn lines_read_back_as_written_and_sorted() {
        let mut e = Entries::new();
        e.insert("3-1.wdl".into(), "ab".repeat(32));
        e.insert("1-1.wdl".into(), "cd".repeat(32));
        let text = render(&e);
        assert!(text.starts_with(&format!("{}  1-1.wdl\n", "cd".repeat(32))));
        assert_eq!(parse(&text).unwrap(), e);
        // sha256sum's binary mode, upper case.
        let binary = format!("{} *2-1.dtc\n", "EF".repeat(32));
        assert_eq!(parse(&binary).unwrap()["2-1.dtc"], "ef".repeat(32));
        assert_eq!(parse("x  1-1.wdl\n"), Err(1));
        assert_eq!(parse(&format!("\n{}\n", "ab".repeat(32))), Err(2));
    }

    #[test]
    fn a_fingerprint_names_the_slices_up_to_its_pieces_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let board: Board = "3x3".parse().unwrap();
        let dir = board_dir(root.path(), board);
        fs::create_dir_all(&dir).unwrap();
        assert_eq!(fingerprint(root.path(), board, 3).unwrap(), None);
        record(&dir, "1-1.wdl", &"11".repeat(32)).unwrap();
        record(&dir, "2-1.wdl", &"22".repeat(32)).unwrap();
        let three = fingerprint(root.path(), board, 3).unwrap().unwrap();
        let two = fingerprint(root.path(), board, 2).unwrap().unwrap();
        assert_eq!(three.len(), 16);
        assert_ne!(three, two);
        // A larger slice does not change the smaller tables' fingerprint; another hash does.
        record(&dir, "3-1.wdl", &"33".repeat(32)).unwrap();
        assert_eq!(fingerprint(root.path(), board, 3).unwrap().unwrap(), three);
        record(&dir, "2-1.wdl", &"44".repeat(32)).unwrap();
        assert_ne!(fingerprint(root.path(), board, 3).unwrap().unwrap(), three);
        assert_eq!(fingerprint(root.path(), board, 2).unwrap().unwrap(), two);
    }

    #[test]
    fn slice_file_names() {
        let m: Material = "3-2".parse().unwrap();
        assert_eq!(parse_file_name("3-2.wdl"), Some((m, Kind::Wdl)));
        assert_eq!(parse_file_name("3-2.dtc"), Some((m, Kind::Distance)));
        for other in [
            "3-2.wdl.tmp",
            "3-2.build.json",
            "SHA256SUMS",
            "03-2.wdl",
            "3-2",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
    }

    #[test]
    fn a_record_replaces_its_line() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), "2-1.wdl", &"11".repeat(32)).unwrap();
        record(dir.path(), "1-1.wdl", &"22".repeat(32)).unwrap();
        record(dir.path(), "2-1.wdl", &"33".repeat(32)).unwrap();
        let text = fs::read_to_string(path(dir.path())).unwrap();
        assert_eq!(
            text,
            format!(
                "{}  1-1.wdl\n{}  2-1.wdl\n",
                "22".repeat(32),
                "33".repeat(32)
            )
        );
        assert!(!dir.path().join("SHA256SUMS.tmp").exists());
        fs::write(path(dir.path()), "not a manifest\n").unwrap();
        let e = record(dir.path(), "1-1.wdl", &"22".repeat(32)).unwrap_err();
        assert!(e.to_string().contains("SHA256SUMS line 1"), "{e}");
    }
}
