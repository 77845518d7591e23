//! Win, draw or loss for the side to move, and the 2-bit packing of the tables.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The value of a position for the side to move: the one word for a side-to-move result,
/// which the players also use for a move's value (`play::Verdict`). Ordered from worst to
/// best for that side, so that the best of several is their `max`.
/// In answers it is its name (`win`, `draw`, `loss`).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

/// 2-bit codes: 0 is a draw (and, while building, not yet decided).
pub const DRAW: u8 = 0;
pub const WIN: u8 = 1;
pub const LOSS: u8 = 2;

impl Wdl {
    pub fn from_code(code: u8) -> Option<Wdl> {
        match code {
            DRAW => Some(Wdl::Draw),
            WIN => Some(Wdl::Win),
            LOSS => Some(Wdl::Loss),
            _ => None,
        }
    }

    pub fn code(self) -> u8 {
        match self {
            Wdl::Draw => DRAW,
            Wdl::Win => WIN,
            Wdl::Loss => LOSS,
        }
    }

    /// The value for the other side.
    pub fn flipped(self) -> Wdl {
        match self {
            Wdl::Win => Wdl::Loss,
            Wdl::Draw => Wdl::Draw,
            Wdl::Loss => Wdl::Win,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The 2-bit code of entry `i` of a packed table (4 entries a byte, lowest bits first).
#[inline(always)]
pub fn code_at(bytes: &[u8], i: u64) -> u8 {
    (bytes[(i >> 2) as usize] >> (2 * (i & 3))) & 3
}

/// A table of 2-bit codes that several threads fill at once. Codes only ever go from 0 to a
/// final value, so setting is an atomic OR.
pub struct SharedCodes {
    words: Vec<AtomicU64>,
    len: u64,
}

impl SharedCodes {
    pub fn new(len: u64) -> SharedCodes {
        let words = len.div_ceil(32) as usize;
        SharedCodes {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            len,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn get(&self, i: u64) -> u8 {
        ((self.words[(i >> 5) as usize].load(Ordering::Relaxed) >> (2 * (i & 31))) & 3) as u8
    }

    /// Sets entry `i` (which must be 0 or already `code`); true if this call changed it.
    #[inline(always)]
    pub fn set(&self, i: u64, code: u8) -> bool {
        let bits = (code as u64) << (2 * (i & 31));
        self.words[(i >> 5) as usize].fetch_or(bits, Ordering::Relaxed) & bits != bits
    }

    /// The table as file bytes: 4 entries a byte, lowest bits first.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.words.len() * 8);
        for w in &self.words {
            out.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(self.len.div_ceil(4) as usize);
        out
    }
}

/// A table of bytes that several threads fill at once; each entry is set once, from 0.
pub struct SharedBytes {
    words: Vec<AtomicU64>,
    len: u64,
}

impl SharedBytes {
    pub fn new(len: u64) -> SharedBytes {
        SharedBytes {
            words: (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
            len,
        }
    }

    #[inline(always)]
    pub fn get(&self, i: u64) -> u8 {
        (self.words[(i >> 3) as usize].load(Ordering::Relaxed) >> (8 * (i & 7))) as u8
    }

    /// Sets entry `i`, which must still be 0.
    #[inline(always)]
    pub fn set(&self, i: u64, byte: u8) {
        self.words[(i >> 3) as usize].fetch_or((byte as u64) << (8 * (i & 7)), Ordering::Relaxed);
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.words.len() * 8);
        for w in &self.words {
            out.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(self.len as usize);
        out
    }
}

/// A bitmap that several threads set at once.
pub struct SharedBits {
    words: Vec<AtomicU64>,
}

impl SharedBits {
    pub fn new(len: u64) -> SharedBits {
        SharedBits {
            words: (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline(always)]
    pub fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize].load(Ordering::Relaxed) & (1 << (i & 63)) != 0
    }

    #[inline(always)]
    pub fn set(&self, i: u64) {
        self.words[(i >> 6) as usize].fetch_or(1 << (i & 63), Ordering::Relaxed);
    }

    /// The words, for scanning the set bits (word `w` holds entries `64 w ..`).
    pub fn words(&self) -> &[AtomicU64] {
        &self.words
    }

    pub fn clear(&mut self) {
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
    }

    pub fn count(&self) -> u64 {
        self.words
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_ordered_for_the_side_to_move_and_flips_for_the_other() {
        let all = [Wdl::Loss, Wdl::Draw, Wdl::Win];
        assert_eq!(all.iter().max(), Some(&Wdl::Win));
        assert!(Wdl::Loss < Wdl::Draw && Wdl::Draw < Wdl::Win);
        for v in all {
            assert_eq!(v.flipped().flipped(), v);
            assert_eq!(Wdl::from_code(v.code()), Some(v));
            // The better a value for one side, the worse for the other.
            for w in all {
                assert_eq!(v < w, v.flipped() > w.flipped());
            }
        }
        assert_eq!(Wdl::Win.flipped(), Wdl::Loss);
        assert_eq!(Wdl::Draw.name(), "draw");
    }

    #[test]
    fn codes_pack_four_to_a_byte() {
        let t = SharedCodes::new(37);
        assert!(t.set(0, WIN));
        assert!(t.set(5, LOSS));
        assert!(!t.set(5, LOSS));
        assert!(t.set(36, WIN));
        let bytes = t.to_bytes();
        assert_eq!(bytes.len(), 10);
        assert_eq!(code_at(&bytes, 0), WIN);
        assert_eq!(code_at(&bytes, 5), LOSS);
        assert_eq!(code_at(&bytes, 36), WIN);
        assert_eq!(code_at(&bytes, 7), DRAW);
        for c in [DRAW, WIN, LOSS] {
            assert_eq!(Wdl::from_code(c).unwrap().code(), c);
        }
        assert_eq!(Wdl::from_code(3), None);
    }
}
