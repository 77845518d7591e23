//! The builder of symmetric tables (index scheme 2), made for slices that no longer fit in
//! memory at several bits a position: the 9-piece 5x9 pairs.
//!
//! The same retrograde analysis as `build.rs` (captures from the finished smaller slices in
//! a first pass, then paika rounds to a fixpoint), with three changes:
//! - **2 bits an entry and nothing else.** A code 3 marks what is settled as a draw before the
//!   end (a capture position drawn, or a copy in a symmetric class), so no paika bitmap is
//!   needed; what is decided in a round goes to a list, not a bitmap. When that list would
//!   outgrow its memory, the next round looks forward from every undecided entry instead,
//!   which needs no list.
//! - **The values live in the file being built**, mapped into memory: the kernel writes them
//!   back, so a pair larger than free memory slows down instead of swapping, and a checkpoint
//!   is a flush of the pages changed since the last one.
//! - **Resumable.** A state file beside the pair records the first pass's progress and the
//!   rounds done. A killed build starts again from there: the first pass at its last mark,
//!   the rounds with a forward round (values only ever go from undecided to final, and every
//!   value written before the kill is right, so a forward round sees all that is known).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::MmapMut;
use serde::{Deserialize, Serialize};

use crate::build::{
    BuildError, BuildOptions, SliceReport, bytes_bar, capture_values, progress_bar,
};
use crate::capture_values::{CaptureValues, Scratch};
use crate::file::{FileError, HEADER_LEN, Kind, build_state_path, header, slice_path};
use crate::index::Material;
use crate::manifest::{self, Hasher};
use crate::plan::{LIST_BYTES, pair_of};
use crate::probe::Database;
use crate::scheme::Index;
use crate::symmetric::SymSlice;
use crate::wdl::{DRAW, LOSS, WIN};
use fanorona_rules::geometry::{Bitboard, Board, NONE, points};
use fanorona_rules::machine::own_cpu_seconds;
use fanorona_rules::position::{Color, Position};

/// Settled as a draw while building (a capture position drawn, or a copy); 0 in the file.
const SETTLED: u8 = 3;

/// Entries a thread takes at a time.
const CHUNK: u64 = 1 << 14;

/// Big sets a thread takes at a time in a first pass by big sets: on 5x9's 4-5, 32 of them
/// are about 750,000 entries, whose reads fall in at most a few hundred classes of the
/// 8-piece slices, some megabytes.
const BIG_SETS: u64 = 32;
const _: () = assert!(BIG_SETS as usize <= SymSlice::BIG_BLOCK);
fn entries(board: Board, m: Material) -> u64 {
    crate::symmetric::entries(board, m)
}

/// Bytes of disk a symmetric pair still needs under `root`: its working files, padded to 8
/// bytes, less what a build under way has allocated already.
pub fn disk_needed(root: &Path, board: Board, material: Material) -> u64 {
    pair_of(material)
        .into_iter()
        .map(|m| {
            let file = HEADER_LEN as u64 + entries(board, m).div_ceil(32) * 8;
            let have = fs::metadata(building_path(root, board, m)).map_or(0, |f| f.len());
            file.saturating_sub(have)
        })
        .fold(0, u64::saturating_add)
}

/// The 2-bit values of one slice in the file being built, mapped into memory.
struct Values {
    map: MmapMut,
    /// The payload's first word, inside `map`.
    words: *const AtomicU64,
    count: usize,
    path: PathBuf,
}

// SAFETY: the payload is only read and written through atomics, and the map lives as long
// as the pointer into it.
#[allow(unsafe_code)]
unsafe impl Sync for Values {}
#[allow(unsafe_code)]
unsafe impl Send for Values {}

impl Values {
    /// The bytes of the working file of a slice of `len` entries.
    fn file_len(len: u64) -> u64 {
        HEADER_LEN as u64 + len.div_ceil(32) * 8
    }

