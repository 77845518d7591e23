//! The symmetric index (index scheme 2): one entry per class of positions under the board's
//! four symmetries that keep its lines (identity, left-right, top-bottom and the half turn),
//! instead of one per position. On 5x9 a slice shrinks almost four times.
//!
//! After Malom's index for Nine Men's Morris: the side with fewer pieces (the "small" set,
//! `k` points; the side to move when both have as many) is taken to the representative of its
//! class, the smallest of its images as a number; the other side's set (`l` points) goes along
//! by the same symmetry and is ranked among the `N - k` points left free:
//! `index = orbit(small) * C(N - k, l) + rank(big among the free points)`.
//! Removing `k` holes from a set, and putting them back, is `k` shifts: a probe costs a few
//! table reads more than the paper's index.
//!
//! Where the small set's representative is itself symmetric (its stabiliser is more than the
//! identity), several entries hold images of one position: the entry with the smallest rank is
//! the canonical one, and the others are copies written at the end of a build.

use std::sync::OnceLock;

use crate::index::{Material, SliceError, binomial, next_set, rank_set, unrank_set};
use fanorona_rules::geometry::{Bitboard, Board, points};

/// How many symmetries every supported board has: all are odd by odd, so each of the four
/// keeps the strong points (a point's column plus row keeps its parity).
pub const SYMMETRIES: usize = 4;

/// The board's symmetries as maps of bitboards: 0 the identity, 1 left-right, 2 top-bottom,
/// 3 the half turn (left-right after top-bottom).
#[derive(Clone, Copy, Debug)]
pub struct Symmetries {
    rows: u32,
    cols: u32,
    size: u32,
    row_mask: Bitboard,
    /// Per symmetry, the images of each byte: three table reads instead of the shifts.
    bytes: Option<&'static [ByteImages; 4]>,
    /// Per symmetry, the image of each point.
    points: Option<&'static [[Bitboard; 64]; 4]>,
}

impl Symmetries {
    pub fn new(board: Board) -> Symmetries {
        debug_assert!(board.rows() % 2 == 1 && board.cols() % 2 == 1);
        let plain = Symmetries {
            rows: board.rows() as u32,
            cols: board.cols() as u32,
            size: board.size() as u32,
            row_mask: (1 << board.cols()) - 1,
            bytes: None,
            points: None,
        };
        static ALL: OnceLock<Vec<OnceLock<[ByteImages; 4]>>> = OnceLock::new();
        let all = ALL.get_or_init(|| Board::all().map(|_| OnceLock::new()).collect());
        let i = Board::all()
            .position(|b| b == board)
            .expect("a supported board");
        let bytes = all[i].get_or_init(|| [0, 1, 2, 3].map(|g| ByteImages::new(&plain, g)));
        static POINTS: OnceLock<Vec<OnceLock<[[Bitboard; 64]; 4]>>> = OnceLock::new();
        let points = POINTS.get_or_init(|| Board::all().map(|_| OnceLock::new()).collect())[i]
            .get_or_init(|| {
                [0, 1, 2, 3].map(|g| {
                    std::array::from_fn(|p| {
                        if p < board.size() {
                            plain.apply(g, 1 << p)
                        } else {
                            0
                        }
                    })
                })
            });
        Symmetries {
            bytes: Some(bytes),
            points: Some(points),
            ..plain
        }
    }

    /// The image of point `p` under symmetry `g`, as a set.
    #[inline(always)]
    pub fn point(&self, g: usize, p: u8) -> Bitboard {
        match self.points {
            Some(t) => t[g][p as usize & 63],
            None => self.apply(g, 1 << p),
        }
    }

    /// The half turn: point p goes to N - 1 - p, which reverses the bitboard.
    #[inline(always)]
    fn turn(&self, set: Bitboard) -> Bitboard {
        set.reverse_bits() >> (64 - self.size)
    }

    /// Top-bottom: the rows in reverse order.
    #[inline(always)]
    fn flip(&self, set: Bitboard) -> Bitboard {
        let mut out = 0;
        for r in 0..self.rows {
            let row = (set >> (r * self.cols)) & self.row_mask;
            out |= row << ((self.rows - 1 - r) * self.cols);
        }
        out
    }

