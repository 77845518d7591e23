//! The retrograde builder.
//!
//! Slices are built in order of piece count. A capture leads to a slice with fewer pieces,
//! already built, so a position with a capture (capture is compulsory) is decided in the first
//! pass from those tables. Paika moves keep the material and swap the side to move: slices
//! a-b and b-a are solved together, by unmoves to a fixpoint:
//! - a position decided in round k (WIN or LOSS) is the frontier of round k+1;
//! - for each frontier position, every un-paika (the side that just moved steps a piece back
//!   to an empty adjacent point) gives a predecessor in the paired slice, valid only if it had
//!   no capture (else its paika move was not legal);
//! - a predecessor of a LOSS is a WIN; a predecessor of a WIN is a LOSS once every one of its
//!   moves is checked to lead to a WIN (a forward check instead of move counters, which keeps
//!   the memory at 5 bits a position).
//!
//! What is undecided at the fixpoint is a draw. Both cores work on each pass: positions are
//! split into chunks taken from a shared counter, and values only ever go from undecided to
//! final, so they are set by atomic OR.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use thiserror::Error;

pub mod symmetric;

use crate::capture_values::{CaptureValues, Scratch};
use crate::file::{FileError, Kind, SliceFile, canonical_board, slice_path};
use crate::index::{Material, Slice};
use crate::parallel::{self, for_chunks};
use crate::plan::{capture_targets, memory_available, memory_needed, pair_of};
use crate::probe::Database;
use crate::scheme::{Index, Scheme};
use crate::wdl::{DRAW, LOSS, SharedBits, SharedBytes, SharedCodes, WIN};
use crate::writer::write_slice_reporting;
use fanorona_rules::geometry::{Board, NONE, points};
use fanorona_rules::position::{Color, Position};

#[derive(Debug, Error)]
pub enum BuildError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error(
        "slice {material} of {board} needs {slice} first, which is missing: build it with `fanorona db build --board {board} --pieces {pieces} --db {}`",
        root.display()
    )]
    MissingSlice {
        board: Board,
        root: std::path::PathBuf,
        material: Material,
        slice: Material,
        pieces: usize,
    },
    #[error(
        "building {pieces} pieces on {board} needs about {need_gib:.1} GiB of memory for slices {material} and its pair; this machine has {have_gib:.1} GiB available"
    )]
    Memory {
        board: Board,
        pieces: usize,
        material: Material,
        need_gib: f64,
        have_gib: f64,
    },
    #[error(
        "building {pieces} pieces on {board} needs about {need_gb:.1} GB of disk under {}; {have_gb:.1} GB are free there",
        dir.display()
    )]
    Disk {
        board: Board,
        pieces: usize,
        dir: std::path::PathBuf,
        need_gb: f64,
        have_gb: f64,
    },
    #[error("{0}")]
    Invalid(String),
}

/// What `build` reports back, per slice.
#[derive(Debug, Clone)]
pub struct SliceReport {
    pub material: Material,
    pub positions: u64,
    pub seconds: f64,
    pub rounds: u32,
    /// False when the file already existed and was kept.
    pub built: bool,
}

/// How to build.
pub struct BuildOptions {
    pub threads: usize,
    /// Show progress bars (when stderr is a terminal) and log phase timings otherwise.
    pub progress: bool,
    /// Also keep each position's distance (plies to a capture or the end) in a second file.
    pub distances: bool,
    /// A log line this often during a pair's first pass and after a round (for a build that
    /// logs to a file: a large pair's first pass takes tens of minutes); None: phases only.
    pub report_every: Option<Duration>,
    /// The index of the slices built: the paper's, or the symmetric one (a quarter of the
    /// size; values only, no distances).
    pub index: Scheme,
    /// How often a symmetric build saves its first pass's progress (a kill loses at most
    /// this much of it, or the round under way); None: every minute, or as `report_every`.
    pub checkpoint_every: Option<Duration>,
}

/// Builds every slice of `board` with 2 to `pieces` pieces under `root` that is not built yet.
/// `log` receives one line per phase.
pub fn build(
    root: &Path,
    board: Board,
    pieces: usize,
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    build_where(root, board, pieces, &|_| true, options, log)
}