    /// Takes a working file sealed by `finish_file` but not yet renamed back to the working
    /// length (the bytes past the payload are padding); any other file is left as it is.
    fn unseal(path: &Path, len: u64) -> Result<(), FileError> {
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
    fn open(path: PathBuf, len: u64, fresh: bool) -> Result<Values, FileError> {
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
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `count` words of the payload, 8-byte aligned, inside the live map.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.words, self.count)
        }
    }

    #[inline(always)]
    fn get(&self, i: u64) -> u8 {
        ((self.words()[(i >> 5) as usize].load(Ordering::Relaxed) >> (2 * (i & 31))) & 3) as u8
    }

    /// Sets entry `i` from 0 to `code`; true if this call changed it.
    #[inline(always)]
    fn set(&self, i: u64, code: u8) -> bool {
        let bits = (code as u64) << (2 * (i & 31));
        self.words()[(i >> 5) as usize].fetch_or(bits, Ordering::Relaxed) & bits != bits
    }

    /// Adds `bits` to word `w` (nothing for no bits).
    #[inline(always)]
    fn or_word(&self, w: u64, bits: u64) {
        if bits != 0 {
            self.words()[w as usize].fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// Writes entry `i` whatever it held.
    fn put(&self, i: u64, code: u8) {
        let shift = 2 * (i & 31);
        let w = &self.words()[(i >> 5) as usize];
        w.fetch_and(!(3 << shift), Ordering::Relaxed);
        w.fetch_or((code as u64) << shift, Ordering::Relaxed);
    }

    /// Writes every changed page to the disk.
    fn flush(&self) -> Result<(), FileError> {
        self.map.flush().map_err(|source| FileError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// The undecided entries (code 0) among entries of word `w`, as bits `2j`.
    #[inline(always)]
    fn undecided_in(&self, w: usize) -> u64 {
        let x = self.words()[w].load(Ordering::Relaxed);
        !(x | x >> 1) & 0x5555_5555_5555_5555
    }
}

/// Where a pair's build stands, kept beside it in `A-B.build.json`.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct State {
    /// Per slice of the pair: entries below this mark are through the first pass (the whole
    /// slice once a pass by big sets ends).
    first_pass: Vec<u64>,
    /// Per slice whose first pass goes by big sets (`PassOrder::of`): big sets, by rank,
    /// below this mark are through it. Absent in older state files: none.
    #[serde(default)]
    big_sets_done: Vec<u64>,
    /// Paika rounds done (0 while the first pass runs).
    rounds: u32,
    /// Set once the rounds reached their fixpoint: what is left is writing the files.
    finishing: bool,
    /// Seconds spent so far, over every run.
    seconds: f64,
    /// Processor seconds (all threads) spent so far, over every run: beside `seconds`, what
    /// the pair costs when other work shares the cores. Absent in older state files: counted
    /// from the first run that knows it.
    #[serde(default)]
    cpu_seconds: f64,
}

impl State {
    /// Entries of slice `x` through the first pass: under a pass by big sets, as many as
    /// the share of big sets done (an estimate: big sets do not all have as many entries).
    fn first_pass_done(&self, x: usize, slice: &SymSlice) -> f64 {
        let sets = self.big_sets_done.get(x).copied().unwrap_or(0);
        if self.first_pass[x] == 0 && sets > 0 {
            slice.len() as f64 * sets as f64 / slice.big_sets() as f64
        } else {
            self.first_pass[x] as f64
        }
    }

    /// Units of slice `x` through its first pass in `order`.
    fn mark(&self, x: usize, order: PassOrder) -> u64 {
        match order {
            PassOrder::Entries => self.first_pass[x],
            PassOrder::BigSets => self.big_sets_done[x],
        }
    }

    fn set_mark(&mut self, x: usize, order: PassOrder, done: u64) {
        match order {
            PassOrder::Entries => self.first_pass[x] = done,
            PassOrder::BigSets => self.big_sets_done[x] = done,
        }
    }
}

fn building_path(root: &Path, board: Board, material: Material) -> PathBuf {
    slice_path(root, board, material, Kind::Wdl).with_extension("wdl.building")
}

fn save_state(path: &Path, state: &State) -> Result<(), FileError> {
    let io = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("json.tmp");
    let mut f = File::create(&tmp).map_err(io)?;
    f.write_all(&serde_json::to_vec(state).expect("a state serialises"))
        .map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

fn load_state(path: &Path) -> Option<State> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// A symmetric pair being built: one slice when both sides have as many pieces.
struct Pair<'a> {
    board: Board,
    slices: Vec<SymSlice>,
    values: Vec<Values>,
    threads: usize,
    options: &'a BuildOptions,
}

/// Builds slice `material` and its pair under the symmetric index; the smaller slices a
/// capture leads to must be there (in either index).
pub(crate) fn build_pair(
    db: &Database,
    board: Board,
    material: Material,
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    let root = db.root();
    let invalid = |e: crate::index::SliceError| BuildError::Invalid(e.to_string());
    let materials = pair_of(material);
    let slices: Vec<SymSlice> = materials
        .iter()
        .map(|&m| SymSlice::new(board, m).map_err(invalid))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = materials.iter().map(Material::to_string).collect();
    let label = format!("{board} {}", names.join(" + "));
    let state_file = build_state_path(root, board, material);
    fs::create_dir_all(state_file.parent().expect("a board directory")).map_err(|source| {
        FileError::Io {
            path: state_file.clone(),
            source,
        }
    })?;
    let _lock = lock_pair(root, board, material)?;
    let mut state = load_state(&state_file).unwrap_or_default();
    if state.first_pass.len() != slices.len() {
        state = State {
            first_pass: vec![0; slices.len()],
            ..State::default()
        };
    }
    let mut resumed = state
        != State {
            first_pass: vec![0; slices.len()],
            ..State::default()
        };
    // A build killed between sealing a working file (header written, cut to the final
    // length) and renaming it left the file short of its working length; finishing seals it
    // again, so it only needs that length back.
    if state.finishing {
        for (m, s) in materials.iter().zip(&slices) {
            Values::unseal(&building_path(root, board, *m), s.len())?;
        }
    }
    // A resumed build needs its working files as it left them; without them, it starts over.
    let whole = |m: &Material, s: &SymSlice| {
        fs::metadata(building_path(root, board, *m))
            .is_ok_and(|f| f.len() == Values::file_len(s.len()))
            || crate::file::slice_path(root, board, *m, Kind::Wdl).is_file() && state.finishing
    };
    if resumed && !materials.iter().zip(&slices).all(|(m, s)| whole(m, s)) {
        log(&format!(
            "{label}: the working files are missing or cut short: starting the pair over"
        ));
        state = State {
            first_pass: vec![0; slices.len()],
            ..State::default()
        };
        resumed = false;
    }
    if resumed {
        log(&format!(
            "{label}: resuming ({})",
            if state.finishing {
                "writing the files".to_string()
            } else if state.rounds > 0 {
                format!("{} rounds done", state.rounds)
            } else {
                let done: f64 = slices
                    .iter()
                    .enumerate()
                    .map(|(x, s)| state.first_pass_done(x, s))
                    .sum();
                let all: f64 = slices.iter().map(|s| s.len() as f64).sum();
                format!("first pass {:.1}% done", 100.0 * done / all)
            }
        ));
    }
    let (run_start, run_cpu) = (Instant::now(), own_cpu_seconds());
    let (before, cpu_before) = (state.seconds, state.cpu_seconds);
    let spent = |state: &mut State| {
        state.seconds = before + run_start.elapsed().as_secs_f64();
        state.cpu_seconds = cpu_before + (own_cpu_seconds() - run_cpu);
    };
    let mut save = |state: &mut State, pair: &Pair| -> Result<(), FileError> {
        for v in &pair.values {
            v.flush()?;
        }
        spent(state);
        save_state(&state_file, state)
    };

    if !state.finishing {
        let values = slices
            .iter()
            .zip(&materials)
            .map(|(s, &m)| Values::open(building_path(root, board, m), s.len(), !resumed))
            .collect::<Result<Vec<_>, _>>()?;
        let pair = Pair {
            board,
            slices: slices.clone(),
            values,
            threads: options.threads,
            options,
        };
        for (x, name) in names.iter().enumerate() {
            if state.first_pass[x] >= pair.slices[x].len() {
                continue;
            }
            pair.first_pass(db, x, &mut state, &mut save, &label, name, log)?;
        }
        let (rounds_start, rounds_cpu) = (Instant::now(), own_cpu_seconds());
        let (rounds, forwards) = pair.rounds(&mut state, &mut save, &label, log)?;
        log(&format!(
            "{label}: {rounds} rounds ({forwards} forward, {} backward) {:.2} s (processor {:.1} s)",
            rounds - forwards,
            rounds_start.elapsed().as_secs_f64(),
            own_cpu_seconds() - rounds_cpu
        ));
        state.finishing = true;
        save(&mut state, &pair)?;
    }

    // The copies take their canonical entry's value, the settled draws become draws, and the
    // files get their headers and final names: each step can be run again after a kill, and
    // a slice already under its final name is done.
    let mut reports = Vec::new();
    for (slice, name) in slices.iter().zip(&names) {
        let m = slice.material;
        if crate::file::SliceFile::open(root, board, m, Kind::Wdl)?.is_none() {
            let v = Values::open(building_path(root, board, m), slice.len(), false)?;
            fill_copies(slice, &v, options.threads);
            settle_draws(&v, options.threads);
            v.flush()?;
            let bar = bytes_bar(
                options,
                HEADER_LEN as u64 + Kind::Wdl.payload_len(slice.len()),
                &format!("{board} {name} sha256"),
            );
            finish_file(root, &Index::Symmetric(*slice), v, &|n| bar.inc(n))?;
            bar.finish_and_clear();
        } else {
            crate::build::record_if_missing(root, board, m, Kind::Wdl)?;
        }
        spent(&mut state);
        // The process's peak so far: the mapped values count, as they stay resident.
        let peak = fanorona_rules::machine::own_status("VmHWM").map_or(String::new(), |b| {
            format!(", peak resident {:.2} GiB", b as f64 / (1u64 << 30) as f64)
        });
        log(&format!(
            "{board} {name}: {} entries, {} rounds, {:.2} s (processor {:.1} s){peak} -> {}",
            slice.len(),
            state.rounds,
            state.seconds,
            state.cpu_seconds,
            slice_path(root, board, m, Kind::Wdl).display()
        ));
        reports.push(SliceReport {
            material: m,
            positions: slice.len(),
            seconds: state.seconds,
            rounds: state.rounds,
            built: true,
        });
    }
    tidy_finished(root, board, material);
    Ok(reports)
}

/// Removes a finished pair's state and lock files; a build killed between its last rename
/// and this leaves them, and the next build, finding the pair whole, calls it again.
pub(crate) fn tidy_finished(root: &Path, board: Board, material: Material) {
    let _ = fs::remove_file(build_state_path(root, board, material));
    let _ = fs::remove_file(lock_path(root, board, material));
}

fn lock_path(root: &Path, board: Board, material: Material) -> PathBuf {
    slice_path(root, board, material, Kind::Wdl).with_extension("build.lock")
}

/// Keeps a second build away from a pair while this one runs (released when dropped).
fn lock_pair(root: &Path, board: Board, material: Material) -> Result<File, BuildError> {
    let path = lock_path(root, board, material);
    let file = File::create(&path).map_err(|source| FileError::Io {
        path: path.clone(),
        source,
    })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(BuildError::Invalid(format!(
            "another build is working on slice {material} of {board} ({} is locked)",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(source)) => Err(FileError::Io { path, source }.into()),
    }
}

/// Gives each copy (an entry of a symmetric class that is not its position's canonical one)
/// the value of the canonical entry.
fn fill_copies(slice: &SymSlice, values: &Values, threads: usize) {
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
fn settle_draws(values: &Values, threads: usize) {
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
fn finish_file(
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

type Save<'s> = dyn FnMut(&mut State, &Pair) -> Result<(), FileError> + 's;

impl Pair<'_> {
    /// The slice whose positions follow a move from slice `x`.
    fn other(&self, x: usize) -> usize {
        if self.slices.len() == 2 { 1 - x } else { 0 }
    }

    /// Pass 1 over slice `x`, from its mark, in the order `PassOrder::of` gives it: captures
    /// from the smaller slices, positions without a move, copies; the mark saved as it goes.
    #[allow(clippy::too_many_arguments)]
    fn first_pass(
        &self,
        db: &Database,
        x: usize,
        state: &mut State,
        save: &mut Save<'_>,
        label: &str,
        name: &str,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), BuildError> {
        let slice = &self.slices[x];
        let values = &self.values[x];
        let order = PassOrder::of(slice.material);
        if state.big_sets_done.len() != self.slices.len() {
            state.big_sets_done = vec![0; self.slices.len()];
        }
        if order == PassOrder::BigSets {
            // A mark of a pass in the order of the entries means nothing here; the entries
            // it covered are written again with the same codes.
            state.first_pass[x] = 0;
        }
        let (units, chunk) = order.units(slice);
        let from = state.mark(x, order);
        let (len, start, cpu) = (slice.len(), Instant::now(), own_cpu_seconds());
        let captures = capture_values(db, slice.material)?;
        let bar = progress_bar(self.options, len, &format!("{label} first pass {name}"));
        bar.set_position(state.first_pass_done(x, slice) as u64);
        let entries = AtomicU64::new(0);
        let work = |range: std::ops::Range<u64>| {
            let (mut reads, mut visited) = (Scratch::new(), 0);
            // The codes of one word, written together: in either order the entries of a
            // chunk come mostly as increasing neighbours.
            let (mut word, mut bits) = (u64::MAX, 0u64);
            order.walk(slice, range, |class, i, us, them| {
                visited += 1;
                if let Some(code) = first_code(slice, &captures, class, i, us, them, &mut reads) {
                    if i >> 5 != word {
                        values.or_word(word, bits);
                        (word, bits) = (i >> 5, 0);
                    }
                    bits |= (code as u64) << (2 * (i & 31));
                }
            });
            values.or_word(word, bits);
            bar.inc(visited);
            entries.fetch_add(visited, Ordering::Relaxed);
        };
        chunks_with_marks(
            from,
            units,
            self.threads,
            chunk,
            &work,
            |_| {},
            self.checkpoint_every(),
            |done| {
                state.set_mark(x, order, done);
                save(state, self)?;
                // To a log file, where there is no bar: how far, how fast, how long still.
                if self.options.report_every.is_some() {
                    let rate =
                        entries.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
                    let left = len as f64 * (units - done) as f64 / units.max(1) as f64;
                    log(&format!(
                        "{label} first pass {name}{}: {:.1}% ({done} of {units} {}), {rate:.0} entries/s, eta {:.0} s",
                        order.by(),
                        100.0 * done as f64 / units.max(1) as f64,
                        order.unit(),
                        left / rate.max(1e-9)
                    ));
                }
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        state.set_mark(x, order, units);
        state.first_pass[x] = len;
        save(state, self)?;
        log(&format!(
            "{label}: first pass {name} {:.2} s (processor {:.1} s)",
            start.elapsed().as_secs_f64(),
            own_cpu_seconds() - cpu
        ));
        Ok(())
    }

    /// How often a long pass saves its mark.
    fn checkpoint_every(&self) -> Duration {
        self.options.checkpoint_every.unwrap_or(
            self.options
                .report_every
                .unwrap_or(Duration::from_secs(60))
                .min(Duration::from_secs(300)),
        )
    }

    /// Entries of slice `x` still undecided.
    fn count_undecided(&self, x: usize) -> u64 {
        let v = &self.values[x];
        let n = AtomicU64::new(0);
        let len = self.slices[x].len();
        crate::parallel::for_chunks(
            v.count as u64,
            crate::parallel::WORDS,
            self.threads,
            |_| {},
            |range| {
                let mut c = 0;
                for w in range {
                    let mut bits = v.undecided_in(w as usize);
                    // The padding past the last entry reads as undecided: left out.
                    if (w + 1) * 32 > len {
                        bits &= (1u64 << (2 * (len - w * 32))) - 1;
                    }
                    c += bits.count_ones() as u64;
                }
                n.fetch_add(c, Ordering::Relaxed);
            },
        );
        n.into_inner()
    }

    /// Paika rounds to the fixpoint; returns (rounds, forward rounds) of this run.
    fn rounds(
        &self,
        state: &mut State,
        save: &mut Save<'_>,
        label: &str,
        log: &mut dyn FnMut(&str),
    ) -> Result<(u32, u32), BuildError> {
        let mut undecided: u64 = (0..self.slices.len())
            .map(|x| self.count_undecided(x))
            .sum();
        // The first round looks forward: the first pass decided too much to list, and after a
        // resume nothing is listed.
        let mut frontier: Option<Vec<Vec<u64>>> = None;
        let (mut rounds, mut forwards) = (0, 0);
        let mut last_log = Instant::now();
        let status = crate::build::status_line(self.options);
        loop {
            let round_start = Instant::now();
            let round = state.rounds + 1;
            let list = Decided::new(self.slices.len());
            let forward = match &frontier {
                None => true,
                Some(f) => f.iter().map(Vec::len).sum::<usize>() as u64 > undecided,
            };
            if forward {
                forwards += 1;
                self.forward_round(&list);
            } else {
                self.backward_round(frontier.as_ref().expect("a list"), &list);
            }
            let (decided, next) = list.take();
            rounds += 1;
            state.rounds = round;
            undecided = undecided.saturating_sub(decided);
            save(state, self)?;
            let line = format!(
                "{label}: round {round} ({}): {decided} decided, {undecided} undecided, {:.2} s",
                if forward { "forward" } else { "backward" },
                round_start.elapsed().as_secs_f64()
            );
            if self
                .options
                .report_every
                .is_some_and(|e| last_log.elapsed() >= e)
            {
                last_log = Instant::now();
                log(&line);
            }
            if self.options.progress {
                status.set_message(line);
            }
            if decided == 0 {
                break;
            }
            frontier = next;
        }
        status.finish_and_clear();
        Ok((rounds, forwards))
    }

    /// Calls `f(i, us, them)` for every undecided entry of slice `x`, on all threads, and
    /// decides the entry as `f` says (listing it in `list`).
    fn for_undecided<F>(&self, x: usize, list: &Decided, f: F)
    where
        F: Fn(u64, u64, u64) -> Option<u8> + Sync,
    {
        let (v, slice) = (&self.values[x], &self.slices[x]);
        let len = slice.len();
        crate::parallel::for_chunks(
            v.count as u64,
            crate::parallel::WORDS,
            self.threads,
            |_| {},
            |range| {
                let mut cursor = slice.cursor();
                let mut decided = Vec::new();
                for w in range {
                    let mut bits = v.undecided_in(w as usize);
                    while bits != 0 {
                        let i = w * 32 + bits.trailing_zeros() as u64 / 2;
                        bits &= bits - 1;
                        if i >= len {
                            break;
                        }
                        // Decided since the word was read (by this thread's own last step).
                        if v.get(i) != 0 {
                            continue;
                        }
                        let (us, them) = cursor.seek(i);
                        if let Some(code) = f(i, us, them)
                            && v.set(i, code)
                        {
                            decided.push(i);
                        }
                    }
                }
                list.extend(x, &mut decided);
            },
        );
    }

    /// Decides each undecided entry from its successors: a win if one is a loss, a loss if
    /// all are wins.
    fn forward_round(&self, list: &Decided) {
        let g = self.board.geometry();
        for x in 0..self.slices.len() {
            let y = self.other(x);
            let (after, seen) = (&self.slices[y], &self.values[y]);
            self.for_undecided(x, list, |_, us, them| {
                let empty = g.all & !(us | them);
                let mut all_win = true;
                for d in 0..8 {
                    for to in points(g.step(us, d) & empty) {
                        let from = (to as i32 - g.shift[d]) as u8;
                        match seen.get(after.rank(them, us ^ (1 << from) ^ (1 << to))) {
                            LOSS => return Some(WIN),
                            WIN => {}
                            _ => all_win = false,
                        }
                    }
                }
                all_win.then_some(LOSS)
            });
        }
    }

    /// Whether every paika move of the side holding `us` against `them` leads to an entry of
    /// slice `x` that is a win (for the side then to move).
    fn all_paika_reach_wins(&self, us: u64, them: u64, x: usize) -> bool {
        let g = self.board.geometry();
        let (slice, values) = (&self.slices[x], &self.values[x]);
        let empty = g.all & !(us | them);
        (0..8).all(|d| {
            points(g.step(us, d) & empty).all(|to| {
                let from = (to as i32 - g.shift[d]) as u8;
                values.get(slice.rank(them, us ^ (1 << from) ^ (1 << to))) == WIN
            })
        })
    }

    /// Walks back from the entries decided in the last round: their undecided paika
    /// predecessors win against a loss, and lose if every move reaches a win.
    fn backward_round(&self, frontier: &[Vec<u64>], list: &Decided) {
        let g = self.board.geometry();
        for (x, entries) in frontier.iter().enumerate() {
            let y = self.other(x);
            let (before, values) = (&self.slices[y], &self.values[y]);
            let slice = &self.slices[x];
            crate::parallel::for_chunks(
                entries.len() as u64,
                CHUNK,
                self.threads,
                |_| {},
                |range| {
                    let mut decided = Vec::new();
                    for k in range {
                        let i = entries[k as usize];
                        let lost = self.values[x].get(i) == LOSS;
                        let (us, them) = slice.unrank(i);
                        let empty = g.all & !(us | them);
                        // The side that just moved is `them`: step each of its pieces back.
                        for q in points(them) {
                            for d in 0..8 {
                                let p = g.neighbour(q, d);
                                if p == NONE || empty & (1 << p) == 0 {
                                    continue;
                                }
                                let mover = them ^ (1 << q) ^ (1 << p);
                                let j = before.rank(mover, us);
                                if values.get(j) != 0 {
                                    continue;
                                }
                                let code = if lost {
                                    WIN
                                } else if self.all_paika_reach_wins(mover, us, x) {
                                    LOSS
                                } else {
                                    continue;
                                };
                                if values.set(j, code) {
                                    decided.push(j);
                                }
                            }
                        }
                    }
                    list.extend(y, &mut decided);
                },
            );
        }
    }
}

/// The entries decided in a round, per slice, while they fit the lists' memory.
struct Decided {
    lists: Vec<Mutex<Vec<u64>>>,
    count: AtomicU64,
    overflow: AtomicBool,
}

impl Decided {
    fn new(slices: usize) -> Decided {
        Decided {
            lists: (0..slices).map(|_| Mutex::new(Vec::new())).collect(),
            count: AtomicU64::new(0),
            overflow: AtomicBool::new(false),
        }
    }

    /// Takes a thread's entries of slice `x` decided in one chunk (counted always, listed
    /// while the lists fit), leaving `entries` empty.
    fn extend(&self, x: usize, entries: &mut Vec<u64>) {
        let n = entries.len() as u64;
        if n == 0 {
            return;
        }
        let before = self.count.fetch_add(n, Ordering::Relaxed);
        if before + n > LIST_BYTES / 8 {
            self.overflow.store(true, Ordering::Relaxed);
        } else if !self.overflow.load(Ordering::Relaxed) {
            self.lists[x]
                .lock()
                .expect("no thread panics holding it")
                .append(entries);
        }
        entries.clear();
    }

    /// How many were decided, and the lists if they all fit.
    fn take(self) -> (u64, Option<Vec<Vec<u64>>>) {
        let count = self.count.into_inner();
        if self.overflow.into_inner() {
            return (count, None);
        }
        let lists = self
            .lists
            .into_iter()
            .map(|l| l.into_inner().expect("no thread panics holding it"))
            .collect();
        (count, Some(lists))
    }
}

/// The order of a first pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassOrder {
    /// Entry after entry, as the slice is laid out.
    Entries,
    /// A block of big sets at a time, class by class (`SymSlice::for_each_in_big_sets`).
    BigSets,
}

impl PassOrder {
    /// The order of a build's first pass over a slice of `material`: by big sets when the
    /// small set is the side to move's and its captures leave the opponent with no more
    /// pieces than it, for the slices they lead to are classed by the opponent's set. In
    /// the order of the entries, the opponent's set changes from one entry to the next and
    /// every read lands in another class of a slice of hundreds of megabytes; by big sets,
    /// a block of them keeps the reads in a few classes, in the cache. On 5x9's 9 pieces,
    /// 4-5; on 8, 4-4.
    pub fn of(material: Material) -> Self {
        if material.a <= material.b && material.b <= material.a + 1 {
            PassOrder::BigSets
        } else {
            PassOrder::Entries
        }
    }

    /// The units a pass in this order goes through over `slice` (entries or big sets), and
    /// how many a thread takes at a time.
    fn units(self, slice: &SymSlice) -> (u64, u64) {
        match self {
            PassOrder::Entries => (slice.len(), CHUNK),
            PassOrder::BigSets => (slice.big_sets(), BIG_SETS),
        }
    }

    /// Calls `f(class, entry, us, them)` for every entry of units `range` (at most a
    /// chunk of them).
    #[inline]
    fn walk(
        self,
        slice: &SymSlice,
        range: std::ops::Range<u64>,
        mut f: impl FnMut(u64, u64, Bitboard, Bitboard),
    ) {
        match self {
            PassOrder::Entries => {
                let per = slice.per_class();
                for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                    f(i / per, i, us, them);
                }
            }
            PassOrder::BigSets => slice.for_each_in_big_sets(range, f),
        }
    }

    /// How a log line names the order, and its unit.
    fn by(self) -> &'static str {
        match self {
            PassOrder::Entries => "",
            PassOrder::BigSets => " by the opponent's sets",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            PassOrder::Entries => "entries",
            PassOrder::BigSets => "sets",
        }
    }
}

/// The first pass's work over at least `count` entries of `slice` (fewer at its end) from
/// about `at` (a share of the slice, 0 to 1), in `order`, with the capture values
/// `captures`; nothing written. Returns the entries valued and the sum of their codes (so
/// that none is optimised away).
pub fn first_pass_sample(
    slice: &SymSlice,
    captures: &CaptureValues,
    order: PassOrder,
    at: f64,
    count: u64,
) -> (u64, u64) {
    let (mut reads, mut n, mut sum) = (Scratch::new(), 0u64, 0u64);
    let (units, chunk) = order.units(slice);
    let mut unit = (units as f64 * at) as u64;
    while n < count && unit < units {
        let end = (unit + chunk).min(units);
        order.walk(slice, unit..end, |class, i, us, them| {
            n += 1;
            sum += first_code(slice, captures, class, i, us, them, &mut reads).unwrap_or(0) as u64;
        });
        unit = end;
    }
    (n, sum)
}

/// The first pass's code for entry `i` (of class `class`) of `slice`, where the side to
/// move holds `us` and the opponent `them`: `SETTLED` for a copy or a drawn capture position,
/// the value of a capture position, a loss with no move at all; `None` for a position left
/// to the rounds.
#[inline(always)]
fn first_code(
    slice: &SymSlice,
    captures: &CaptureValues,
    class: u64,
    i: u64,
    us: Bitboard,
    them: Bitboard,
    reads: &mut Scratch,
) -> Option<u8> {
    if slice.class_is_symmetric(class) {
        // The entries' small set is the class's representative as it stands.
        let big = if slice.small_is_us() { them } else { us };
        if slice.rank_in_class(&slice.class(class), big) != i {
            return Some(SETTLED);
        }
    }
    let pos = Position::from_parts(slice.board, us, them, Color::White);
    if let Some(code) = captures.value(&pos, reads) {
        return Some(match code {
            DRAW => SETTLED,
            c => c,
        });
    }
    let g = slice.board.geometry();
    let empty = g.all & !(us | them);
    (0..8).all(|d| g.step(us, d) & empty == 0).then_some(LOSS)
}

/// Runs `work` over `from..len` in chunks of `chunk` on `threads` threads, and every `every`
/// calls `mark` with a unit below which every chunk is done. `done` is told each chunk's size.
#[allow(clippy::too_many_arguments)]
fn chunks_with_marks<W, D, M>(
    from: u64,
    len: u64,
    threads: usize,
    chunk: u64,
    work: &W,
    done: D,
    every: Duration,
    mut mark: M,
) -> Result<(), BuildError>
where
    W: Fn(std::ops::Range<u64>) + Sync,
    D: Fn(u64) + Sync,
    M: FnMut(u64) -> Result<(), BuildError>,
{
    let next = AtomicU64::new(from);
    // Per thread: the start of the chunk it works on (a lower bound of it while it takes
    // one), u64::MAX when it has none.
    let busy: Vec<AtomicU64> = (0..threads.max(1))
        .map(|_| AtomicU64::new(u64::MAX))
        .collect();
    let (alive, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        for slot in &busy {
            let (next, done, alive) = (&next, &done, alive.clone());
            s.spawn(move || {
                loop {
                    slot.store(next.load(Ordering::SeqCst), Ordering::SeqCst);
                    let start = next.fetch_add(chunk, Ordering::SeqCst);
                    if start >= len {
                        slot.store(u64::MAX, Ordering::SeqCst);
                        break;
                    }
                    slot.store(start, Ordering::SeqCst);
                    let end = (start + chunk).min(len);
                    work(start..end);
                    done(end - start);
                }
                drop(alive);
            });
        }
        drop(alive);
        // Woken by the timeout to save a mark, or by the last worker's sender going away.
        let mut result = Ok(());
        while wait.recv_timeout(every) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            if result.is_ok() {
                // Chunks are handed out in order: every chunk below both the next one to
                // hand out and the lowest one in work is done.
                let ahead = next.load(Ordering::SeqCst);
                let low = busy
                    .iter()
                    .map(|b| b.load(Ordering::SeqCst))
                    .min()
                    .unwrap_or(u64::MAX);
                result = mark(ahead.min(low).min(len));
            }
        }
        result
    })
}

/// Rewrites slice `material` of `board` under `root`, built under the paper's index, under
/// the symmetric one: each entry takes the value of the position it stands for, read from the
/// old file, and the new file replaces the old under its name. Returns the new file's bytes,
/// or None when the slice is not built or is symmetric already.
pub fn convert_slice(
    root: &Path,
    board: Board,
    material: Material,
    threads: usize,
) -> Result<Option<(u64, u64)>, BuildError> {
    let Some(old) = crate::file::SliceFile::open(root, board, material, Kind::Wdl)? else {
        return Ok(None);
    };
    if old.slice.scheme() == crate::scheme::Scheme::Symmetric {
        return Ok(None);
    }
    let slice = SymSlice::new(board, material).map_err(|e| BuildError::Invalid(e.to_string()))?;
    let values = crate::wdl::SharedCodes::new(slice.len());
    let payload = old.payload();
    crate::parallel::for_chunks(
        slice.len(),
        CHUNK,
        threads,
        |_| {},
        |range| {
            for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                let code = crate::wdl::code_at(payload, old.slice.rank(us, them));
                if code != DRAW {
                    values.set(i, code);
                }
            }
        },
    );
    let before = old.payload().len() as u64;
    drop(old);
    let bytes = values.to_bytes();
    crate::writer::write_slice(root, &Index::Symmetric(slice), Kind::Wdl, &bytes)?;
    Ok(Some((before, bytes.len() as u64)))
}
