//! Probing: the value of a position from the memory-mapped slice files, opened lazily.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::egdb::file::{FileError, Kind, SliceFile, canonical_board};
use crate::egdb::index::{Material, Slice};
use crate::egdb::wdl::{Wdl, code_at};
use crate::geometry::{Bitboard, Board};
use crate::position::Position;

/// Why the tables cannot give a position's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error(
        "slice {material} of {board} is not built under {}: build it with `fanorona db build --board {board} --pieces {} --dir {}`",
        root.display(), material.pieces(), root.display()
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
}

impl Database {
    /// The tables of `board` under `root`. Nothing is read until a probe needs it.
    pub fn new(root: &Path, board: Board) -> Database {
        Database {
            root: root.to_path_buf(),
            board: canonical_board(board),
            slices: (0..MAX_SIDE * MAX_SIDE).map(|_| OnceLock::new()).collect(),
            distances: (0..MAX_SIDE * MAX_SIDE).map(|_| OnceLock::new()).collect(),
        }
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
        let cells = match kind {
            Kind::Wdl => &self.slices,
            Kind::Distance => &self.distances,
        };
        let cell = &cells[material.a as usize * MAX_SIDE + material.b as usize];
        let opened = cell.get_or_init(|| {
            let slice = Slice::new(self.board, material).map_err(|e| e.to_string())?;
            SliceFile::open(&self.root, &slice, kind).map_err(|e| e.to_string())
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
        if us == 0 {
            return Ok(Wdl::Loss);
        }
        if them == 0 {
            return Ok(Wdl::Win);
        }
        let material = Material {
            a: us.count_ones() as u8,
            b: them.count_ones() as u8,
        };
        let Ok(Some(file)) = self.slice(material) else {
            return Err(material);
        };
        Wdl::from_code(code_at(file.payload(), file.slice.rank(us, them))).ok_or(material)
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
            Material::with_pieces(n).any(|m| {
                crate::egdb::file::slice_path(&self.root, self.board, m, Kind::Wdl).is_file()
            })
        };
        (2..=45).rev().find(|&n| built(n)).unwrap_or(0)
    }

    /// The value of `pos` for its side to move, if its slice is built. The position may be on
    /// the tables' board or on its transpose.
    pub fn probe(&self, pos: &Position) -> Option<Wdl> {
        let pos = self.on_board(pos)?;
        self.probe_sides(pos.us(), pos.them())
    }
}