/// Builds the pair of `material` (it and its swap) and, first, every smaller pair it reads
/// through its captures, down to 2 pieces; the other pairs are left alone. A pair can so be
/// built (and timed) on its own, on a machine that holds no other.
pub fn build_pair_and_needs(
    root: &Path,
    board: Board,
    material: Material,
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    let board = canonical_board(board);
    material
        .fits(board)
        .map_err(|e| BuildError::Invalid(e.to_string()))?;
    let needed = pairs_needed(material);
    build_where(
        root,
        board,
        material.pieces(),
        &|m| needed.contains(&m),
        options,
        log,
    )
}

/// The pairs (each named by its material with a >= b) a build of `material`'s pair reads: its
/// own, those its captures lead to, theirs, and so on down.
pub fn pairs_needed(material: Material) -> std::collections::BTreeSet<Material> {
    let mut needed = std::collections::BTreeSet::new();
    let mut todo = vec![material];
    while let Some(m) = todo.pop() {
        let pair = if m.a >= m.b { m } else { m.swapped() };
        if needed.insert(pair) {
            todo.extend(capture_targets(pair).chain(capture_targets(pair.swapped())));
        }
    }
    needed
}

/// `build`, over the pairs (named by their material with a >= b) that `wanted` keeps.
fn build_where(
    root: &Path,
    board: Board,
    pieces: usize,
    wanted: &dyn Fn(Material) -> bool,
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    let board = canonical_board(board);
    // The pairs of `n` pieces to build, each named by its material with a >= b.
    let pairs = |n: usize| Material::with_pieces(n).filter(|m| m.a >= m.b && wanted(*m));
    if !(2..=board.size()).contains(&pieces) {
        return Err(BuildError::Invalid(format!(
            "--pieces must be from 2 to {} on {board}",
            board.size()
        )));
    }
    if options.distances && options.index == Scheme::Symmetric {
        return Err(BuildError::Invalid(
            "distances are kept only under the paper's index: drop --distances or use --index paper"
                .to_string(),
        ));
    }
    // Refuse before any work if a pair still to build cannot fit: in memory (the largest
    // pairs are those of the most pieces), and all of them together on the disk.
    if let Some(have) = memory_available() {
        // The pair that needs the most, of those still to build, is named.
        let mut largest = None;
        for material in pairs(pieces) {
            let need = memory_needed(board, material, options.distances, options.index);
            if largest.is_none_or(|(n, _)| need > n)
                && !pair_built(root, board, material, options.distances)?
            {
                largest = Some((need, material));
            }
        }
        if let Some((need, material)) = largest
            && need > have
        {
            return Err(BuildError::Memory {
                board,
                pieces,
                material,
                need_gib: need as f64 / (1u64 << 30) as f64,
                have_gib: have as f64 / (1u64 << 30) as f64,
            });
        }
    }
    let mut disk = 0u64;
    for material in (2..=pieces).flat_map(pairs) {
        if !pair_built(root, board, material, options.distances)? {
            disk = disk.saturating_add(disk_needed(root, board, material, options));
        }
    }
    let dir = existing_ancestor(root);
    if let Some(have) = fanorona_rules::machine::disk_available(&dir)
        && disk > have
    {
        return Err(BuildError::Disk {
            board,
            pieces,
            dir,
            need_gb: disk as f64 / 1e9,
            have_gb: have as f64 / 1e9,
        });
    }
    // What a build killed while it wrote the manifest left goes.
    crate::manifest::tidy(&crate::file::board_dir(root, board));
    let mut reports = Vec::new();
    for n in 2..=pieces {
        // Smaller slices first; within a piece count any order works, since paika pairs
        // only depend on fewer pieces.
        let db = Database::new(root, board);
        for material in pairs(n) {
            // A symmetric pair's first pass reads its capture targets from copies in memory,
            // which its memory plan counts; they go when the pair is done.
            let resident;
            let db = if options.index == Scheme::Symmetric {
                resident = Database::resident(root, board);
                &resident
            } else {
                &db
            };
            reports.extend(build_pair(db, board, material, options, log)?);
        }
    }
    Ok(reports)
}

/// Bytes of disk the files of a pair take.
fn disk_needed(root: &Path, board: Board, material: Material, options: &BuildOptions) -> u64 {
    if options.index == Scheme::Symmetric {
        return symmetric::disk_needed(root, board, material);
    }
    let len = |m: Material| Slice::new(board, m).map(|s| s.len()).unwrap_or(u64::MAX);
    let per = |m: Material| {
        let n = len(m);
        (n / 4).saturating_add(if options.distances { n } else { 0 })
    };
    if material.a == material.b {
        per(material)
    } else {
        per(material).saturating_add(per(material.swapped()))
    }
}

