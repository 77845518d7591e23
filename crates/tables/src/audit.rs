//! A board's slice files against their manifest (`SHA256SUMS`): each opened (header and
//! checksum checked) and hashed whole, on several threads. `write_checksums` writes the
//! manifest anew from them (`db checksums`); `verify_quick` compares them with it and names
//! what is listed but absent, or missing among the slices built (`db verify --quick`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use fanorona_rules::Board;
use serde::Serialize;
use thiserror::Error;

use crate::file::{FileError, Kind, SliceFile, board_dir};
use crate::index::Material;
use crate::manifest;
use crate::probe::{Database, TablesError};

#[derive(Debug, Error)]
pub enum AuditError {
    /// No slice file and no manifest: nothing to check (bad input, not damage).
    #[error(transparent)]
    NoTables(#[from] TablesError),
    #[error(transparent)]
    File(#[from] FileError),
}

/// A slice file opened (header and checksum checked) and hashed.
pub struct Hashed {
    pub name: String,
    pub bytes: u64,
    /// Its SHA-256, or why it could not be opened.
    pub sha256: Result<String, String>,
}

/// A board's slice files as listed once, with their sizes: what an audit reads, and the
/// bytes its progress will count.
pub struct SliceFiles {
    pub board: Board,
    /// Where the files and their manifest are.
    pub board_dir: PathBuf,
    /// With `Some(p)`, only the slices of `p` pieces were listed.
    pub pieces: Option<usize>,
    /// Each file and its bytes (0 for one that cannot be read).
    files: Vec<(Material, Kind, u64)>,
}

impl SliceFiles {
    /// The slice files of `board` under `dir` (with `pieces`, only those); no file and no
    /// manifest is `AuditError::NoTables`.
    pub fn list(dir: &Path, board: Board, pieces: Option<usize>) -> Result<Self, AuditError> {
        let listed = manifest::slice_files(dir, board)?.unwrap_or_default();
        let board_dir = board_dir(dir, board);
        if listed.is_empty() && !manifest::path(&board_dir).exists() {
            let db = Database::new(dir, board);
            return Err(db.census().whole(&db).expect_err("no slice").into());
        }
        let files = listed
            .into_iter()
            .filter(|(m, _)| pieces.is_none_or(|p| m.pieces() == p))
            .map(|(m, k)| {
                let path = board_dir.join(manifest::file_name(m, k));
                (m, k, std::fs::metadata(path).map_or(0, |f| f.len()))
            })
            .collect();
        Ok(SliceFiles {
            board,
            board_dir,
            pieces,
            files,
        })
    }

    /// The bytes `hash_files` will report through its progress.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|&(_, _, bytes)| bytes).sum()
    }
}

/// Opens and hashes `files` (listed under `dir`) on `threads` threads, in their order;
/// `progress` is told of every byte read (a file that cannot be opened counts whole).
pub fn hash_files(
    dir: &Path,
    files: &SliceFiles,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Hashed> {
    let (board, files) = (files.board, &files.files);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Hashed>>> = files.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, files.len().max(1)) {
            let (next, results) = (&next, &results);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(m, kind, bytes)) = files.get(i) else {
                        break;
                    };
                    let sha256 = match SliceFile::open(dir, board, m, kind) {
                        Ok(Some(f)) => Ok(manifest::sha256(f.bytes(), progress)),
                        Ok(None) => Err("vanished while it was checked".to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    if sha256.is_err() {
                        progress(bytes);
                    }
                    *results[i].lock().expect("no thread panics holding it") = Some(Hashed {
                        name: manifest::file_name(m, kind),
                        bytes,
                        sha256,
                    });
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no thread panics holding it")
                .expect("every file was taken")
        })
        .collect()
}

/// A file that could not be opened, and why.
#[derive(Debug, Serialize)]
pub struct Damaged {
    pub file: String,
    pub error: String,
}

fn is_some<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(v.is_some())
}

/// What `write_checksums` did.
#[derive(Debug, Serialize)]
pub struct ChecksumsReport {
    pub board: String,
    pub manifest: PathBuf,
    /// Files listed.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    pub seconds: f64,
    /// Files that could not be opened: kept as the old manifest had them, if it did.
    pub damaged: Vec<Damaged>,
    /// Files listed before with another SHA-256.
    pub changed: Vec<String>,
    /// Files listed before and no longer there.
    pub dropped: Vec<String>,
    /// Why the old manifest could not be read, when it could not (it was replaced whole);
    /// the JSON says only whether (`replaced_unreadable`).
    #[serde(rename = "replaced_unreadable", serialize_with = "is_some")]
    pub unreadable: Option<String>,
}