    /// The image of `set` under symmetry `g`.
    #[inline(always)]
    pub fn apply(&self, g: usize, set: Bitboard) -> Bitboard {
        match (g, self.bytes) {
            (0, _) => set,
            (_, Some(t)) => {
                let t = &t[g].0;
                let mut out = 0;
                for (i, row) in t.iter().enumerate().take(self.size.div_ceil(8) as usize) {
                    out |= row[((set >> (8 * i)) & 0xff) as usize];
                }
                out
            }
            (1, None) => self.turn(self.flip(set)),
            (2, None) => self.flip(set),
            _ => self.turn(set),
        }
    }
}

/// The images of every byte of a set under one symmetry, byte by byte.
#[derive(Debug)]
pub struct ByteImages(pub Box<[[Bitboard; 256]; 8]>);

impl ByteImages {
    pub fn new(sym: &Symmetries, g: usize) -> ByteImages {
        let mut t = Box::new([[0u64; 256]; 8]);
        for (i, row) in t.iter_mut().enumerate() {
            for (b, image) in row.iter_mut().enumerate() {
                let set = (b as u64) << (8 * i);
                *image = if 8 * i < 64 && set >> sym.size == 0 {
                    sym.apply(g, set)
                } else {
                    0
                };
            }
        }
        ByteImages(t)
    }
}

/// The classes of the sets of `k` points of a board.
#[derive(Debug)]
pub struct Orbits {
    /// Per set, by `rank_set`: its class's number times 8, plus 4 if the class's
    /// representative is symmetric, plus a symmetry taking the set to the representative
    /// (one read tells a probe all it needs: the representative is that symmetry's image).
    of_set: Vec<u32>,
    /// Per class: its representative, the smallest of its sets as a number.
    reps: Vec<Bitboard>,
    /// Per class: the symmetries that leave its representative unchanged (bit g), 1 when only
    /// the identity does.
    stabiliser: Vec<u8>,
}

impl Orbits {
    fn build(board: Board, k: usize) -> Orbits {
        let sym = Symmetries::new(board);
        let n = board.size();
        let count = binomial(n, k) as usize;
        let mut of_set = vec![0u32; count];
        let (mut reps, mut stabiliser) = (Vec::new(), Vec::new());
        // Sets come in increasing order as numbers, so a class's representative (its
        // smallest set) comes before every other set of the class.
        let mut set: Bitboard = if k == 0 { 0 } else { (1 << k) - 1 };
        for r in 0..count {
            let images = [0, 1, 2, 3].map(|g| sym.apply(g, set));
            let rep = *images.iter().min().expect("four images");
            let g = images
                .iter()
                .position(|&i| i == rep)
                .expect("the smallest is one of them");
            let class = if rep == set {
                reps.push(set);
                stabiliser.push(
                    images
                        .iter()
                        .enumerate()
                        .fold(0u8, |m, (g, &i)| m | (u8::from(i == set) << g)),
                );
                (reps.len() - 1) as u32
            } else {
                of_set[rank_set(rep) as usize] >> 3
            };
            let symmetric = stabiliser[class as usize] != 1;
            of_set[r] = class << 3 | u32::from(symmetric) << 2 | g as u32;
            if k > 0 {
                set = next_set(set);
            }
        }
        Orbits {
            of_set,
            reps,
            stabiliser,
        }
    }

    /// The classes of the sets of `k` points of `board`, built once per process.
    pub fn of(board: Board, k: usize) -> &'static Orbits {
        const MAX: usize = 46;
        static ALL: OnceLock<Vec<Vec<OnceLock<Orbits>>>> = OnceLock::new();
        let all = ALL.get_or_init(|| {
            Board::all()
                .map(|_| (0..MAX).map(|_| OnceLock::new()).collect())
                .collect()
        });
        let index = Board::all()
            .position(|b| b == board)
            .expect("a supported board");
        all[index][k].get_or_init(|| Orbits::build(board, k))
    }

    /// The number of classes.
    pub fn len(&self) -> u64 {
        self.reps.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.reps.is_empty()
    }
}