/// The nearest directory at or above `path` that exists (where a build's files will go).
fn existing_ancestor(path: &Path) -> std::path::PathBuf {
    let mut p = path.to_path_buf();
    while !p.exists() {
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent.to_path_buf(),
            _ => return std::path::PathBuf::from("."),
        }
    }
    p
}

/// Whether the pair of `material` is built: its files exist and open cleanly.
fn pair_built(
    root: &Path,
    board: Board,
    material: Material,
    distances: bool,
) -> Result<bool, BuildError> {
    let mut done = true;
    for m in [material, material.swapped()] {
        done &= SliceFile::open(root, board, m, Kind::Wdl)?.is_some();
        if distances {
            done &= SliceFile::open(root, board, m, Kind::Distance)?.is_some();
        }
    }
    Ok(done)
}

/// Records in the manifest the SHA-256 of a finished slice file it has no line for: a build
/// killed between a file's rename and its manifest line leaves it so. Tables without a
/// manifest (built before there were any) keep none, and an unreadable one is left for
/// `db checksums` to mend.
pub(crate) fn record_if_missing(
    root: &Path,
    board: Board,
    material: Material,
    kind: Kind,
) -> Result<(), FileError> {
    let dir = crate::file::board_dir(root, board);
    let name = crate::manifest::file_name(material, kind);
    let Ok(Some(entries)) = crate::manifest::read(&dir) else {
        return Ok(());
    };
    if entries.contains_key(&name) {
        return Ok(());
    }
    let Some(file) = SliceFile::open(root, board, material, kind)? else {
        return Ok(());
    };
    let hash = crate::manifest::sha256(file.bytes(), &|_| {});
    crate::manifest::record(&dir, &name, &hash)
}

/// Builds slice `material` and its pair (or finds them built) in the index `options` asks
/// for; the smaller slices a capture leads to must be there.
fn build_pair(
    db: &Database,
    board: Board,
    material: Material,
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    let root = db.root();
    let slices: Vec<Slice> = pair_of(material)
        .into_iter()
        .map(|m| Slice::new(board, m).map_err(|e| BuildError::Invalid(e.to_string())))
        .collect::<Result<_, _>>()?;
    // A finished pair is kept, and what a build killed after its last rename left beside it
    // goes.
    if pair_built(root, board, material, options.distances)? {
        for s in &slices {
            record_if_missing(root, board, s.material, Kind::Wdl)?;
            if options.distances {
                record_if_missing(root, board, s.material, Kind::Distance)?;
            }
        }
        symmetric::tidy_finished(root, board, material);
        return Ok(slices
            .iter()
            .map(|s| SliceReport {
                material: s.material,
                positions: s.len(),
                seconds: 0.0,
                rounds: 0,
                built: false,
            })
            .collect());
    }
    // Every table a capture leads to must be there and whole.
    for s in &slices {
        for target in capture_targets(s.material) {
            if db.slice(target)?.is_none() {
                return Err(BuildError::MissingSlice {
                    board,
                    root: root.to_path_buf(),
                    material: s.material,
                    slice: target,
                    pieces: target.pieces(),
                });
            }
        }
    }
    if options.index == Scheme::Symmetric {
        return symmetric::build_pair(db, board, material, options, log);
    }
    build_paper_pair(db, &slices, options, log)
}