/// Every slice file of a board under `dir` (`files`, listed with no piece count) opened and
/// hashed, and the manifest written anew from them; the damaged ones keep their old lines.
pub fn write_checksums(
    dir: &Path,
    files: &SliceFiles,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ChecksumsReport, AuditError> {
    assert!(files.pieces.is_none(), "a manifest lists every slice file");
    let (board, board_dir) = (files.board, &files.board_dir);
    let unreadable = manifest::read(board_dir).err().map(|e| e.to_string());
    let start = Instant::now();
    let hashed = hash_files(dir, files, threads, progress);
    let mut fresh = manifest::Entries::new();
    let mut damaged = Vec::new();
    let mut bytes = 0;
    for h in hashed {
        match h.sha256 {
            Ok(sha) => {
                fresh.insert(h.name, sha);
                bytes += h.bytes;
            }
            Err(error) => damaged.push(Damaged {
                file: h.name,
                error,
            }),
        }
    }
    let keep: Vec<String> = damaged.iter().map(|d| d.file.clone()).collect();
    let old = manifest::replace(board_dir, &fresh, &keep)?.unwrap_or_default();
    let seconds = start.elapsed().as_secs_f64();
    // Lines that said otherwise before, and lines of files no longer there.
    let changed = fresh
        .iter()
        .filter(|(n, sha)| old.get(*n).is_some_and(|o| o != *sha))
        .map(|(n, _)| n.clone())
        .collect();
    let dropped = old
        .keys()
        .filter(|n| !fresh.contains_key(*n) && !keep.contains(n))
        .cloned()
        .collect();
    Ok(ChecksumsReport {
        board: board.to_string(),
        manifest: manifest::path(board_dir),
        files: fresh.len(),
        bytes,
        seconds,
        damaged,
        changed,
        dropped,
        unreadable,
    })
}

/// Where a file stands against the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileState {
    /// Opened whole, its SHA-256 as listed.
    Whole,
    /// Opened whole, not listed.
    Unlisted,
    /// Opened whole, another SHA-256 than listed.
    Mismatch,
    /// Could not be opened.
    Damaged,
    /// Listed and not there.
    Absent,
    /// Neither listed nor there, below the largest piece count built.
    Missing,
}

/// One file of `verify_quick`'s answer.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum FileRow {
    Read {
        file: String,
        state: FileState,
        bytes: u64,
        sha256: Option<String>,
        listed: Option<String>,
        error: Option<String>,
    },
    Gone {
        file: String,
        state: FileState,
    },
}

impl FileRow {
    pub fn file(&self) -> &str {
        match self {
            FileRow::Read { file, .. } | FileRow::Gone { file, .. } => file,
        }
    }
}

/// What `verify_quick` found, file by file and by state.
#[derive(Debug, Serialize)]
pub struct QuickReport {
    pub board: String,
    pub manifest: PathBuf,
    pub manifest_found: bool,
    /// The files read, in order, then the absent, then the missing.
    pub files: Vec<FileRow>,
    /// How many matched.
    pub whole: usize,
    pub unlisted: Vec<String>,
    pub mismatching: Vec<String>,
    pub damaged: Vec<String>,
    pub absent: Vec<String>,
    pub missing: Vec<String>,
    /// The largest piece count built (what a rebuild goes up to).
    #[serde(skip)]
    pub max_pieces: usize,
}

/// Every slice file of a board under `dir` (`files`: with a piece count, of that many
/// pieces) opened and its SHA-256 compared with the board's manifest; the files the manifest
/// lists that are not there, and the slices missing among those built, named.
pub fn verify_quick(
    dir: &Path,
    files: &SliceFiles,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<QuickReport, AuditError> {
    let (board, board_dir, pieces) = (files.board, &files.board_dir, files.pieces);
    let listed = manifest::read(board_dir)?;
    let hashed = hash_files(dir, files, threads, progress);
    let in_scope = |name: &str| {
        pieces.is_none_or(|p| manifest::parse_file_name(name).is_some_and(|(m, _)| m.pieces() == p))
    };
    let (mut whole, mut unlisted, mut mismatching, mut damaged) =
        (0, Vec::new(), Vec::new(), Vec::new());
    let mut rows = Vec::new();
    for h in hashed {
        let line = listed.as_ref().and_then(|l| l.get(&h.name)).cloned();
        let state = match (&h.sha256, &line) {
            (Err(_), _) => {
                damaged.push(h.name.clone());
                FileState::Damaged
            }
            (Ok(_), None) => {
                unlisted.push(h.name.clone());
                FileState::Unlisted
            }
            (Ok(sha), Some(l)) if sha == l => {
                whole += 1;
                FileState::Whole
            }
            (Ok(_), Some(_)) => {
                mismatching.push(h.name.clone());
                FileState::Mismatch
            }
        };
        let (sha256, error) = match h.sha256 {
            Ok(sha) => (Some(sha), None),
            Err(why) => (None, Some(why)),
        };
        rows.push(FileRow::Read {
            file: h.name,
            state,
            bytes: h.bytes,
            sha256,
            listed: line,
            error,
        });
    }
    // Listed, and not there.
    let absent: Vec<String> = listed
        .iter()
        .flat_map(|l| l.keys())
        .filter(|n| in_scope(n) && !board_dir.join(n).is_file())
        .cloned()
        .collect();
    // Not listed, not there, and below the largest piece count built: missing all the same.
    let max_pieces = Database::new(dir, board).max_pieces();
    let missing: Vec<String> = (2..=max_pieces)
        .filter(|&n| pieces.is_none_or(|p| p == n))
        .flat_map(Material::with_pieces)
        .map(|m| manifest::file_name(m, Kind::Wdl))
        .filter(|n| !board_dir.join(n).is_file() && !absent.contains(n))
        .collect();
    for (names, state) in [(&absent, FileState::Absent), (&missing, FileState::Missing)] {
        rows.extend(names.iter().map(|n| FileRow::Gone {
            file: n.clone(),
            state,
        }));
    }
    Ok(QuickReport {
        board: board.to_string(),
        manifest: manifest::path(board_dir),
        manifest_found: listed.is_some(),
        files: rows,
        whole,
        unlisted,
        mismatching,
        damaged,
        absent,
        missing,
        max_pieces,
    })
}
