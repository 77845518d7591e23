//! The paper's index (Eq. 4.1) of a material slice: positions from the side to move, `a`
//! pieces against `b`, on a board of `N` points.
//!
//! With S_1 < ... < S_M the occupied points (M = a + b) and W_1 < ... < W_a the places, in
//! that order, of the side to move's pieces:
//! `index = sum_i C(S_i, i) + C(N, M) * sum_i C(W_i, i)`.
//! Both sums are ranks in the combinatorial number system, so the index is gap-less
//! (0 .. C(N, M) * C(M, a)) and invertible.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use fanorona_rules::geometry::{Bitboard, Board};

/// `BINOMIAL[n][k]` = C(n, k) for n, k <= 64.
static BINOMIAL: [[u64; 65]; 65] = {
    let mut t = [[0u64; 65]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1].saturating_add(if k < n { t[n - 1][k] } else { 0 });
            k += 1;
        }
        n += 1;
    }
    t
};

/// `BY_K[k][n]` = C(n, k): the same numbers laid out for searching along n.
static BY_K: [[u64; 65]; 65] = {
    let mut t = [[0u64; 65]; 65];
    let mut n = 0;
    while n <= 64 {
        let mut k = 0;
        while k <= 64 {
            t[k][n] = BINOMIAL[n][k];
            k += 1;
        }
        n += 1;
    }
    t
};

#[inline(always)]
pub fn binomial(n: usize, k: usize) -> u64 {
    if k > n { 0 } else { BINOMIAL[n][k] }
}

/// Rank of a set of points in the combinatorial number system: sum of C(s_i, i), the points
/// taken in increasing order, i from 1.
#[inline]
pub fn rank_set(mut set: u64) -> u64 {
    let mut r = 0;
    let mut i = 1;
    while set != 0 {
        r += BINOMIAL[set.trailing_zeros() as usize][i];
        set &= set - 1;
        i += 1;
    }
    r
}

/// The set of `k` points (below `n`) whose rank is `r`.
#[inline]
pub fn unrank_set(mut r: u64, k: usize, n: usize) -> u64 {
    let mut set = 0;
    let mut top = n;
    for i in (1..=k).rev() {
        // The largest s below `top` with C(s, i) <= r: a binary search without branches
        // (C(s, i) grows with s, and C(i - 1, i) = 0 <= r).
        let row = &BY_K[i];
        let (mut s, mut len) = (i - 1, top - (i - 1));
        while len > 1 {
            let half = len / 2;
            let mid = s + half;
            s = if row[mid] <= r { mid } else { s };
            len -= half;
        }
        set |= 1 << s;
        r -= row[s];
        top = s;
    }
    set
}

/// Deposits the low bits of `bits` at the positions of `mask`, lowest first (PDEP).
#[inline]
pub fn deposit(mut bits: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    while mask != 0 {
        let low = mask & mask.wrapping_neg();
        if bits & 1 != 0 {
            out |= low;
        }
        bits >>= 1;
        mask ^= low;
    }
    out
}

/// Gathers the bits of `x` at the positions of `mask` into the low bits, lowest first (PEXT).
#[inline]
pub fn extract(x: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    let mut i = 0;
    while mask != 0 {
        let low = mask & mask.wrapping_neg();
        if x & low != 0 {
            out |= 1 << i;
        }
        i += 1;
        mask ^= low;
    }
    out
}

/// The next set with as many points in the combinatorial number system's order, which is
/// the order of the sets as numbers (Gosper's hack). `set` must not be empty.
#[inline(always)]
pub fn next_set(set: u64) -> u64 {
    let low = set & set.wrapping_neg();
    let ripple = set.wrapping_add(low);
    ripple | (((set ^ ripple) >> 2) / low)
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SliceError {
    #[error("malformed slice '{0}': expected A-B, such as 3-2")]
    Malformed(String),
    #[error("slice {a}-{b}: both sides need at least one piece")]
    Empty { a: usize, b: usize },
    #[error("slice {a}-{b}: {pieces} pieces do not fit the {board} board")]
    TooMany {
        a: usize,
        b: usize,
        pieces: usize,
        board: Board,
    },
}

/// A material slice: the side to move has `a` pieces, its opponent `b`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Material {
    pub a: u8,
    pub b: u8,
}

impl Material {
    pub fn new(a: usize, b: usize) -> Result<Material, SliceError> {
        if a == 0 || b == 0 {
            return Err(SliceError::Empty { a, b });
        }
        if a + b > 45 {
            return Err(SliceError::TooMany {
                a,
                b,
                pieces: a + b,
                board: Board::STANDARD,
            });
        }
        Ok(Material {
            a: a as u8,
            b: b as u8,
        })
    }

