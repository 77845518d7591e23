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

mod first_pass;
mod order;
mod rounds;
mod state;
mod values;

use first_pass::Save;
pub use first_pass::first_pass_sample;
pub use order::PassOrder;
use state::{State, building_path, load_state, save_state};
use values::{Values, fill_copies, finish_file, settle_draws};

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::build::{BuildError, BuildOptions, SliceReport, bytes_bar};
use crate::file::{FileError, HEADER_LEN, Kind, build_state_path, slice_path};
use crate::index::Material;
use crate::plan::pair_of;
use crate::probe::Database;
use crate::scheme::Index;
use crate::symmetric::SymSlice;
use crate::wdl::DRAW;
use fanorona_rules::geometry::Board;
use fanorona_rules::machine::own_cpu_seconds;

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
    let (mut state, resumed) = resume_state(root, board, &slices, &state_file, &label, log)?;
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
            .map(|s| Values::open(building_path(root, board, s.material), s.len(), !resumed))
            .collect::<Result<Vec<_>, _>>()?;
        let pair = Pair {
            board,
            slices: slices.clone(),
            values,
            threads: options.threads,
            options,
        };
        pair.solve(db, &mut state, &mut save, &label, &names, log)?;
    }
    let mut reports = Vec::new();
    for slice in &slices {
        finish_slice(root, slice, options)?;
        spent(&mut state);
        let m = slice.material;
        // The process's peak so far: the mapped values count, as they stay resident.
        let peak = fanorona_rules::machine::own_status("VmHWM").map_or(String::new(), |b| {
            format!(", peak resident {:.2} GiB", b as f64 / (1u64 << 30) as f64)
        });
        log(&format!(
            "{board} {m}: {} entries, {} rounds, {:.2} s (processor {:.1} s){peak} -> {}",
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

/// Where the pair's build stands: as the state file beside it says, if its working files
/// are there whole (a build killed while sealing them is taken back to working lengths);
/// else from the start. Returns the state and whether the build resumes.
fn resume_state(
    root: &Path,
    board: Board,
    slices: &[SymSlice],
    state_file: &Path,
    label: &str,
    log: &mut dyn FnMut(&str),
) -> Result<(State, bool), BuildError> {
    let fresh = State {
        first_pass: vec![0; slices.len()],
        ..State::default()
    };
    let state = load_state(state_file)
        .filter(|s| s.first_pass.len() == slices.len())
        .unwrap_or_else(|| fresh.clone());
    if state == fresh {
        return Ok((state, false));
    }
    // A build killed between sealing a working file (header written, cut to the final
    // length) and renaming it left the file short of its working length; finishing seals it
    // again, so it only needs that length back.
    if state.finishing {
        for s in slices {
            Values::unseal(&building_path(root, board, s.material), s.len())?;
        }
    }
    // A resumed build needs its working files as it left them; without them, it starts over.
    let whole = |s: &SymSlice| {
        fs::metadata(building_path(root, board, s.material))
            .is_ok_and(|f| f.len() == Values::file_len(s.len()))
            || slice_path(root, board, s.material, Kind::Wdl).is_file() && state.finishing
    };
    if !slices.iter().all(whole) {
        log(&format!(
            "{label}: the working files are missing or cut short: starting the pair over"
        ));
        return Ok((fresh, false));
    }
    let stands = if state.finishing {
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
    };
    log(&format!("{label}: resuming ({stands})"));
    Ok((state, true))
}

impl Pair<'_> {
    /// The first pass over each slice not through it, then the rounds to the fixpoint; the
    /// state saved as finishing.
    fn solve(
        &self,
        db: &Database,
        state: &mut State,
        save: &mut Save<'_>,
        label: &str,
        names: &[String],
        log: &mut dyn FnMut(&str),
    ) -> Result<(), BuildError> {
        for (x, name) in names.iter().enumerate() {
            if state.first_pass[x] >= self.slices[x].len() {
                continue;
            }
            self.first_pass(db, x, state, save, label, name, log)?;
        }
        let (rounds_start, rounds_cpu) = (Instant::now(), own_cpu_seconds());
        let (rounds, forwards) = self.rounds(state, save, label, log)?;
        log(&format!(
            "{label}: {rounds} rounds ({forwards} forward, {} backward) {:.2} s (processor {:.1} s)",
            rounds - forwards,
            rounds_start.elapsed().as_secs_f64(),
            own_cpu_seconds() - rounds_cpu
        ));
        state.finishing = true;
        save(state, self)?;
        Ok(())
    }
}

/// The copies take their canonical entry's value, the settled draws become draws, and the
/// file gets its header and final name: each step can be run again after a kill, and a
/// slice already under its final name is done.
fn finish_slice(root: &Path, slice: &SymSlice, options: &BuildOptions) -> Result<(), BuildError> {
    let (board, m) = (slice.board, slice.material);
    if crate::file::SliceFile::open(root, board, m, Kind::Wdl)?.is_none() {
        let v = Values::open(building_path(root, board, m), slice.len(), false)?;
        fill_copies(slice, &v, options.threads);
        settle_draws(&v, options.threads);
        v.flush()?;
        let bar = bytes_bar(
            options,
            HEADER_LEN as u64 + Kind::Wdl.payload_len(slice.len()),
            &format!("{board} {m} sha256"),
        );
        finish_file(root, &Index::Symmetric(*slice), v, &|n| bar.inc(n))?;
        bar.finish_and_clear();
    } else {
        crate::build::record_if_missing(root, board, m, Kind::Wdl)?;
    }
    Ok(())
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