/// Removes the points of `holes` from `set` (which has none of them), closing the gaps: the
/// set as seen among the other points.
#[inline(always)]
pub fn squeeze(mut set: Bitboard, holes: Bitboard) -> Bitboard {
    // From the highest hole down, so the lower holes stay where they are.
    let mut h = holes;
    while h != 0 {
        let top = 63 - h.leading_zeros();
        let below = (1u64 << top) - 1;
        set = (set & below) | ((set >> 1) & !below);
        h ^= 1 << top;
    }
    set
}

/// Puts the points of `holes` back into a squeezed set: the inverse of `squeeze`.
#[inline(always)]
pub fn expand(mut set: Bitboard, holes: Bitboard) -> Bitboard {
    // From the lowest hole up: each is at its final place once the ones below are in.
    for h in points(holes) {
        let below = (1u64 << h) - 1;
        set = (set & below) | ((set & !below) << 1);
    }
    set
}

/// A material slice under the symmetric index.
#[derive(Clone, Copy, Debug)]
pub struct SymSlice {
    pub board: Board,
    pub material: Material,
    sym: Symmetries,
    orbits: &'static Orbits,
    /// Whether the side to move is the small set.
    small_is_us: bool,
    /// Points of the big set, and the points left to it.
    big: usize,
    free: usize,
    /// C(free, big): entries per class of the small set.
    per_class: u64,
}

/// A set of the small side's size, classed (`SymSlice::class_of`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmallClass {
    pub class: u32,
    /// Whether the class's representative is symmetric (some entries are copies).
    pub symmetric: bool,
    /// A symmetry taking the set to `rep` (a byte, so that a cache slot is 24 bytes).
    pub g: u8,
    /// The class's representative.
    pub rep: Bitboard,
}

impl PartialEq for SymSlice {
    fn eq(&self, other: &SymSlice) -> bool {
        self.board == other.board && self.material == other.material
    }
}

impl SymSlice {
    pub fn new(board: Board, material: Material) -> Result<SymSlice, SliceError> {
        material.fits(board)?;
        let n = board.size();
        let small_is_us = material.a <= material.b;
        let (small, big) = if small_is_us {
            (material.a as usize, material.b as usize)
        } else {
            (material.b as usize, material.a as usize)
        };
        Ok(SymSlice {
            board,
            material,
            sym: Symmetries::new(board),
            orbits: Orbits::of(board, small),
            small_is_us,
            big,
            free: n - small,
            per_class: binomial(n - small, big),
        })
    }