/// The pair `slices` under the paper's index, built in memory: a first pass, rounds to the
/// fixpoint, then the files.
fn build_paper_pair(
    db: &Database,
    slices: &[Slice],
    options: &BuildOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SliceReport>, BuildError> {
    let (root, board) = (db.root(), slices[0].board);
    let start = Instant::now();
    let names: Vec<String> = slices.iter().map(|s| s.material.to_string()).collect();
    let values: Vec<SharedCodes> = slices.iter().map(|s| SharedCodes::new(s.len())).collect();
    let paika: Vec<SharedBits> = slices.iter().map(|s| SharedBits::new(s.len())).collect();
    let frontier: Vec<SharedBits> = slices.iter().map(|s| SharedBits::new(s.len())).collect();
    let ages: Option<Vec<SharedBytes>> = options
        .distances
        .then(|| slices.iter().map(|s| SharedBytes::new(s.len())).collect());
    let pair = Pair {
        board,
        slices,
        values: &values,
        paika: &paika,
        ages: ages.as_deref(),
        threads: options.threads,
    };
    pair.first_pass(db, &frontier, options, log)?;
    log(&format!(
        "{board} {}: first pass {:.2} s",
        names.join(" + "),
        start.elapsed().as_secs_f64()
    ));
    let rounds = pair.rounds(frontier, &names, options, log);

    let mut reports = Vec::new();
    for (x, s) in slices.iter().enumerate() {
        let label = format!("{board} {} writing", names[x]);
        if let Some(ages) = &ages {
            let bytes = ages[x].to_bytes();
            write_file(
                root,
                &Index::Paper(*s),
                Kind::Distance,
                &bytes,
                options,
                &label,
            )?;
        }
        // The values last: a pair counts as built once its value files exist.
        let bytes = values[x].to_bytes();
        let path = write_file(root, &Index::Paper(*s), Kind::Wdl, &bytes, options, &label)?;
        let seconds = start.elapsed().as_secs_f64();
        log(&format!(
            "{board} {}: {} positions, {rounds} rounds, {seconds:.2} s -> {}",
            names[x],
            s.len(),
            path.display()
        ));
        reports.push(SliceReport {
            material: s.material,
            positions: s.len(),
            seconds,
            rounds,
            built: true,
        });
    }
    debug_assert!(
        slices
            .iter()
            .all(|s| slice_path(root, board, s.material, Kind::Wdl).exists())
    );
    Ok(reports)
}

impl Pair<'_> {
    /// Pass 1: captures (from smaller tables), positions without a move, and the paika mark;
    /// what it decides goes to `frontier`.
    fn first_pass(
        &self,
        db: &Database,
        frontier: &[SharedBits],
        options: &BuildOptions,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), BuildError> {
        let board = self.board;
        let (values, paika, ages) = (self.values, self.paika, self.ages);
        let g = board.geometry();
        for (x, s) in self.slices.iter().enumerate() {
            let label = format!("{board} {} first pass", s.material);
            let bar = progress_bar(options, s.len(), &label);
            let report = options.report_every.map(|every| (every, label.as_str()));
            let captures = capture_values(db, s.material)?;
            parallel_chunks_reported(s.len(), options.threads, &bar, report, log, |range| {
                let mut reads = Scratch::new();
                for (i, (us, them)) in range.clone().zip(s.positions(range.start, range.end)) {
                    let pos = Position::from_parts(board, us, them, Color::White);
                    let code = if let Some(code) = captures.value(&pos, &mut reads) {
                        code
                    } else {
                        paika[x].set(i);
                        let empty = g.all & !(us | them);
                        if (0..8).all(|d| g.step(us, d) & empty == 0) {
                            LOSS
                        } else {
                            DRAW
                        }
                    };
                    if code != DRAW {
                        values[x].set(i, code);
                        frontier[x].set(i);
                        if let Some(ages) = ages {
                            ages[x].set(i, 1);
                        }
                    }
                }
            });
            bar.finish_and_clear();
        }
        Ok(())
    }

    /// Rounds until nothing changes. A round either walks back from the positions decided in
    /// the last one (cheap when they are few) or, when they outnumber the undecided paika
    /// positions (typically after the first pass), looks forward from each undecided one.
    /// Returns the rounds run.
    fn rounds(
        &self,
        mut frontier: Vec<SharedBits>,
        names: &[String],
        options: &BuildOptions,
        log: &mut dyn FnMut(&str),
    ) -> u32 {
        let (board, slices) = (self.board, self.slices);
        let mut undecided: u64 = (0..slices.len())
            .map(|x| self.count_undecided_paika(x))
            .sum();
        let mut decided_last: u64 = frontier.iter().map(SharedBits::count).sum();
        let (mut rounds, mut forwards) = (0, 0);
        let rounds_start = Instant::now();
        let mut last_report = rounds_start;
        let status = status_line(options);
        while decided_last > 0 {
            rounds += 1;
            let round_start = Instant::now();
            let next: Vec<SharedBits> = slices.iter().map(|s| SharedBits::new(s.len())).collect();
            let forward = decided_last > undecided;
            if forward {
                forwards += 1;
                self.forward_round(rounds, &next);
            } else {
                self.backward_round(rounds, &frontier, &next);
            }
            decided_last = next.iter().map(SharedBits::count).sum();
            undecided -= decided_last;
            frontier = next;
            let line = || {
                format!(
                    "{board} {}: round {rounds} ({}): {decided_last} decided in {:.2} s",
                    names.join(" + "),
                    if forward { "forward" } else { "backward" },
                    round_start.elapsed().as_secs_f64()
                )
            };
            // To a log, at most a line per `report_every` (the small pairs run dozens of
            // rounds a second); on a terminal, over the last.
            if let Some(every) = options.report_every
                && last_report.elapsed() >= every
            {
                last_report = Instant::now();
                log(&line());
            }
            if options.progress {
                status.set_message(line());
            }
        }
        status.finish_and_clear();
        log(&format!(
            "{board} {}: {rounds} rounds ({forwards} forward, {} backward) {:.2} s; {undecided} paika positions drawn",
            names.join(" + "),
            rounds - forwards,
            rounds_start.elapsed().as_secs_f64()
        ));
        rounds
    }
}

