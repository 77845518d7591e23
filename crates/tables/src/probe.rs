//! Probing: the value of a position from the memory-mapped slice files, opened lazily.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::file::{FileError, Kind, SliceFile, canonical_board};
use crate::index::{Material, Slice};
use crate::warm::Warming;
use crate::wdl::{Wdl, code_at};
use fanorona_rules::geometry::{Bitboard, Board};
use fanorona_rules::position::Position;

/// Why the tables cannot give a position's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error(
        "slice {material} of {board} is not built under {}: {}",
        root.display(), build_hint(*board, *material, root)
    )]
    NotBuilt {
        material: Material,
        board: Board,
        root: PathBuf,
    },
    #[error("{0}")]
    Damaged(String),
    #[error("a {board} position, but the tables are of {tables}")]
    Board { board: Board, tables: Board },
}

/// How to get a slice that is not built: build it, where this machine could (the build's own
/// check: its largest pair of that piece count in the memory available); otherwise (a 5x9
/// start needs all 44 pieces) search, which is what positions above the tables are for.
fn build_hint(board: Board, material: Material, root: &Path) -> String {
    let pieces = material.pieces();
    let need = Material::with_pieces(pieces)
        .map(|m| crate::plan::memory_needed(board, m, false, crate::scheme::Scheme::Symmetric))
        .max()
        .unwrap_or(0);
    match crate::plan::memory_available() {
        Some(have) if need > have => format!(
            "a build of {pieces} pieces on {board} would need about {:.0} GiB of memory, more than the {:.0} GiB this machine has available; positions above the tables are solved by search: `fanorona solve POSITION --db {}`",
            need as f64 / (1u64 << 30) as f64,
            have as f64 / (1u64 << 30) as f64,
            root.display()
        ),
        _ => {
            // The build makes every slice up to that count: say what that comes to when it
            // is large, and the other way.
            let board = canonical_board(board);
            let positions: u64 = (2..=pieces)
                .flat_map(Material::with_pieces)
                .filter_map(|m| Slice::new(board, m).ok())
                .map(|s| s.len())
                .fold(0, u64::saturating_add);
            let gib = positions as f64 / 4.0 / (1u64 << 30) as f64;
            if gib < 1.0 {
                format!(
                    "build it with `fanorona db build --board {board} --pieces {pieces} --db {}`",
                    root.display()
                )
            } else {
                format!(
                    "build it with `fanorona db build --board {board} --pieces {pieces} --db {0}` (every slice of 2 to {pieces} pieces: {positions} positions, about {gib:.0} GiB on disk), or solve it by search: `fanorona solve POSITION --db {0}`",
                    root.display()
                )
            }
        }
    }
}

/// Tables a search or command needs that are not whole: every slice up to the largest piece
/// count built must be there and intact, or the command refuses (a search would otherwise
/// take the missing positions for unknown ones and say nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TablesError {
    #[error(
        "no tables of {board} under {}: build them with `fanorona db build --board {board} --pieces {pieces} --db {}`",
        root.display(), root.display()
    )]
    None {
        board: Board,
        root: PathBuf,
        /// The piece count the hint suggests.
        pieces: usize,
    },
    #[error("the tables of {board} under {} are not whole {}", root.display(), incomplete(*board, root, *max_pieces, missing, damaged))]
    Incomplete {
        board: Board,
        root: PathBuf,
        max_pieces: usize,
        missing: Vec<Material>,
        /// A damaged slice and what is wrong with its file.
        damaged: Vec<(Material, String)>,
    },
}

impl TablesError {
    /// Whether the user can mend it by building (a missing slice or no tables at all), as
    /// opposed to a damaged file.
    pub fn is_missing(&self) -> bool {
        match self {
            TablesError::None { .. } => true,
            TablesError::Incomplete { damaged, .. } => damaged.is_empty(),
        }
    }
}