    /// The number of entries.
    pub fn len(&self) -> u64 {
        self.orbits.len() * self.per_class
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The canonical entry of the position where the side to move holds `us` and the
    /// opponent `them` (or of any of its images).
    #[inline]
    pub fn rank(&self, us: Bitboard, them: Bitboard) -> u64 {
        let (small, big) = if self.small_is_us {
            (us, them)
        } else {
            (them, us)
        };
        let c = self.class_of(small);
        self.rank_in_class(&c, self.sym.apply(c.g as usize, big))
    }

    /// Whether the small set is the side to move's (else the opponent's).
    #[inline(always)]
    pub fn small_is_us(&self) -> bool {
        self.small_is_us
    }

    /// The class of `small`, a set of the small side's size, and the symmetry taking it to
    /// its representative.
    #[inline(always)]
    pub fn class_of(&self, small: Bitboard) -> SmallClass {
        let e = self.orbits.of_set[rank_set(small) as usize];
        let class = e >> 3;
        let g = (e & 3) as u8;
        SmallClass {
            class,
            symmetric: e & 4 != 0,
            g,
            rep: self.orbits.reps[class as usize],
        }
    }

    /// Class `class` of the small sets, as its representative stands (`g` the identity).
    #[inline(always)]
    pub fn class(&self, class: u64) -> SmallClass {
        SmallClass {
            class: class as u32,
            symmetric: self.class_is_symmetric(class),
            g: 0,
            rep: self.orbits.reps[class as usize],
        }
    }

    /// The canonical entry of the position whose small set is of class `c` and whose big set,
    /// taken by the same symmetry (`c.g`), is `big`: `rank` once the small set is classed, for
    /// a caller that has the class, or the big set's image, at hand.
    #[inline(always)]
    pub fn rank_in_class(&self, c: &SmallClass, big: Bitboard) -> u64 {
        let mut r = rank_set(squeeze(big, c.rep));
        if c.symmetric {
            let stab = self.orbits.stabiliser[c.class as usize];
            for h in 1..SYMMETRIES {
                if stab >> h & 1 != 0 {
                    r = r.min(rank_set(squeeze(self.sym.apply(h, big), c.rep)));
                }
            }
        }
        c.class as u64 * self.per_class + r
    }

    /// The position of entry `index` (below `len()`), as (side to move's pieces, opponent's).
    #[inline]
    pub fn unrank(&self, index: u64) -> (Bitboard, Bitboard) {
        let (class, r) = (index / self.per_class, index % self.per_class);
        let small = self.orbits.reps[class as usize];
        let big = expand(unrank_set(r, self.big, self.free), small);
        self.sides(small, big)
    }

    #[inline(always)]
    fn sides(&self, small: Bitboard, big: Bitboard) -> (Bitboard, Bitboard) {
        if self.small_is_us {
            (small, big)
        } else {
            (big, small)
        }
    }

    /// Whether the entries of class `class` can be copies of one another (its representative
    /// is symmetric): only there is an entry not always canonical.
    #[inline]
    pub fn class_is_symmetric(&self, class: u64) -> bool {
        self.orbits.stabiliser[class as usize] != 1
    }

    /// Entries per class of the small set: entry `i` is of class `i / per_class()`.
    pub fn per_class(&self) -> u64 {
        self.per_class
    }

    /// Whether entry `index` is the canonical one of its position (not a copy).
    pub fn is_canonical(&self, index: u64) -> bool {
        !self.class_is_symmetric(index / self.per_class) || {
            let (us, them) = self.unrank(index);
            self.rank(us, them) == index
        }
    }

    /// The symmetries of the board.
    pub fn symmetries(&self) -> &Symmetries {
        &self.sym
    }

    /// How many positions the entry's position stands for: 4 over the number of symmetries
    /// that leave it unchanged.
    pub fn class_size(&self, us: Bitboard, them: Bitboard) -> u32 {
        let fixed = (0..SYMMETRIES)
            .filter(|&g| self.sym.apply(g, us) == us && self.sym.apply(g, them) == them)
            .count() as u32;
        SYMMETRIES as u32 / fixed
    }

    /// How many sets of points the big set can be: the units of `for_each_in_big_sets`.
    pub fn big_sets(&self) -> u64 {
        binomial(self.board.size(), self.big)
    }

    /// The most big sets `for_each_in_big_sets` takes at once.
    pub const BIG_BLOCK: usize = 64;

    /// Visits the entries whose big set (as points of the board, not squeezed) has its rank
    /// among all sets of its size in `ranks` (at most `BIG_BLOCK` of them), as
    /// `f(class, entry, us, them)`: class by class, and within a class in increasing order.
    /// Each entry has one big set, so visiting every rank once visits every entry once.
    ///
    /// The order of a pass whose reads follow the big set: a capture by the small side
    /// leaves the big side, now to move, as the small set of the slice it leads to, so a
    /// few big sets at a time keep those reads in a few of its classes.
    #[inline]
    pub fn for_each_in_big_sets(
        &self,
        ranks: std::ops::Range<u64>,
        mut f: impl FnMut(u64, u64, Bitboard, Bitboard),
    ) {
        let n = ranks.end.saturating_sub(ranks.start) as usize;
        assert!(n <= Self::BIG_BLOCK, "{n} big sets at once");
        if n == 0 {
            return;
        }
        // Sets of as many points in increasing order as numbers are in increasing rank.
        let mut bigs = [0; Self::BIG_BLOCK];
        let mut set = unrank_set(ranks.start, self.big, self.board.size());
        for b in &mut bigs[..n] {
            *b = set;
            set = next_set(set);
        }
        for (class, &small) in self.orbits.reps.iter().enumerate() {
            let base = class as u64 * self.per_class;
            for &big in &bigs[..n] {
                if big & small == 0 {
                    let (us, them) = self.sides(small, big);
                    f(class as u64, base + rank_set(squeeze(big, small)), us, them);
                }
            }
        }
    }

    /// A cursor for reading positions at increasing entries (see `SymCursor::seek`).
    pub fn cursor(&self) -> SymCursor {
        SymCursor {
            slice: *self,
            index: u64::MAX,
            class: 0,
            set: 0,
        }
    }

    /// The positions of entries `start..end` in order: one unrank, then a step to the next
    /// set per entry.
    pub fn positions(&self, start: u64, end: u64) -> impl Iterator<Item = (Bitboard, Bitboard)> {
        let mut class = start / self.per_class;
        let (big, free) = (self.big, self.free);
        let mut set = unrank_set(start % self.per_class, big, free);
        let last = 1u64 << free;
        let this = *self;
        (start..end).map(move |_| {
            let small = this.orbits.reps[class as usize];
            let out = this.sides(small, expand(set, small));
            set = next_set(set);
            if set >= last {
                set = (1 << big) - 1;
                class += 1;
            }
            out
        })
    }
}

/// Reads positions at increasing entries: a short way forward is walked set by set, a long way
/// is unranked.
pub struct SymCursor {
    slice: SymSlice,
    index: u64,
    class: u64,
    set: Bitboard,
}

impl SymCursor {
    /// The position of entry `index`; cheapest when it is a little above the previous one.
    #[inline]
    pub fn seek(&mut self, index: u64) -> (Bitboard, Bitboard) {
        const WALK: u64 = 48;
        let s = &self.slice;
        if self.index < index && index - self.index <= WALK {
            while self.index < index {
                self.set = next_set(self.set);
                if self.set >> s.free != 0 {
                    self.set = (1 << s.big) - 1;
                    self.class += 1;
                }
                self.index += 1;
            }
        } else {
            self.class = index / s.per_class;
            self.set = unrank_set(index % s.per_class, s.big, s.free);
            self.index = index;
        }
        let small = s.orbits.reps[self.class as usize];
        s.sides(small, expand(self.set, small))
    }
}

/// The cycles symmetry `g` splits the board's points into: (points it fixes, pairs it swaps).
fn cycles(board: Board, g: usize) -> (usize, usize) {
    let sym = Symmetries::new(board);
    let fixed = (0..board.size())
        .filter(|&p| sym.apply(g, 1 << p) == 1 << p)
        .count();
    (fixed, (board.size() - fixed) / 2)
}

/// The number of classes of the sets of `k` points of `board`, by Burnside's lemma, without
/// building the table of them (which for many points no machine holds).
pub fn classes_of_sets(board: Board, k: usize) -> u64 {
    let mut total: u128 = 0;
    for g in 0..SYMMETRIES {
        let (fixed, pairs) = cycles(board, g);
        for p in 0..=k / 2 {
            total += binomial(fixed, k - 2 * p) as u128 * binomial(pairs, p) as u128;
        }
    }
    (total / SYMMETRIES as u128) as u64
}

/// The number of entries a slice takes under the symmetric index, without building its
/// tables: what a build plans with.
pub fn entries(board: Board, material: Material) -> u64 {
    let (a, b) = (material.a as usize, material.b as usize);
    if a + b > board.size() {
        return u64::MAX;
    }
    let (small, big) = if a <= b { (a, b) } else { (b, a) };
    classes_of_sets(board, small).saturating_mul(binomial(board.size() - small, big))
}

/// The number of classes of positions of a slice under the board's four symmetries, by
/// Burnside's lemma (the mean number of positions each symmetry leaves unchanged): the size a
/// symmetric table needs at least, independent of how the index is laid out.
pub fn classes_of_positions(board: Board, material: Material) -> u128 {
    let (a, b) = (material.a as usize, material.b as usize);
    let mut total: u128 = 0;
    for g in 0..SYMMETRIES {
        // A position is unchanged by g when each cycle of points is all of one side or empty.
        let (fixed, pairs) = cycles(board, g);
        let c = |n: usize, k: usize| binomial(n, k) as u128;
        for pa in 0..=a / 2 {
            for pb in 0..=b / 2 {
                let (fa, fb) = (a - 2 * pa, b - 2 * pb);
                if fa + fb > fixed || pa + pb > pairs {
                    continue;
                }
                total += c(fixed, fa) * c(fixed - fa, fb) * c(pairs, pa) * c(pairs - pa, pb);
            }
        }
    }
    total / SYMMETRIES as u128
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::index::Slice;

    fn boards() -> Vec<Board> {
        ["3x3", "3x5", "5x5", "3x7", "5x9"]
            .iter()
            .map(|b| b.parse().unwrap())
            .collect()
    }

    /// Walking the big sets in blocks visits every entry once, with the position `unrank`
    /// gives it, in increasing order within a class and block.
    #[test]
    fn the_walk_by_big_sets_visits_every_entry_once() {
        let board: Board = "5x5".parse().unwrap();
        for m in ["2-3", "3-3", "3-2", "1-4"] {
            let slice = SymSlice::new(board, m.parse().unwrap()).unwrap();
            let mut seen = vec![false; slice.len() as usize];
            let sets = slice.big_sets();
            let mut first = 0;
            while first < sets {
                let mut last = None;
                slice.for_each_in_big_sets(first..(first + 7).min(sets), |class, i, us, them| {
                    assert_eq!(class, i / slice.per_class(), "{m}");
                    assert_eq!(slice.unrank(i), (us, them), "{m} entry {i}");
                    assert!(!seen[i as usize], "{m} entry {i} twice");
                    seen[i as usize] = true;
                    if let Some((c, j)) = last {
                        assert!(c < class || j < i, "{m}: {j} then {i}");
                    }
                    last = Some((class, i));
                });
                first += 7;
            }
            assert!(seen.iter().all(|&s| s), "{m}: an entry never visited");
        }
    }

    #[test]
    fn symmetries_move_points_as_the_board_does() {
        for board in boards() {
            let sym = Symmetries::new(board);
            let (rows, cols) = (board.rows(), board.cols());
            for p in 0..board.size() as u8 {
                let (c, r) = (board.col_of(p), board.row_of(p));
                let images = [
                    board.point(c, r),
                    board.point(cols - 1 - c, r),
                    board.point(c, rows - 1 - r),
                    board.point(cols - 1 - c, rows - 1 - r),
                ];
                for (g, &q) in images.iter().enumerate() {
                    assert_eq!(sym.apply(g, 1 << p), 1 << q, "{board} g{g} point {p}");
                    assert_eq!(board.is_strong(p), board.is_strong(q));
                }
            }
        }
    }

    #[test]
    fn squeeze_and_expand_are_inverse() {
        let holes = 0b1001_0100_0001u64;
        for set in [0u64, 0b10, 0b1110_0110_1010, 0b11_0000_0000_0000] {
            let set = set & !holes;
            assert_eq!(expand(squeeze(set, holes), holes), set);
        }
        assert_eq!(squeeze(0b1010, 0b0100), 0b110);
        assert_eq!(expand(0b110, 0b0100), 0b1010);
    }

    /// Every position of the paper's index taken to its class, the class named by the
    /// smallest paper index among its images: as many classes as Burnside counts, as many
    /// canonical entries, each position's entry a canonical one, and images share an entry.
    #[test]
    fn the_index_has_one_canonical_entry_per_class() {
        for board in boards() {
            let sym = Symmetries::new(board);
            for (a, b) in [
                (1, 1),
                (2, 1),
                (1, 2),
                (2, 2),
                (3, 1),
                (1, 3),
                (3, 2),
                (2, 3),
            ] {
                let m = Material::new(a, b).unwrap();
                if m.pieces() > board.size() {
                    continue;
                }
                let paper = Slice::new(board, m).unwrap();
                let ours = SymSlice::new(board, m).unwrap();
                let mut class_of_entry: HashMap<u64, u64> = HashMap::new();
                for (us, them) in paper.positions(0, paper.len()) {
                    let class = (0..SYMMETRIES)
                        .map(|g| paper.rank(sym.apply(g, us), sym.apply(g, them)))
                        .min()
                        .unwrap();
                    let entry = ours.rank(us, them);
                    assert!(entry < ours.len());
                    assert_eq!(
                        *class_of_entry.entry(entry).or_insert(class),
                        class,
                        "{board} {m}: entry {entry} holds two classes"
                    );
                    assert!(ours.is_canonical(entry), "{board} {m}");
                    let (u, t) = ours.unrank(entry);
                    assert_eq!(ours.rank(u, t), entry);
                }
                let classes: HashSet<u64> = class_of_entry.values().copied().collect();
                assert_eq!(class_of_entry.len(), classes.len(), "{board} {m}");
                assert_eq!(
                    classes.len() as u128,
                    classes_of_positions(board, m),
                    "{board} {m}"
                );
                let canonical = (0..ours.len()).filter(|&i| ours.is_canonical(i)).count();
                assert_eq!(canonical, classes.len(), "{board} {m}");
                // Sequential reading and the cursor agree with unranking.
                for (i, got) in (0..ours.len()).zip(ours.positions(0, ours.len())) {
                    assert_eq!(got, ours.unrank(i), "{board} {m} entry {i}");
                }
                let mut cursor = ours.cursor();
                let mut i = 0;
                while i < ours.len() {
                    assert_eq!(cursor.seek(i), ours.unrank(i), "{board} {m} entry {i}");
                    i += 1 + (i * 7919) % 97;
                }
            }
        }
    }

    #[test]
    fn sizes_on_5x9() {
        let board = Board::STANDARD;
        // Burnside over the whole 9-piece layer (computed independently when the tables
        // were planned): 112,988,136,462 classes against 451,943,198,850 positions.
        let nine: u128 = Material::with_pieces(9)
            .map(|m| classes_of_positions(board, m))
            .sum();
        assert_eq!(nine, 112_988_136_462);
        // The index spends 4% more than that on copies in symmetric classes (most in 8-1 and
        // 1-8, whose single piece has 15 classes for 45 points): 29.4 GB at 2 bits.
        let entries: u64 = Material::with_pieces(9)
            .map(|m| SymSlice::new(board, m).unwrap().len())
            .sum();
        assert_eq!(entries, 117_596_283_558);
        // The planning count agrees with the index's own, without its tables.
        for m in Material::with_pieces(9) {
            assert_eq!(
                super::entries(board, m),
                SymSlice::new(board, m).unwrap().len()
            );
        }
        assert!(super::entries(board, Material::new(22, 22).unwrap()) > 1 << 40);
        // The largest pair, 5-4 and 4-5.
        let s = SymSlice::new(board, Material::new(4, 5).unwrap()).unwrap();
        assert_eq!(Orbits::of(board, 4).len(), 37_637);
        assert_eq!(s.len(), 37_637 * 749_398);
    }

    #[test]
    fn samples_of_a_large_slice_round_trip() {
        let board = Board::STANDARD;
        let sym = Symmetries::new(board);
        for m in [(5, 4), (4, 5), (6, 2)] {
            let s = SymSlice::new(board, Material::new(m.0, m.1).unwrap()).unwrap();
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = x % s.len();
                let (us, them) = s.unrank(i);
                let r = s.rank(us, them);
                assert!(r == i || !s.is_canonical(i));
                for g in 0..SYMMETRIES {
                    assert_eq!(s.rank(sym.apply(g, us), sym.apply(g, them)), r);
                }
            }
        }
    }
}
