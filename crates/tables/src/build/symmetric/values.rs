//! The values of a slice being built: 2 bits an entry in its working file, mapped into
//! memory; the copies and settled draws filled in at the end, and the file sealed.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::MmapMut;

use crate::file::{FileError, HEADER_LEN, Kind, header, slice_path};
use crate::manifest::{self, Hasher};
use crate::scheme::Index;
use crate::symmetric::SymSlice;

/// The 2-bit values of one slice in the file being built, mapped into memory.
pub(super) struct Values {
    pub(super) map: MmapMut,
    /// The payload's first word, inside `map`.
    pub(super) words: *const AtomicU64,
    pub(super) count: usize,
    pub(super) path: PathBuf,
}

// SAFETY: the payload is only read and written through atomics, and the map lives as long
// as the pointer into it.
#[allow(unsafe_code)]
unsafe impl Sync for Values {}
#[allow(unsafe_code)]
unsafe impl Send for Values {}

impl Values {
    /// The bytes of the working file of a slice of `len` entries.
    pub(super) fn file_len(len: u64) -> u64 {
        HEADER_LEN as u64 + len.div_ceil(32) * 8
    }

    /// Takes a working file sealed by `finish_file` but not yet renamed back to the working
    /// length (the bytes past the payload are padding); any other file is left as it is.
    pub(super) fn unseal(path: &Path, len: u64) -> Result<(), FileError> {
        let sealed = HEADER_LEN as u64 + Kind::Wdl.payload_len(len);
        let io = |source| FileError::Io {
            path: path.to_path_buf(),
            source,
        };
        if fs::metadata(path).is_ok_and(|f| f.len() == sealed && sealed != Values::file_len(len)) {
            let f = OpenOptions::new().write(true).open(path).map_err(io)?;
            f.set_len(Values::file_len(len)).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        Ok(())
    }

    /// Opens the working file of a slice of `len` entries: with `fresh`, made anew (zeroed,
    /// whatever was there); else it must be there whole, as a resumed build left it.
    pub(super) fn open(path: PathBuf, len: u64, fresh: bool) -> Result<Values, FileError> {
        let create = fresh;
        let io = |source| FileError::Io {
            path: path.clone(),
            source,
        };
        let count = len.div_ceil(32) as usize;
        let bytes = Values::file_len(len);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let found = file.metadata().map_err(io)?.len();
        if found != bytes && !create {
            return Err(FileError::Truncated {
                path,
                found,
                expected: bytes,
            });
        }
        if fresh {
            // The extent is allocated now, so that a disk too small fails here and not as a
            // fault in the middle of a round.
            file.set_len(0).map_err(io)?;
            rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, bytes)
                .map_err(|e| io(e.into()))?;
        }
        // SAFETY: the working file is this build's own (the lock on the pair's state file
        // keeps a second build away); nothing else writes it while it is mapped.
        #[allow(unsafe_code)]
        let mut map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        let words = map[HEADER_LEN..].as_mut_ptr() as *const AtomicU64;
        debug_assert_eq!(
            words as usize % 8,
            0,
            "maps are page-aligned; the header is 64"
        );
        Ok(Values {
            map,
            words,
            count,
            path,
        })
    }