/// What is wrong with tables that are not whole, and what to do.
fn incomplete(
    board: Board,
    root: &Path,
    max_pieces: usize,
    missing: &[Material],
    damaged: &[(Material, String)],
) -> String {
    // A whole piece count missing below the largest present: the files above it stand alone
    // (a stray file, or a build under way elsewhere); they are named, not what they lack.
    let whole = |n: usize| Material::with_pieces(n).all(|m| missing.contains(&m));
    if let Some(gap) = (2..max_pieces).find(|&n| whole(n)) {
        let above: Vec<String> = (gap + 1..=max_pieces)
            .flat_map(Material::with_pieces)
            .filter(|m| !missing.contains(m))
            .map(|m| {
                crate::file::slice_path(root, board, m, Kind::Wdl)
                    .display()
                    .to_string()
            })
            .collect();
        return format!(
            "(no slice of {gap} pieces is built, yet {} {} above it): remove {}, or build every slice up to {max_pieces} pieces with `fanorona db build --board {board} --pieces {max_pieces} --db {}`",
            above.join(", "),
            if above.len() == 1 { "lies" } else { "lie" },
            if above.len() == 1 { "it" } else { "them" },
            root.display()
        );
    }
    // The top layer short of slices whose build is under way here: the layers below are
    // whole, and a search can use them meanwhile.
    let under_way: Vec<String> =
        if damaged.is_empty() && missing.iter().all(|m| m.pieces() == max_pieces) {
            missing
                .iter()
                .map(|&m| crate::file::build_state_path(root, board, m))
                .filter(|p| p.is_file())
                .map(|p| p.display().to_string())
                .collect()
        } else {
            Vec::new()
        };
    if !under_way.is_empty() {
        return format!(
            "({}): the {max_pieces}-piece layer is being built ({}); the tables up to {} pieces are whole: until the build ends, search over a directory of links to their files, then move a daemon session onto these with `fanorona session tune ID --db {}`",
            census_problems(missing, damaged),
            under_way.join(", "),
            max_pieces - 1,
            root.display()
        );
    }
    format!(
        "({}): {}",
        census_problems(missing, damaged),
        repair_hint(board, root, max_pieces, damaged)
    )
}

fn census_problems(missing: &[Material], damaged: &[(Material, String)]) -> String {
    let mut parts = Vec::new();
    // A piece count none of whose slices is there is named as a whole (a stray file far
    // above the built tables would otherwise list dozens of slices), runs of them as a range.
    let whole = |n: usize| Material::with_pieces(n).all(|m| missing.contains(&m));
    let mut names = Vec::new();
    let mut n = 2;
    while n <= 45 {
        if !missing.iter().any(|m| m.pieces() == n) {
            n += 1;
            continue;
        }
        if whole(n) {
            let mut last = n;
            while last < 45 && whole(last + 1) {
                last += 1;
            }
            names.push(if last == n {
                format!("every slice of {n} pieces")
            } else {
                format!("every slice of {n} to {last} pieces")
            });
            n = last + 1;
        } else {
            names.extend(
                missing
                    .iter()
                    .filter(|m| m.pieces() == n)
                    .map(|m| format!("slice {m}")),
            );
            n += 1;
        }
    }
    if !names.is_empty() {
        parts.push(format!("{} missing", names.join(", ")));
    }
    for (m, why) in damaged {
        parts.push(format!("slice {m} damaged: {why}"));
    }
    parts.join("; ")
}

fn repair_hint(board: Board, root: &Path, pieces: usize, damaged: &[(Material, String)]) -> String {
    let build = format!(
        "`fanorona db build --board {board} --pieces {pieces} --db {}`",
        root.display()
    );
    if damaged.is_empty() {
        format!("build the missing slices with {build}")
    } else {
        format!("delete the damaged files and rebuild them with {build}")
    }
}

/// What is built of one board's tables, every slice opened (header and checksum checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Census {
    /// The largest piece count of any slice present (0 if none is).
    pub max_pieces: usize,
    /// Every slice with 2 to `max_pieces` pieces, in order, and its state.
    pub slices: Vec<(Material, SliceState)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SliceState {
    Intact,
    Missing,
    Damaged(String),
}