/// A slice pair being solved (one slice when both sides have as many pieces).
struct Pair<'a> {
    board: Board,
    slices: &'a [Slice],
    values: &'a [SharedCodes],
    paika: &'a [SharedBits],
    /// With distances: 1 + the round that decided each position (0: undecided).
    ages: Option<&'a [SharedBytes]>,
    threads: usize,
}

impl Pair<'_> {
    /// The slice whose positions follow a move from slice `x`.
    fn other(&self, x: usize) -> usize {
        if self.slices.len() == 2 { 1 - x } else { 0 }
    }

    /// Calls `f` with every undecided paika position of slice `x`, on all threads.
    fn for_undecided_paika<F>(&self, x: usize, f: F)
    where
        F: Fn(u64, u64, u64) + Sync,
    {
        self.for_marked(&self.paika[x], x, |i| self.values[x].get(i) == DRAW, f);
    }

    /// Calls `f(i, us, them)` for every index `i` of slice `x` set in `marks` that `keep`
    /// accepts, on all threads, reading the positions in index order.
    fn for_marked<K, F>(&self, marks: &SharedBits, x: usize, keep: K, f: F)
    where
        K: Fn(u64) -> bool + Sync,
        F: Fn(u64, u64, u64) + Sync,
    {
        let words = marks.words();
        for_chunks(
            words.len() as u64,
            parallel::WORDS,
            self.threads,
            |_| {},
            |range| {
                let mut cursor = self.slices[x].cursor();
                for w in range {
                    let mut bits = words[w as usize].load(Ordering::Relaxed);
                    while bits != 0 {
                        let i = w * 64 + bits.trailing_zeros() as u64;
                        bits &= bits - 1;
                        if keep(i) {
                            let (us, them) = cursor.seek(i);
                            f(i, us, them);
                        }
                    }
                }
            },
        );
    }

    /// The value of entry `i` of slice `x` as seen in round `round`. With distances, what was
    /// decided in this same round does not count yet, so that each round is exactly one ply
    /// further from the end and the distances are exact.
    #[inline(always)]
    fn seen(&self, x: usize, i: u64, round: u32) -> u8 {
        let v = self.values[x].get(i);
        match self.ages {
            // The age is written just after the value: 0 means "decided just now" too.
            Some(ages) if v != DRAW && (ages[x].get(i) == 0 || ages[x].get(i) as u32 > round) => {
                DRAW
            }
            _ => v,
        }
    }

    /// Decides entry `i` of slice `x` in round `round`; true if this call did.
    #[inline(always)]
    fn decide(&self, x: usize, i: u64, code: u8, round: u32) -> bool {
        let first = self.values[x].set(i, code);
        if first && let Some(ages) = self.ages {
            ages[x].set(i, (round + 1).min(255) as u8);
        }
        first
    }

    fn count_undecided_paika(&self, x: usize) -> u64 {
        let n = AtomicU64::new(0);
        self.for_undecided_paika(x, |_, _, _| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        n.into_inner()
    }

    /// Decides each undecided paika position from its successors: a win if one is a loss, a
    /// loss if all are wins.
    // `x` indexes several parallel per-slice arrays.
    #[allow(clippy::needless_range_loop)]
    fn forward_round(&self, round: u32, next: &[SharedBits]) {
        let g = self.board.geometry();
        for x in 0..self.slices.len() {
            let (after, y) = (&self.slices[self.other(x)], self.other(x));
            self.for_undecided_paika(x, |i, us, them| {
                let empty = g.all & !(us | them);
                let mut all_win = true;
                for d in 0..8 {
                    for to in points(g.step(us, d) & empty) {
                        let from = (to as i32 - g.shift[d]) as u8;
                        match self.seen(y, after.rank(them, us ^ (1 << from) ^ (1 << to)), round) {
                            LOSS => {
                                if self.decide(x, i, WIN, round) {
                                    next[x].set(i);
                                }
                                return;
                            }
                            WIN => {}
                            _ => all_win = false,
                        }
                    }
                }
                if all_win && self.decide(x, i, LOSS, round) {
                    next[x].set(i);
                }
            });
        }
    }

    /// Whether every paika move of the side holding `us` against `them` (which has no
    /// capture) leads to a position of slice `x` (`slice`) seen as a WIN in round `round`.
    fn all_paika_reach_wins(
        &self,
        us: u64,
        them: u64,
        x: usize,
        slice: &Slice,
        round: u32,
    ) -> bool {
        let g = self.board.geometry();
        let empty = g.all & !(us | them);
        (0..8).all(|d| {
            points(g.step(us, d) & empty).all(|to| {
                let from = (to as i32 - g.shift[d]) as u8;
                self.seen(x, slice.rank(them, us ^ (1 << from) ^ (1 << to)), round) == WIN
            })
        })
    }

    /// Walks back from the positions decided in the last round: their un-paika predecessors
    /// (valid only if they had no capture) win against a loss, and may lose if every move
    /// reaches a win, which is checked once per predecessor after the walk.
    #[allow(clippy::needless_range_loop)]
    fn backward_round(&self, round: u32, frontier: &[SharedBits], next: &[SharedBits]) {
        let g = self.board.geometry();
        let candidates: Vec<SharedBits> = self
            .slices
            .iter()
            .map(|s| SharedBits::new(s.len()))
            .collect();
        for x in 0..self.slices.len() {
            let (to, y) = (&self.slices[self.other(x)], self.other(x));
            self.for_marked(
                &frontier[x],
                x,
                |_| true,
                |i, us, them| {
                    let lost = self.values[x].get(i) == LOSS;
                    let empty = g.all & !(us | them);
                    // The side that just moved is `them`: step each of its pieces back.
                    for q in points(them) {
                        for d in 0..8 {
                            let p = g.neighbour(q, d);
                            if p == NONE || empty & (1 << p) == 0 {
                                continue;
                            }
                            let j = to.rank(them ^ (1 << q) ^ (1 << p), us);
                            if !self.paika[y].get(j) || self.values[y].get(j) != DRAW {
                                continue;
                            }
                            if lost {
                                if self.decide(y, j, WIN, round) {
                                    next[y].set(j);
                                }
                            } else {
                                candidates[y].set(j);
                            }
                        }
                    }
                },
            );
        }
        for y in 0..self.slices.len() {
            let (x, after) = (self.other(y), &self.slices[self.other(y)]);
            let undecided = |j| self.values[y].get(j) == DRAW;
            self.for_marked(&candidates[y], y, undecided, |j, us, them| {
                if self.all_paika_reach_wins(us, them, x, after, round)
                    && self.decide(y, j, LOSS, round)
                {
                    next[y].set(j);
                }
            });
        }
    }
}