    #[inline(always)]
    pub(super) fn words(&self) -> &[AtomicU64] {
        // SAFETY: `count` words of the payload, 8-byte aligned, inside the live map.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.words, self.count)
        }
    }

    #[inline(always)]
    pub(super) fn get(&self, i: u64) -> u8 {
        ((self.words()[(i >> 5) as usize].load(Ordering::Relaxed) >> (2 * (i & 31))) & 3) as u8
    }

    /// Sets entry `i` from 0 to `code`; true if this call changed it.
    #[inline(always)]
    pub(super) fn set(&self, i: u64, code: u8) -> bool {
        let bits = (code as u64) << (2 * (i & 31));
        self.words()[(i >> 5) as usize].fetch_or(bits, Ordering::Relaxed) & bits != bits
    }

    /// Adds `bits` to word `w` (nothing for no bits).
    #[inline(always)]
    pub(super) fn or_word(&self, w: u64, bits: u64) {
        if bits != 0 {
            self.words()[w as usize].fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// Writes entry `i` whatever it held.
    pub(super) fn put(&self, i: u64, code: u8) {
        let shift = 2 * (i & 31);
        let w = &self.words()[(i >> 5) as usize];
        w.fetch_and(!(3 << shift), Ordering::Relaxed);
        w.fetch_or((code as u64) << shift, Ordering::Relaxed);
    }

    /// Writes every changed page to the disk.
    pub(super) fn flush(&self) -> Result<(), FileError> {
        self.map.flush().map_err(|source| FileError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// The undecided entries (code 0) among entries of word `w`, as bits `2j`.
    #[inline(always)]
    pub(super) fn undecided_in(&self, w: usize) -> u64 {
        let x = self.words()[w].load(Ordering::Relaxed);
        !(x | x >> 1) & 0x5555_5555_5555_5555
    }
}

/// Gives each copy (an entry of a symmetric class that is not its position's canonical one)
/// the value of the canonical entry.
pub(super) fn fill_copies(slice: &SymSlice, values: &Values, threads: usize) {
    let per = slice.per_class();
    let classes: Vec<u64> = (0..slice.len() / per.max(1))
        .filter(|&c| slice.class_is_symmetric(c))
        .collect();
    crate::parallel::for_chunks(
        classes.len() as u64,
        1,
        threads,
        |_| {},
        |range| {
            for c in range {
                let class = classes[c as usize];
                let start = class * per;
                for (i, (us, them)) in (start..start + per).zip(slice.positions(start, start + per))
                {
                    let canonical = slice.rank(us, them);
                    if canonical != i {
                        values.put(i, values.get(canonical));
                    }
                }
            }
        },
    );
}

/// Turns every settled draw (code 3) into a draw (code 0).
pub(super) fn settle_draws(values: &Values, threads: usize) {
    let words = values.words();
    crate::parallel::for_chunks(
        words.len() as u64,
        crate::parallel::WORDS,
        threads,
        |_| {},
        |range| {
            for w in range {
                let word = &words[w as usize];
                let x = word.load(Ordering::Relaxed);
                let both = x & (x >> 1) & 0x5555_5555_5555_5555;
                if both != 0 {
                    word.store(x & !(both | both << 1), Ordering::Relaxed);
                }
            }
        },
    );
}

/// Writes the header of a finished working file, cuts it to its length, syncs it and gives
/// it its final name; then records its SHA-256 (hashed from the map, `progress` told the
/// bytes as it goes) in the board's manifest.
pub(super) fn finish_file(
    root: &Path,
    slice: &Index,
    values: Values,
    progress: &dyn Fn(u64),
) -> Result<PathBuf, FileError> {
    let path = slice_path(root, slice.board(), slice.material(), Kind::Wdl);
    let building = values.path.clone();
    let payload_len = Kind::Wdl.payload_len(slice.len()) as usize;
    let payload = &values.map[HEADER_LEN..][..payload_len];
    let header = header(slice, Kind::Wdl, payload);
    let mut sha = Hasher::default();
    sha.update(&header, progress);
    sha.update(payload, progress);
    let io = |source| FileError::Io {
        path: building.clone(),
        source,
    };
    drop(values);
    let f = OpenOptions::new().write(true).open(&building).map_err(io)?;
    std::os::unix::fs::FileExt::write_all_at(&f, &header, 0).map_err(io)?;
    f.set_len((HEADER_LEN + payload_len) as u64).map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&building, &path).map_err(io)?;
    let dir = path
        .parent()
        .expect("slice files live in a board directory");
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    manifest::record(
        dir,
        &manifest::file_name(slice.material(), Kind::Wdl),
        &sha.hex(),
    )?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::symmetric::SETTLED;
    use crate::wdl::{LOSS, WIN};

    #[test]
    fn codes_set_once_put_anywhere_and_kept_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("3-2.wdl.building");
        let len = 100; // four words, the last one part-used
        let v = Values::open(path.clone(), len, true).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            Values::file_len(len),
            "the extent is allocated at once"
        );
        assert!((0..len).all(|i| v.get(i) == 0), "a fresh file is undecided");
        assert!(v.set(37, WIN));
        assert!(!v.set(37, WIN), "set says whether it changed the entry");
        v.put(38, SETTLED);
        v.put(38, LOSS);
        v.or_word(3, (WIN as u64) << (2 * (99 & 31)));
        assert_eq!(
            (v.get(37), v.get(38), v.get(99), v.get(36)),
            (WIN, LOSS, WIN, 0)
        );
        // Word 1 holds entries 32..64: 37 and 38 decided, the rest undecided.
        let undecided = v.undecided_in(1);
        assert_eq!(undecided.count_ones(), 30);
        assert_eq!(undecided & (1 << (2 * 5)), 0, "entry 37 is decided");
        v.flush().unwrap();
        drop(v);
        let again = Values::open(path.clone(), len, false).unwrap();
        assert_eq!(
            (again.get(37), again.get(38), again.get(99)),
            (WIN, LOSS, WIN)
        );
        drop(again);
        let err = Values::open(path, len + 64, false).err().unwrap();
        assert!(
            matches!(err, FileError::Truncated { .. }),
            "a resumed build needs its file whole: {err}"
        );
    }

    #[test]
    fn settled_draws_become_draws_and_nothing_else_changes() {
        let dir = tempfile::tempdir().unwrap();
        let len = 5000;
        let v = Values::open(dir.path().join("x.building"), len, true).unwrap();
        let code = |i: u64| [0, WIN, LOSS, SETTLED][(i * 7 % 4) as usize];
        for i in 0..len {
            v.put(i, code(i));
        }
        settle_draws(&v, 2);
        for i in 0..len {
            let want = if code(i) == SETTLED { 0 } else { code(i) };
            assert_eq!(v.get(i), want, "entry {i}");
        }
    }

    #[test]
    fn a_sealed_working_file_is_taken_back_to_its_working_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.building");
        let len = 1000;
        drop(Values::open(path.clone(), len, true).unwrap());
        let sealed = HEADER_LEN as u64 + Kind::Wdl.payload_len(len);
        assert_ne!(sealed, Values::file_len(len), "the test needs padding");
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(sealed)
            .unwrap();
        Values::unseal(&path, len).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), Values::file_len(len));
        // Any other length is left for the resume to find short.
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(10)
            .unwrap();
        Values::unseal(&path, len).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), 10);
    }
}
