//! What building a pair of slices needs, asked before any work and by the probe's memory
//! plan: the slices its captures read, its memory at the peak in either index, and the memory
//! the machine has.

use crate::file::canonical_board;
use crate::index::{Material, Slice};
use crate::scheme::Scheme;
use fanorona_rules::geometry::Board;

/// The slices a capture from `material` leads to: (b-k)-a for k = 1 .. b-1 (k = b ends the game).
pub(crate) fn capture_targets(material: Material) -> impl Iterator<Item = Material> {
    (1..material.b).map(move |left| Material {
        a: left,
        b: material.a,
    })
}

pub(crate) fn pair_of(material: Material) -> Vec<Material> {
    if material.a == material.b {
        vec![material]
    } else {
        vec![material, material.swapped()]
    }
}

/// The most entries the lists of positions decided in a round may hold (8 bytes each).
pub(crate) const LIST_BYTES: u64 = 1 << 30;

/// Bytes of memory a pair of slices needs while building, at the peak. Under the paper's
/// index: values (2 bits), the paika mark, the last and next rounds' bitmaps and the loss
/// candidates (1 bit each) per position; under the symmetric one, see `symmetric_memory_needed`.
pub fn memory_needed(board: Board, material: Material, distances: bool, index: Scheme) -> u64 {
    let board = canonical_board(board);
    if index == Scheme::Symmetric {
        return symmetric_memory_needed(board, material);
    }
    let positions = |m: Material| Slice::new(board, m).map(|s| s.len()).unwrap_or(u64::MAX);
    let n = pair_of(material)
        .into_iter()
        .map(positions)
        .fold(0, u64::saturating_add);
    // One more byte a position for the distances.
    n.saturating_mul(if distances { 14 } else { 6 }) / 8
}

/// Bytes of memory a symmetric pair needs at the peak: its values, the decided lists, and the
/// smaller slices its captures read at random (symmetric ones: in the paper's index they are
/// four times that, and a build reading them from the disk crawls).
fn symmetric_memory_needed(board: Board, material: Material) -> u64 {
    let pair = pair_of(material);
    // Saturating: a slice of very many pieces counts as u64::MAX (a plan no machine holds).
    let values = pair
        .iter()
        .map(|&m| crate::symmetric::entries(board, m) / 4)
        .fold(0, u64::saturating_add);
    let targets = pair
        .iter()
        .flat_map(|&m| capture_targets(m))
        .map(|t| crate::symmetric::entries(board, t) / 4)
        .fold(0, u64::saturating_add);
    values.saturating_add(targets).saturating_add(LIST_BYTES)
}

/// Memory available to a new build (None where it cannot be read).
pub(crate) fn memory_available() -> Option<u64> {
    fanorona_rules::machine::meminfo("MemAvailable")
}