/// Where a position's value is (`Database::entry`).
#[derive(Clone, Copy, Debug)]
pub enum Entry<'a> {
    /// Known without a table: a side has no pieces.
    Known(Wdl),
    /// The 2-bit code at `rank` of a slice's codes.
    At {
        payload: &'a [u8],
        rank: u64,
        material: Material,
    },
}

/// Most pieces a slice can have on any supported board.
const MAX_SIDE: usize = 45;

/// The tables of one board (and its transpose) under a database directory.
pub struct Database {
    root: PathBuf,
    board: Board,
    /// `slices[a * MAX_SIDE + b]`: the file of slice a-b, opened on first use.
    slices: Vec<OnceLock<Result<Option<SliceFile>, String>>>,
    /// The same for the distance files.
    distances: Vec<OnceLock<Result<Option<SliceFile>, String>>>,
    /// `max_pieces` as first asked by `max_pieces_once`.
    held: OnceLock<usize>,
    /// Slices of more pieces than this are taken as not built.
    cap: usize,
    /// Whether slices are copied into memory as they open (`resident`).
    resident: bool,
    /// The background read of these tables that `warm` started, stopped when they go.
    warming: OnceLock<Warming>,
}

impl Database {
    /// The tables of `board` under `root`. Nothing is read until a probe needs it.
    pub fn new(root: &Path, board: Board) -> Database {
        Database {
            root: root.to_path_buf(),
            board: canonical_board(board),
            slices: (0..MAX_SIDE * MAX_SIDE).map(|_| OnceLock::new()).collect(),
            distances: (0..MAX_SIDE * MAX_SIDE).map(|_| OnceLock::new()).collect(),
            held: OnceLock::new(),
            cap: MAX_SIDE,
            resident: false,
            warming: OnceLock::new(),
        }
    }

    /// Starts reading these tables into memory on a thread of their own (`warm::warm`: the
    /// small piece counts first, within what the machine has free), once, and returns at
    /// once; the reading stops when the database goes. For a search that will probe them
    /// for minutes or days.
    pub fn warm(&self) -> &Warming {
        self.warming
            .get_or_init(|| crate::warm::warm(&self.root, self.board, self.max_pieces_once()))
    }

    /// `new`, with each slice copied into memory as it opens, for a build that probes a few
    /// slices at random for hours; the copies go with the database.
    pub fn resident(root: &Path, board: Board) -> Database {
        Database {
            resident: true,
            ..Database::new(root, board)
        }
    }

    /// The tables of `board` under `root` up to `pieces` pieces, as if no larger slice were
    /// built: a search over fewer pieces, to check the larger tables against.
    pub fn capped(root: &Path, board: Board, pieces: usize) -> Database {
        Database {
            cap: pieces,
            ..Database::new(root, board)
        }
    }

    /// The tables of `board` under `root`, every slice up to the largest piece count built
    /// opened and checked first: what a search reads must be there and intact.
    pub fn open_whole(root: &Path, board: Board) -> Result<Database, TablesError> {
        let db = Database::new(root, board);
        db.census().whole(&db)?;
        Ok(db)
    }

    /// Every slice up to the largest piece count present, opened (so checked) now.
    pub fn census(&self) -> Census {
        let max_pieces = self.max_pieces();
        let slices = (2..=max_pieces)
            .flat_map(Material::with_pieces)
            .map(|m| {
                let state = match self.slice(m) {
                    Ok(Some(_)) => SliceState::Intact,
                    Ok(None) => SliceState::Missing,
                    Err(e) => SliceState::Damaged(e.to_string()),
                };
                (m, state)
            })
            .collect();
        Census { max_pieces, slices }
    }