/// The values of captures from `material`, whose capture targets were checked before the
/// build.
pub(crate) fn capture_values(
    db: &Database,
    material: Material,
) -> Result<CaptureValues<'_>, BuildError> {
    CaptureValues::new(db, material).map_err(|slice| {
        BuildError::Invalid(format!(
            "slice {slice}, which the captures of {material} lead to, cannot be read"
        ))
    })
}

/// Runs `work` over 0..len in chunks on `threads` threads, advancing `bar`.
fn parallel_chunks<F>(len: u64, threads: usize, bar: &ProgressBar, work: F)
where
    F: Fn(std::ops::Range<u64>) + Sync,
{
    for_chunks(len, parallel::POSITIONS, threads, |n| bar.inc(n), work);
}

/// `parallel_chunks`, and with `report` (how often, a label) a line to `log` that often
/// from this thread while the workers run: how far they are, and since when.
fn parallel_chunks_reported<F>(
    len: u64,
    threads: usize,
    bar: &ProgressBar,
    report: Option<(Duration, &str)>,
    log: &mut dyn FnMut(&str),
    work: F,
) where
    F: Fn(std::ops::Range<u64>) + Sync,
{
    let Some((every, label)) = report else {
        return parallel_chunks(len, threads, bar, work);
    };
    let done = AtomicU64::new(0);
    let start = Instant::now();
    let (finished, wait) = channel::<()>();
    std::thread::scope(|s| {
        let (done, work) = (&done, &work);
        s.spawn(move || {
            let tick = |n| {
                bar.inc(n);
                done.fetch_add(n, Ordering::Relaxed);
            };
            for_chunks(len, parallel::POSITIONS, threads, tick, work);
            drop(finished);
        });
        while wait.recv_timeout(every) == Err(RecvTimeoutError::Timeout) {
            let d = done.load(Ordering::Relaxed);
            log(&format!(
                "{label}: {:.1}% ({d} of {len} positions) in {:.0} s",
                100.0 * d as f64 / len.max(1) as f64,
                start.elapsed().as_secs_f64()
            ));
        }
    });
}