    pub fn pieces(self) -> usize {
        (self.a + self.b) as usize
    }

    /// Whether the pieces fit on `board`.
    pub fn fits(self, board: Board) -> Result<(), SliceError> {
        if self.pieces() > board.size() {
            return Err(SliceError::TooMany {
                a: self.a as usize,
                b: self.b as usize,
                pieces: self.pieces(),
                board,
            });
        }
        Ok(())
    }

    /// The same material with the other side to move.
    pub fn swapped(self) -> Material {
        Material {
            a: self.b,
            b: self.a,
        }
    }

    /// Every slice with `pieces` pieces, the side to move's count descending (Table 3's order).
    pub fn with_pieces(pieces: usize) -> impl Iterator<Item = Material> {
        (1..pieces).rev().map(move |a| Material {
            a: a as u8,
            b: (pieces - a) as u8,
        })
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.a, self.b)
    }
}

/// In answers, a slice is its text (`5-4`).
impl serde::Serialize for Material {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Material {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Material, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Material {
    type Err = SliceError;

    fn from_str(s: &str) -> Result<Material, SliceError> {
        let bad = || SliceError::Malformed(s.to_string());
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        Material::new(a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
    }
}

/// A slice of one board: its material and the sizes its index needs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Slice {
    pub board: Board,
    pub material: Material,
    /// C(N, M): the number of occupancy sets.
    sets: u64,
    /// C(M, a): the number of ways to colour a set.
    colourings: u64,
}

impl Slice {
    pub fn new(board: Board, material: Material) -> Result<Slice, SliceError> {
        material.fits(board)?;
        let (n, m) = (board.size(), material.pieces());
        Ok(Slice {
            board,
            material,
            sets: binomial(n, m),
            colourings: binomial(m, material.a as usize),
        })
    }