    /// The board the tables are built for (of a board and its transpose, the one with fewer rows).
    pub fn board(&self) -> Board {
        self.board
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of a slice: `Ok(None)` if it is not built; an error if it is damaged.
    pub fn slice(&self, material: Material) -> Result<Option<&SliceFile>, FileError> {
        self.file(material, Kind::Wdl)
    }

    fn file(&self, material: Material, kind: Kind) -> Result<Option<&SliceFile>, FileError> {
        if material.pieces() > self.cap {
            return Ok(None);
        }
        let cells = match kind {
            Kind::Wdl => &self.slices,
            Kind::Distance => &self.distances,
        };
        let cell = &cells[material.a as usize * MAX_SIDE + material.b as usize];
        let opened = cell.get_or_init(|| {
            SliceFile::open_as(&self.root, self.board, material, kind, self.resident)
                .map_err(|e| e.to_string())
        });
        match opened {
            Ok(f) => Ok(f.as_ref()),
            // The first open's error, as it was reported then.
            Err(message) => Err(FileError::Cached(message.clone())),
        }
    }

    /// The value for the side to move holding `us` against `them` on the tables' board.
    /// `None` if the slice is not built or cannot be used.
    #[inline]
    pub fn probe_sides(&self, us: Bitboard, them: Bitboard) -> Option<Wdl> {
        self.value(us, them).ok()
    }

    /// `probe_sides`, naming the slice that could not answer (not built, damaged, or holding
    /// an invalid code); `lookup` says which of these it was.
    #[inline]
    fn value(&self, us: Bitboard, them: Bitboard) -> Result<Wdl, Material> {
        match self.entry(us, them)? {
            Entry::Known(v) => Ok(v),
            Entry::At {
                payload,
                rank,
                material,
            } => Wdl::from_code(code_at(payload, rank)).ok_or(material),
        }
    }

    /// Where the value of the position with `us` to move against `them` is: known without a
    /// file when a side has no pieces, else its slice's codes and its entry there; the slice
    /// when it is not built or cannot be used. A caller with many positions to value finds
    /// all their entries first, then reads them, so that the reads overlap.
    #[inline]
    pub fn entry(&self, us: Bitboard, them: Bitboard) -> Result<Entry<'_>, Material> {
        if us == 0 {
            return Ok(Entry::Known(Wdl::Loss));
        }
        if them == 0 {
            return Ok(Entry::Known(Wdl::Win));
        }
        let material = Material {
            a: us.count_ones() as u8,
            b: them.count_ones() as u8,
        };
        let Ok(Some(file)) = self.slice(material) else {
            return Err(material);
        };
        Ok(Entry::At {
            payload: file.payload(),
            rank: file.slice.rank(us, them),
            material,
        })
    }

    /// Plies to a capture or the end of the game under best play, for a won or lost position
    /// whose slice was built with distances (`None` for draws and where there is no file).
    pub fn distance(&self, pos: &Position) -> Option<u32> {
        let pos = self.on_board(pos)?;
        let (us, them) = (pos.us(), pos.them());
        if us == 0 || them == 0 {
            return Some(0);
        }
        let material = Material {
            a: us.count_ones() as u8,
            b: them.count_ones() as u8,
        };
        let file = self.file(material, Kind::Distance).ok()??;
        match file.payload()[file.slice.rank(us, them) as usize] {
            0 => None,
            age => Some(age as u32 - 1),
        }
    }

    /// `pos` on the tables' board (turned if it is on the transposed one).
    fn on_board(&self, pos: &Position) -> Option<Position> {
        if pos.board() == self.board {
            Some(*pos)
        } else if pos.board().transposed() == self.board {
            Some(pos.transposed())
        } else {
            None
        }
    }

    /// The value of `pos` for its side to move, saying why when the tables cannot give it
    /// (a slice not built, a damaged file, another board). Checkers use this instead of
    /// `probe`, which takes every such case as "not in the tables".
    pub fn lookup(&self, pos: &Position) -> Result<Wdl, Unavailable> {
        let Some(pos) = self.on_board(pos) else {
            return Err(Unavailable::Board {
                board: pos.board(),
                tables: self.board,
            });
        };
        self.value(pos.us(), pos.them())
            .map_err(|material| match self.slice(material) {
                Err(e) => Unavailable::Damaged(e.to_string()),
                Ok(None) => Unavailable::NotBuilt {
                    material,
                    board: self.board,
                    root: self.root.clone(),
                },
                Ok(Some(_)) => Unavailable::Damaged(format!("slice {material}: an invalid code")),
            })
    }