/// Files at least this large show a bar while they are written and hashed.
pub(crate) const BAR_BYTES: u64 = 64 << 20;

/// Writes a slice file (and records its SHA-256 in the manifest), with a bar for a large one.
fn write_file(
    root: &Path,
    slice: &Index,
    kind: Kind,
    payload: &[u8],
    options: &BuildOptions,
    label: &str,
) -> Result<std::path::PathBuf, FileError> {
    let bar = bytes_bar(options, payload.len() as u64, label);
    let path = write_slice_reporting(root, slice, kind, payload, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    Ok(path)
}

/// A progress bar of bytes on a terminal's stderr, for a file of `len` bytes of at least
/// `BAR_BYTES`; hidden otherwise.
pub(crate) fn bytes_bar(options: &BuildOptions, len: u64, label: &str) -> ProgressBar {
    if !options.progress || len < BAR_BYTES {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>22} [{bar:30}] {percent:>3}% {binary_bytes_per_sec:>12} eta {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

/// A progress bar with rate and ETA on a terminal's stderr; hidden otherwise.
/// A line on stderr that each round rewrites (hidden unless the build shows progress).
pub(crate) fn status_line(options: &BuildOptions) -> ProgressBar {
    if !options.progress {
        return ProgressBar::hidden();
    }
    let line = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    line.set_style(ProgressStyle::with_template("{msg}").expect("the template is valid"));
    line
}

pub(crate) fn progress_bar(options: &BuildOptions, len: u64, label: &str) -> ProgressBar {
    if !options.progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:>22} [{bar:30}] {percent:>3}% {rate:>14} eta {eta}")
            .expect("the template is valid")
            // Whole positions a second: indicatif's own {per_sec} prints every decimal.
            .with_key(
                "rate",
                |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}/s", indicatif::HumanCount(s.per_sec() as u64));
                },
            )
            .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[&str]) -> std::collections::BTreeSet<Material> {
        list.iter().map(|m| m.parse().unwrap()).collect()
    }

    #[test]
    fn a_pair_needs_what_its_captures_lead_to_and_no_more() {
        // 3-2 captures to 1-3; 2-3 to 1-2 and 2-2; and so on down. 4-1 is never reached.
        assert_eq!(
            pairs_needed("2-3".parse().unwrap()),
            pairs(&["3-2", "3-1", "2-2", "2-1", "1-1"])
        );
        // The 5x9 6-3 pair reads 6-2 and 5-3 of the 8-piece layer, not 7-1 nor 4-4.
        let needed = pairs_needed("6-3".parse().unwrap());
        let eight: Vec<String> = needed
            .iter()
            .filter(|m| m.pieces() == 8)
            .map(|m| m.to_string())
            .collect();
        assert_eq!(eight, ["5-3", "6-2"]);
        // Every 7-piece pair but 7-0, which is no slice.
        assert_eq!(needed.iter().filter(|m| m.pieces() == 7).count(), 3);
        // 5-4 reads 5-3 and 4-4, not 6-2.
        let needed = pairs_needed("4-5".parse().unwrap());
        assert!(needed.contains(&"4-4".parse().unwrap()));
        assert!(needed.contains(&"5-3".parse().unwrap()));
        assert!(!needed.contains(&"6-2".parse().unwrap()));
        assert!(!needed.contains(&"6-1".parse().unwrap()));
    }
}
