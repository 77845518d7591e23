//! The index schemes a slice file can use, told apart by its header: scheme 1, the paper's
//! index of every position (`index.rs`), and scheme 2, one entry per class of positions under
//! the board's symmetries (`symmetric.rs`).

use std::fmt;

use crate::index::{Material, Slice, SliceError};
use crate::symmetric::SymSlice;
use fanorona_rules::geometry::{Bitboard, Board};

/// Which index a slice's entries follow.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// The paper's Eq. 4.1: every position.
    Paper = 1,
    /// One entry per class under the board's four symmetries.
    Symmetric = 2,
}

impl Scheme {
    pub fn from_byte(byte: u8) -> Option<Scheme> {
        match byte {
            1 => Some(Scheme::Paper),
            2 => Some(Scheme::Symmetric),
            _ => None,
        }
    }

    /// The index new slices are built in when none is asked for: the symmetric one (a
    /// quarter of the memory and disk), or the paper's where distances are kept, since only
    /// it has them.
    pub fn for_new_slices(distances: bool) -> Scheme {
        if distances {
            Scheme::Paper
        } else {
            Scheme::Symmetric
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Paper => "paper",
            Scheme::Symmetric => "symmetric",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Scheme {
    type Err = String;

    fn from_str(s: &str) -> Result<Scheme, String> {
        match s {
            "paper" => Ok(Scheme::Paper),
            "symmetric" => Ok(Scheme::Symmetric),
            _ => Err(format!("unknown index '{s}': expected paper or symmetric")),
        }
    }
}

/// A slice under one of the schemes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Index {
    Paper(Slice),
    Symmetric(SymSlice),
}

impl Index {
    pub fn new(scheme: Scheme, board: Board, material: Material) -> Result<Index, SliceError> {
        Ok(match scheme {
            Scheme::Paper => Index::Paper(Slice::new(board, material)?),
            Scheme::Symmetric => Index::Symmetric(SymSlice::new(board, material)?),
        })
    }

    pub fn scheme(&self) -> Scheme {
        match self {
            Index::Paper(_) => Scheme::Paper,
            Index::Symmetric(_) => Scheme::Symmetric,
        }
    }

    pub fn board(&self) -> Board {
        match self {
            Index::Paper(s) => s.board,
            Index::Symmetric(s) => s.board,
        }
    }

    pub fn material(&self) -> Material {
        match self {
            Index::Paper(s) => s.material,
            Index::Symmetric(s) => s.material,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> u64 {
        match self {
            Index::Paper(s) => s.len(),
            Index::Symmetric(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of the position where the side to move holds `us` and the opponent `them`.
    #[inline]
    pub fn rank(&self, us: Bitboard, them: Bitboard) -> u64 {
        match self {
            Index::Paper(s) => s.rank(us, them),
            Index::Symmetric(s) => s.rank(us, them),
        }
    }

    /// The position of an entry.
    #[inline]
    pub fn unrank(&self, index: u64) -> (Bitboard, Bitboard) {
        match self {
            Index::Paper(s) => s.unrank(index),
            Index::Symmetric(s) => s.unrank(index),
        }
    }

    /// Whether the entry is the one its position is probed at (a symmetric index also holds
    /// copies, which a check of the table skips).
    #[inline]
    pub fn is_canonical(&self, index: u64) -> bool {
        match self {
            Index::Paper(_) => true,
            Index::Symmetric(s) => s.is_canonical(index),
        }
    }

    /// The positions of entries `start..end`, in order.
    pub fn positions(
        &self,
        start: u64,
        end: u64,
    ) -> Box<dyn Iterator<Item = (Bitboard, Bitboard)> + '_> {
        match self {
            Index::Paper(s) => Box::new(s.positions(start, end)),
            Index::Symmetric(s) => Box::new(s.positions(start, end)),
        }
    }
}
