//! Slice files: a 64-byte header (magic, format version, board, slice, index scheme, kind,
//! entry count, checksums) and the packed payload. Format 1 files use the paper's index
//! (scheme 1), format 2 files the symmetric one (scheme 2); the header is laid out alike. Written to a temporary name, synced and
//! renamed, so a file under its final name is always whole; read through a memory map and
//! refused by name when anything in it does not match. Each file written gets its line in
//! the board's manifest (`manifest.rs`).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use thiserror::Error;

use crate::index::Material;
use crate::scheme::{Index, Scheme};
use fanorona_rules::geometry::Board;

pub const MAGIC: &[u8; 8] = b"FANOEGDB";
/// The newest format version: 1 for files of the paper's index, 2 for the symmetric index.
pub const FORMAT_VERSION: u32 = 2;
pub const HEADER_LEN: usize = 64;

/// The format version of a file whose entries follow `scheme`.
pub fn format_version(scheme: Scheme) -> u32 {
    scheme as u32
}

/// What a file's payload holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// 2 bits a position: win, draw or loss.
    Wdl = 0,
    /// 1 byte a position: 0 for a draw, else 1 + the round of the retrograde analysis that
    /// decided it, which is the number of plies to a capture or the end of the game under
    /// best play (the winner hurrying, the loser delaying); 255 stands for 254 or more.
    Distance = 1,
}

impl Kind {
    /// The extension of its files: `wdl`, `dtc`.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Wdl => "wdl",
            Kind::Distance => "dtc",
        }
    }

    /// Payload bytes for `entries` positions.
    pub fn payload_len(self, entries: u64) -> u64 {
        match self {
            Kind::Wdl => entries.div_ceil(4),
            Kind::Distance => entries,
        }
    }
}

#[derive(Debug, Error)]
pub enum FileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: not an endgame database file (bad magic)")]
    Foreign { path: PathBuf },
    #[error(
        "{path}: format version {found}, this program reads versions 1 to {FORMAT_VERSION}; rebuild it with `fanorona db build`"
    )]
    Version { path: PathBuf, found: u32 },
    #[error("{path}: header is damaged (checksum mismatch)")]
    HeaderChecksum { path: PathBuf },
    #[error("{path}: header says {found}, expected {expected}")]
    Mismatch {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error("{path}: payload is damaged (checksum mismatch); delete it and rebuild")]
    PayloadChecksum { path: PathBuf },
    #[error("{0}")]
    Cached(String),
    #[error(
        "{path} line {line}: not a checksum line (`<64 hex digits>  <file name>`); write the manifest anew with `fanorona db checksums`"
    )]
    ManifestLine { path: PathBuf, line: usize },
    #[error("{path}: payload has {found} bytes, header needs {expected}")]
    Truncated {
        path: PathBuf,
        found: u64,
        expected: u64,
    },
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The directory of a board's tables: a board and its transpose share one (`5x9`).
pub fn board_dir(root: &Path, board: Board) -> PathBuf {
    let canonical = canonical_board(board);
    root.join(canonical.to_string())
}

/// Of a board and its transpose, the one with fewer rows: the tables are built for it.
pub fn canonical_board(board: Board) -> Board {
    if board.rows() > board.cols() {
        board.transposed()
    } else {
        board
    }
}

pub fn slice_path(root: &Path, board: Board, material: Material, kind: Kind) -> PathBuf {
    board_dir(root, board).join(format!("{material}.{}", kind.extension()))
}

/// The state file of a symmetric build under way of the pair of slice `material` (named by
/// the pair's slice the build was asked for), there until the pair is finished.
pub fn build_state_path(root: &Path, board: Board, material: Material) -> PathBuf {
    slice_path(root, board, material, Kind::Wdl).with_extension("build.json")
}

pub(crate) fn header(slice: &Index, kind: Kind, payload: &[u8]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&format_version(slice.scheme()).to_le_bytes());
    h[12] = slice.board().rows() as u8;
    h[13] = slice.board().cols() as u8;
    h[14] = slice.material().a;
    h[15] = slice.material().b;
    h[16] = slice.scheme() as u8;
    h[17] = kind as u8;
    h[24..32].copy_from_slice(&slice.len().to_le_bytes());
    h[32..36].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let check = crc32fast::hash(&h[0..36]);
    h[36..40].copy_from_slice(&check.to_le_bytes());
    h
}

/// Slices larger than this are read at random (no readahead).
const RANDOM_ABOVE: usize = 64 << 20;

/// `map`'s bytes in anonymous memory, read-only.
fn resident_copy(map: &Mmap) -> io::Result<Mmap> {
    let mut copy = memmap2::MmapOptions::new()
        .len(map.len().max(1))
        .map_anon()?;
    // Asked before the first touch, so the pages are huge from the start (a hint: refused
    // quietly where the kernel does not do it).
    #[cfg(target_os = "linux")]
    let _ = copy.advise(memmap2::Advice::HugePage);
    copy[..map.len()].copy_from_slice(map);
    copy.make_read_only()
}

