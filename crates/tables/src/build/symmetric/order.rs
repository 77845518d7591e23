//! The order of a first pass over a slice: entry after entry, or a block of big sets at a
//! time so that the captures' reads stay in a few classes of the smaller slices.

use fanorona_rules::geometry::Bitboard;

use super::{BIG_SETS, CHUNK};
use crate::index::Material;
use crate::symmetric::SymSlice;

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
    pub(super) fn units(self, slice: &SymSlice) -> (u64, u64) {
        match self {
            PassOrder::Entries => (slice.len(), CHUNK),
            PassOrder::BigSets => (slice.big_sets(), BIG_SETS),
        }
    }

    /// Calls `f(class, entry, us, them)` for every entry of units `range` (at most a
    /// chunk of them).
    #[inline]
    pub(super) fn walk(
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
    pub(super) fn by(self) -> &'static str {
        match self {
            PassOrder::Entries => "",
            PassOrder::BigSets => " by the opponent's sets",
        }
    }

    pub(super) fn unit(self) -> &'static str {
        match self {
            PassOrder::Entries => "entries",
            PassOrder::BigSets => "sets",
        }
    }
}