    /// The number of positions (indices) of the slice.
    pub fn len(&self) -> u64 {
        self.sets * self.colourings
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of occupancy sets: indices `i` and `i + k * sets()` share one.
    pub fn sets(&self) -> u64 {
        self.sets
    }

    /// The index of the position where the side to move holds `us` and the opponent `them`.
    /// The counts must match the slice's material.
    #[inline]
    pub fn rank(&self, us: Bitboard, them: Bitboard) -> u64 {
        debug_assert_eq!(us.count_ones(), self.material.a as u32);
        debug_assert_eq!(them.count_ones(), self.material.b as u32);
        let occupied = us | them;
        rank_set(occupied) + self.sets * rank_set(extract(us, occupied))
    }

    /// The positions of indices `start..end` in order, as (side to move's pieces, opponent's
    /// pieces): one unrank, then a step to the next set per index.
    pub fn positions(&self, start: u64, end: u64) -> impl Iterator<Item = (Bitboard, Bitboard)> {
        let (m, a, n) = (
            self.material.pieces(),
            self.material.a as usize,
            self.board.size(),
        );
        let (set_rank, colour_rank) = (start % self.sets, start / self.sets);
        let mut occupied = unrank_set(set_rank, m, n);
        let mut colouring = unrank_set(colour_rank, a, m);
        let last = 1u64 << n;
        (start..end).map(move |_| {
            let us = deposit(colouring, occupied);
            let out = (us, occupied & !us);
            occupied = next_set(occupied);
            if occupied >= last {
                // Every set done for this colouring: the next colouring, from the first set.
                occupied = (1 << m) - 1;
                colouring = next_set(colouring);
            }
            out
        })
    }

    /// A cursor for reading positions at increasing indices (see `Cursor::seek`).
    pub fn cursor(&self) -> Cursor {
        Cursor {
            sets: self.sets,
            pieces: self.material.pieces(),
            a: self.material.a as usize,
            n: self.board.size(),
            index: u64::MAX,
            occupied: 0,
            colouring: 0,
        }
    }

    /// The position (side to move's pieces, opponent's pieces) of an index below `len()`.
    #[inline]
    pub fn unrank(&self, index: u64) -> (Bitboard, Bitboard) {
        let (set_rank, colour_rank) = (index % self.sets, index / self.sets);
        let m = self.material.pieces();
        let occupied = unrank_set(set_rank, m, self.board.size());
        let us = deposit(
            unrank_set(colour_rank, self.material.a as usize, m),
            occupied,
        );
        (us, occupied & !us)
    }
}

/// Reads positions at increasing indices: a short way forward is walked set by set, a long
/// way is unranked. Scanning a bitmap of indices in order costs little more than its length.
pub struct Cursor {
    sets: u64,
    pieces: usize,
    a: usize,
    n: usize,
    index: u64,
    occupied: u64,
    colouring: u64,
}

impl Cursor {
    /// The position at `index`; cheapest when `index` is a little above the previous one.
    #[inline]
    pub fn seek(&mut self, index: u64) -> (Bitboard, Bitboard) {
        const WALK: u64 = 48;
        if self.index < index && index - self.index <= WALK {
            while self.index < index {
                self.occupied = next_set(self.occupied);
                if self.occupied >> self.n != 0 {
                    self.occupied = (1 << self.pieces) - 1;
                    self.colouring = next_set(self.colouring);
                }
                self.index += 1;
            }
        } else {
            let (set_rank, colour_rank) = (index % self.sets, index / self.sets);
            self.occupied = unrank_set(set_rank, self.pieces, self.n);
            self.colouring = unrank_set(colour_rank, self.a, self.pieces);
            self.index = index;
        }
        let us = deposit(self.colouring, self.occupied);
        (us, self.occupied & !us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(binomial(45, 7), 45_379_620);
        assert_eq!(binomial(45, 0), 1);
        assert_eq!(binomial(3, 5), 0);
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
    }

    #[test]
    fn table_2_sizes() {
        // reference/table2-db-sizes.tsv: positions per piece count on the 45-point boards.
        let expect = [
            90u64,
            1980,
            85140,
            2085930,
            36652770,
            504993720,
            5717832120,
            54750511530,
            451943198850,
            3260371406292,
        ];
        for (i, &e) in expect.iter().enumerate() {
            let pieces = i + 1;
            let total: u64 = if pieces == 1 {
                // One piece: the side to move alone or the opponent alone (Table 2 counts
                // both, though no slice stores them).
                2 * 45
            } else {
                Material::with_pieces(pieces)
                    .map(|m| Slice::new(Board::STANDARD, m).unwrap().len())
                    .sum()
            };
            assert_eq!(total, e, "{pieces} pieces");
        }
    }

    #[test]
    fn rank_and_unrank_are_inverse_on_small_slices() {
        for board in ["3x3", "3x5", "5x9"] {
            let board: Board = board.parse().unwrap();
            for m in [(1, 1), (2, 1), (1, 2), (2, 2), (3, 1)] {
                let s = Slice::new(board, Material::new(m.0, m.1).unwrap()).unwrap();
                let mut seen = std::collections::HashSet::new();
                for i in 0..s.len() {
                    let (us, them) = s.unrank(i);
                    assert_eq!(us & them, 0);
                    assert_eq!(us.count_ones() as usize, m.0);
                    assert_eq!(them.count_ones() as usize, m.1);
                    assert_eq!((us | them) >> board.size(), 0);
                    assert!(seen.insert((us, them)));
                    assert_eq!(s.rank(us, them), i);
                }
            }
        }
    }

    #[test]
    fn rank_and_unrank_are_inverse_on_samples_of_large_slices() {
        let s = Slice::new(Board::STANDARD, Material::new(5, 4).unwrap()).unwrap();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = x % s.len();
            let (us, them) = s.unrank(i);
            assert_eq!(s.rank(us, them), i);
        }
        assert_eq!(
            s.rank(s.unrank(s.len() - 1).0, s.unrank(s.len() - 1).1),
            s.len() - 1
        );
    }

    #[test]
    fn sequential_positions_equal_unranked_ones() {
        for (board, m) in [("3x3", (2, 2)), ("5x9", (2, 1)), ("3x5", (3, 2))] {
            let board: Board = board.parse().unwrap();
            let s = Slice::new(board, Material::new(m.0, m.1).unwrap()).unwrap();
            for start in [0, 1, s.sets() - 1, s.len() / 2] {
                let end = s.len();
                for (i, got) in (start..end).zip(s.positions(start, end)) {
                    assert_eq!(got, s.unrank(i), "{board} {m:?} index {i}");
                }
            }
        }
    }

    #[test]
    fn a_cursor_reads_what_unrank_reads() {
        let s = Slice::new(Board::STANDARD, Material::new(3, 2).unwrap()).unwrap();
        let mut c = s.cursor();
        let mut i = 0;
        let mut x = 7u64;
        while i < s.len() {
            assert_eq!(c.seek(i), s.unrank(i), "index {i}");
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly short steps, sometimes long jumps.
            i += if x >> 60 == 0 {
                1 + (x >> 20) % 5_000_000
            } else {
                1 + (x >> 33) % 40
            };
        }
    }

    #[test]
    fn materials_parse() {
        assert_eq!("3-2".parse::<Material>().unwrap().to_string(), "3-2");
        assert!("3".parse::<Material>().is_err());
        assert!("0-2".parse::<Material>().is_err());
        assert_eq!(
            Material::with_pieces(4)
                .map(|m| m.to_string())
                .collect::<Vec<_>>(),
            ["3-1", "2-2", "1-3"]
        );
    }
}