/// A slice file opened and checked: header, size and payload checksum.
pub struct SliceFile {
    map: Mmap,
    pub path: PathBuf,
    /// The slice under the index its header names.
    pub slice: Index,
}

impl SliceFile {
    /// Opens the file of slice `material` of `board` under `root`, whichever index it uses.
    /// `Ok(None)` when it does not exist.
    pub fn open(
        root: &Path,
        board: Board,
        material: Material,
        kind: Kind,
    ) -> Result<Option<SliceFile>, FileError> {
        Self::open_as(root, board, material, kind, false)
    }

    /// `open`, with the file copied into memory of its own where `resident` (huge pages
    /// where the kernel gives them). Probes land anywhere in a slice of up to gigabytes, and
    /// through the page cache's 4 KiB pages nearly each one also misses the TLB: a build's
    /// first pass values captures 1.2x as fast from such a copy (`bench tables`).
    pub fn open_as(
        root: &Path,
        board: Board,
        material: Material,
        kind: Kind,
        resident: bool,
    ) -> Result<Option<SliceFile>, FileError> {
        let path = slice_path(root, board, material, kind);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        // SAFETY: the map is read-only, and finished slice files are never written again
        // (they are replaced only by renaming a new file over the name). A file truncated
        // by another program while mapped could still fault; that is outside our control.
        #[allow(unsafe_code)]
        let map = unsafe { Mmap::map(&file) }.map_err(io_err(&path))?;
        let map = if resident {
            resident_copy(&map).map_err(io_err(&path))?
        } else {
            map
        };
        // The scheme is read before the rest of the header is checked (where it is damaged,
        // the checksum says so).
        let scheme = (map.len() >= HEADER_LEN)
            .then(|| Scheme::from_byte(map[16]))
            .flatten()
            .unwrap_or(Scheme::Paper);
        let slice = Index::new(scheme, board, material).map_err(|e| FileError::Mismatch {
            path: path.clone(),
            found: e.to_string(),
            expected: format!("slice {material} of {board}"),
        })?;
        let f = SliceFile {
            map,
            path: path.clone(),
            slice,
        };
        f.check_header(kind)?;
        // A large slice checked before, the same file since, is not read again (see
        // `checked`).
        let stamps = (f.map.len() > RANDOM_ABOVE)
            .then(super::checked::stamps_dir)
            .flatten();
        let crc = f.stored_payload_crc();
        if !stamps
            .as_deref()
            .is_some_and(|d| super::checked::was_checked(d, &path, crc))
        {
            f.check_payload()?;
            if let Some(d) = &stamps {
                super::checked::mark_checked(d, &path, crc);
            }
        }
        if !resident && f.map.len() > RANDOM_ABOVE {
            // Probes land anywhere in a large slice: the kernel's readahead would read 128 KiB
            // for each 4 KiB probed, and where the tables outgrow memory (the 9-piece 5x9
            // layer, 29 GB on a 24 GiB machine) fill the page cache with pages nobody reads.
            let _ = f.map.advise(memmap2::Advice::Random);
        }
        Ok(Some(f))
    }

    fn check_header(&self, kind: Kind) -> Result<(), FileError> {
        let path = || self.path.clone();
        let h = &self.map[..HEADER_LEN.min(self.map.len())];
        if h.len() < HEADER_LEN || &h[0..8] != MAGIC {
            return Err(FileError::Foreign { path: path() });
        }
        // The version first: a newer format may lay its header out differently.
        let version = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(FileError::Version {
                path: path(),
                found: version,
            });
        }
        let stored = u32::from_le_bytes(h[36..40].try_into().expect("4 bytes"));
        if crc32fast::hash(&h[0..36]) != stored {
            return Err(FileError::HeaderChecksum { path: path() });
        }
        let s = &self.slice;
        let found = format!(
            "board {}x{}, slice {}-{}, index scheme {}, kind {}, {} entries",
            h[12],
            h[13],
            h[14],
            h[15],
            h[16],
            h[17],
            u64::from_le_bytes(h[24..32].try_into().expect("8 bytes"))
        );
        let expected = format!(
            "board {}, slice {}, index scheme {}, kind {}, {} entries",
            s.board(),
            s.material(),
            version,
            kind as u8,
            s.len()
        );
        if found != expected {
            return Err(FileError::Mismatch {
                path: path(),
                found,
                expected,
            });
        }
        let want = kind.payload_len(s.len());
        let have = (self.map.len() - HEADER_LEN) as u64;
        if have != want {
            return Err(FileError::Truncated {
                path: path(),
                found: have,
                expected: want,
            });
        }
        Ok(())
    }

    /// The payload's checksum as the header stores it.
    fn stored_payload_crc(&self) -> u32 {
        u32::from_le_bytes(self.map[32..36].try_into().expect("4 bytes"))
    }

    fn check_payload(&self) -> Result<(), FileError> {
        if crc32fast::hash(self.payload()) != self.stored_payload_crc() {
            return Err(FileError::PayloadChecksum {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    pub fn payload(&self) -> &[u8] {
        &self.map[HEADER_LEN..]
    }

    /// The whole file: header and payload.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}