    /// The largest piece count of any slice built (0 if none is): a search may have read a
    /// leaf from any of them, even where a piece count is only partly built.
    pub fn max_pieces(&self) -> usize {
        let built = |n: usize| {
            Material::with_pieces(n)
                .any(|m| crate::file::slice_path(&self.root, self.board, m, Kind::Wdl).is_file())
        };
        (2..=self.cap.min(45))
            .rev()
            .find(|&n| built(n))
            .unwrap_or(0)
    }

    /// The fingerprint of these tables up to `pieces` pieces (`manifest::fingerprint`): None
    /// without a manifest, or when it cannot be read.
    pub fn fingerprint(&self, pieces: usize) -> Option<String> {
        crate::manifest::fingerprint(&self.root, self.board, pieces)
            .ok()
            .flatten()
    }

    /// `max_pieces` as it was when first asked here, then kept: for a search that asks once per
    /// search (hundreds of file checks each time otherwise). A slice built later is not seen,
    /// as a slice first probed missing stays missing.
    pub fn max_pieces_once(&self) -> usize {
        *self.held.get_or_init(|| self.max_pieces())
    }

    /// The value of `pos` for its side to move, if its slice is built. The position may be on
    /// the tables' board or on its transpose.
    pub fn probe(&self, pos: &Position) -> Option<Wdl> {
        let pos = self.on_board(pos)?;
        self.probe_sides(pos.us(), pos.them())
    }
}

/// A move of a position in the tables, as the tables see it.
#[derive(Clone, Debug)]
pub struct TableMove {
    pub mv: fanorona_rules::moves::Move,
    /// Its value for the mover (`None`: the position after it is not in the tables).
    pub value: Option<Wdl>,
    /// Plies to a capture or the end after it, with best play (0 after a capture: the count
    /// starts again in a smaller table), where the tables hold distances.
    pub plies_after: Option<u32>,
}

impl Database {
    /// Every legal move of `pos` with what the tables say of it, in generation order.
    pub fn table_moves(&self, pos: &Position) -> Vec<TableMove> {
        fanorona_rules::moves::legal_moves(pos)
            .into_iter()
            .map(|mv| {
                let child = mv.apply(pos);
                TableMove {
                    mv,
                    value: self.probe(&child).map(Wdl::flipped),
                    plies_after: if mv.is_capture() {
                        Some(0)
                    } else {
                        self.distance(&child)
                    },
                }
            })
            .collect()
    }
}

/// The best of `moves` for a position of `value`: one that keeps the value, a win by the
/// fewest plies, a loss by the most, a draw the first.
pub fn best_table_move(moves: &[TableMove], value: Wdl) -> Option<&TableMove> {
    let keeping = moves.iter().filter(|m| m.value == Some(value));
    match value {
        Wdl::Win => keeping.min_by_key(|m| m.plies_after.unwrap_or(u32::MAX)),
        Wdl::Loss => keeping.max_by_key(|m| m.plies_after.unwrap_or(0)),
        Wdl::Draw => keeping.min_by_key(|_| 0),
    }
}

impl Census {
    /// `Ok` when at least one slice is present and none up to `max_pieces` is missing or
    /// damaged; the error names every one that is.
    pub fn whole(&self, db: &Database) -> Result<(), TablesError> {
        if self.max_pieces == 0 {
            return Err(TablesError::None {
                board: db.board,
                root: db.root.clone(),
                pieces: 5,
            });
        }
        let missing: Vec<Material> = self
            .slices
            .iter()
            .filter(|(_, s)| *s == SliceState::Missing)
            .map(|(m, _)| *m)
            .collect();
        let damaged: Vec<(Material, String)> = self
            .slices
            .iter()
            .filter_map(|(m, s)| match s {
                SliceState::Damaged(why) => Some((*m, why.clone())),
                _ => None,
            })
            .collect();
        if missing.is_empty() && damaged.is_empty() {
            return Ok(());
        }
        Err(TablesError::Incomplete {
            board: db.board,
            root: db.root.clone(),
            max_pieces: self.max_pieces,
            missing,
            damaged,
        })
    }
}
