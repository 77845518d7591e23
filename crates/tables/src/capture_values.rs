//! The value of a position whose side to move must capture, from the smaller, finished
//! slices its captures lead to: what a build's first pass computes for most positions.

use crate::index::Material;
use crate::probe::Database;
use crate::scheme::Index;
use crate::symmetric::{SmallClass, SymSlice};
use crate::wdl::{DRAW, LOSS, WIN, code_at};
use fanorona_rules::geometry::{Bitboard, Board};
use fanorona_rules::movegen::{CaptureStarts, MoveRef, capture_starts, try_for_each_capture};
use fanorona_rules::position::Position;

/// How a position's captures are valued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Each capture read as soon as it is generated, and the walk stopped at the first that
    /// wins: cheapest where most positions win by their first capture or so.
    FirstWin,
    /// All the captures ranked before any value is read. The reads are then independent
    /// loads side by side, which the processor keeps in flight together: each is a cache and
    /// TLB miss in a slice of hundreds of megabytes, and one at a time they cost ~300 ns
    /// each. Cheapest where few positions win.
    Gathered,
}

/// The slices the captures of one material's positions lead to, found once for a whole pass.
/// A capture leaves the opponent, now to move, with fewer pieces against as many: from
/// slice a-b, to slices left-a for left below b. Finding the slice once a child (a lock, a
/// `Result`, its drop) took a ninth of a 9-piece first pass.
#[derive(Clone)]
pub struct CaptureValues<'a> {
    material: Material,
    /// `after[left - 1]`: the codes and the index of slice left-a.
    after: Vec<(&'a [u8], &'a Index)>,
    reads: Reads,
}

impl<'a> CaptureValues<'a> {
    /// For positions of `material` over `db`; `Err` names a slice their captures lead to that
    /// is not built or cannot be opened.
    pub fn new(db: &'a Database, material: Material) -> Result<CaptureValues<'a>, Material> {
        let after = (1..material.b)
            .map(|left| {
                let m = Material {
                    a: left,
                    b: material.a,
                };
                match db.slice(m) {
                    Ok(Some(file)) => Ok((file.payload(), &file.slice)),
                    _ => Err(m),
                }
            })
            .collect::<Result<_, _>>()?;
        // The side with more pieces mostly wins by its first capture or so (sampled over 5x9's
        // 9-piece slices: 98% of 6-3's capture positions win, by their 1.2th capture on
        // average; 85% of 5-4's, by the 1.8th), the side with fewer seldom (4-5: 50%, 3-6: 18%).
        let reads = if material.a > material.b {
            Reads::FirstWin
        } else {
            Reads::Gathered
        };
        Ok(CaptureValues {
            material,
            after,
            reads,
        })
    }

    /// The same, valuing captures as `reads` says (to compare the two ways).
    pub fn reading(self, reads: Reads) -> CaptureValues<'a> {
        CaptureValues { reads, ..self }
    }

    /// The value code (`wdl::WIN`, `DRAW` or `LOSS`) of `pos`, of this material, if its side
    /// to move must capture; `None` if it has no capture. `scratch` is the caller's to reuse
    /// from one position to the next, so that nothing is allocated or cleared a position.
    pub fn value(&self, pos: &Position, scratch: &mut Scratch) -> Option<u8> {
        debug_assert_eq!(pos.us().count_ones(), self.material.a as u32);
        debug_assert_eq!(pos.them().count_ones(), self.material.b as u32);
        let starts = capture_starts(pos);
        if starts.pieces() == 0 {
            return None;
        }
        scratch.ranks.start(pos);
        Some(match self.reads {
            Reads::FirstWin => self.first_win(pos, &starts, &mut scratch.ranks),
            Reads::Gathered => self.gathered(pos, &starts, scratch),
        })
    }

    /// The codes of the slice that capture `m` of `pos` leads to, where the opponent, to
    /// move, has `left` pieces, and its entry there.
    #[inline(always)]
    fn rank(
        &self,
        pos: &Position,
        m: &MoveRef,
        left: usize,
        ranks: &mut ChildRanks,
    ) -> (&'a [u8], u64) {
        let (codes, index) = self.after[left - 1];
        let rank = match index {
            Index::Symmetric(slice) => ranks.rank(slice, pos, m.from, m.to(), m.captured),
            Index::Paper(_) => {
                let c = pos.after(m.from, m.to(), m.captured);
                index.rank(c.us(), c.them())
            }
        };
        (codes, rank)
    }

    fn first_win(&self, pos: &Position, starts: &CaptureStarts, ranks: &mut ChildRanks) -> u8 {
        // LOSS until a move shows better.
        let mut best = LOSS;
        let stopped = !try_for_each_capture(pos, starts, |m| {
            let code = match (pos.them() & !m.captured).count_ones() as usize {
                0 => LOSS,
                left => {
                    let (codes, rank) = self.rank(pos, &m, left, ranks);
                    code_at(codes, rank)
                }
            };
            match code {
                LOSS => return false,
                DRAW => best = DRAW,
                _ => {}
            }
            true
        });
        if stopped { WIN } else { best }
    }

    fn gathered(&self, pos: &Position, starts: &CaptureStarts, scratch: &mut Scratch) -> u8 {
        let Scratch { reads, ranks } = scratch;
        reads.clear();
        let took_all = !try_for_each_capture(pos, starts, |m| {
            match (pos.them() & !m.captured).count_ones() as usize {
                0 => return false,
                left => reads.push((self.rank(pos, &m, left, ranks).1, left - 1)),
            }
            true
        });
        if took_all {
            return WIN;
        }
        // LOSS until a move shows better.
        let mut best = LOSS;
        for &(rank, s) in reads.iter() {
            match code_at(self.after[s].0, rank) {
                LOSS => return WIN,
                DRAW => best = DRAW,
                _ => {}
            }
        }
        best
    }
}

/// What valuing positions one after another keeps from one position to the next, so that
/// nothing is allocated or cleared a position: one per thread, or per chunk of work (24 kB,
/// filled once).
pub struct Scratch {
    /// The captures' entries, gathered before they are read.
    reads: Vec<(u64, usize)>,
    ranks: ChildRanks,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            reads: Vec::new(),
            ranks: ChildRanks {
                board: None,
                classes: vec![(EMPTY, SmallClass::default()); CLASS_SLOTS].into_boxed_slice(),
                sides: [0; 2],
                images: [[0; 2]; 4],
                imaged: 0,
            },
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

/// Ranking a capture's result in a symmetric slice, where it is classed by its small set:
/// what the capture leaves of the opponent, or the side that moved. In a first pass one of
/// the two sides stays the same over long runs of positions (the small set of a class's
/// entries, or a block of big sets), so the small sets captures make are few, and their
/// classes are kept. The images of the position's sides under the symmetries are taken once
/// a position: a symmetry maps points one to one, so the image of a side after a capture is
/// the image before with the points the capture changed changed. A first pass over 4-5
/// spent a quarter of its time in `SymSlice::rank`.
struct ChildRanks {
    /// The board the classes are of.
    board: Option<Board>,
    /// Small sets and their classes, direct-mapped by set (`EMPTY` an empty slot).
    classes: Box<[(Bitboard, SmallClass)]>,
    /// The sides of the position being valued (side to move first), and their images under
    /// the symmetries whose bit is set in `imaged`.
    sides: [Bitboard; 2],
    images: [[Bitboard; 2]; 4],
    imaged: u8,
}

/// Slots of `ChildRanks::classes` (24 bytes each): a block of 32 big sets of 5 points (4-5's
/// first pass) leaves at most 32 x 30 small sets.
const CLASS_SLOTS: usize = 1 << 10;
/// No set has 64 points: boards have at most 46.
const EMPTY: Bitboard = u64::MAX;

impl ChildRanks {
    /// Ready for the captures of `pos`.
    #[inline(always)]
    fn start(&mut self, pos: &Position) {
        let board = pos.board();
        if self.board != Some(board) {
            self.classes.fill((EMPTY, SmallClass::default()));
            self.board = Some(board);
        }
        self.sides = [pos.us(), pos.them()];
        self.images[0] = self.sides;
        self.imaged = 1;
    }

    /// The entry in `slice` of the result of the capture from `from` to `to` taking
    /// `captured` in the position given to `start`.
    #[inline(always)]
    fn rank(
        &mut self,
        slice: &SymSlice,
        pos: &Position,
        from: u8,
        to: u8,
        captured: Bitboard,
    ) -> u64 {
        if slice.small_is_us() {
            // The opponent, now to move, is the small set: what the capture leaves of it.
            let c = self.class(slice, pos.them() & !captured);
            slice.rank_in_class(&c, self.moved_image(slice, c.g as usize, from, to))
        } else {
            // The side that moved is the small set.
            let c = self.class(slice, (pos.us() & !(1 << from)) | 1 << to);
            slice.rank_in_class(&c, self.left_image(slice, c.g as usize, captured))
        }
    }

    /// The class of `small` in `slice` (whose small side it is).
    #[inline(always)]
    fn class(&mut self, slice: &SymSlice, small: Bitboard) -> SmallClass {
        let slot =
            (small.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CLASS_SLOTS.ilog2())) as usize;
        let (set, c) = &mut self.classes[slot];
        if *set != small {
            *set = small;
            *c = slice.class_of(small);
        }
        *c
    }

    /// The images of the position's sides under symmetry `g`.
    #[inline(always)]
    fn images(&mut self, slice: &SymSlice, g: usize) -> [Bitboard; 2] {
        if self.imaged >> g & 1 == 0 {
            let sym = slice.symmetries();
            self.images[g] = self.sides.map(|side| sym.apply(g, side));
            self.imaged |= 1 << g;
        }
        self.images[g]
    }

    /// The image under symmetry `g` of the side to move's pieces after a move from `from` to
    /// `to`.
    #[inline(always)]
    fn moved_image(&mut self, slice: &SymSlice, g: usize, from: u8, to: u8) -> Bitboard {
        let sym = slice.symmetries();
        (self.images(slice, g)[0] & !sym.point(g, from)) | sym.point(g, to)
    }

    /// The image under symmetry `g` of what capturing `captured` leaves of the opponent.
    #[inline(always)]
    fn left_image(&mut self, slice: &SymSlice, g: usize, captured: Bitboard) -> Bitboard {
        self.images(slice, g)[1] & !slice.symmetries().apply(g, captured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{BuildOptions, build};
    use crate::scheme::Scheme;
    use crate::wdl::Wdl;
    use fanorona_rules::geometry::Board;
    use fanorona_rules::movegen::for_each_child;
    use fanorona_rules::position::Color;

    /// The ranks a first pass takes from its cache of classes and the images of the sides
    /// are the slices' own, for every capture of sampled positions of every slice of 3 to 9
    /// pieces, on 5x9 and 5x5 in turn through one cache (which must start over at each
    /// change of board), the cache shared from one position to the next as a pass shares it.
    #[test]
    fn cached_ranks_are_the_slices_ranks() {
        let mut ranks = Scratch::new().ranks;
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        // Captures checked whose result is classed by what is left of the opponent, and by
        // the side that moved.
        let mut checked = [0u64; 2];
        for m in (3..=9).flat_map(Material::with_pieces) {
            for board in [Board::STANDARD, Board::new(5, 5).unwrap()] {
                let paper = Index::new(Scheme::Paper, board, m).unwrap();
                // Runs of positions with the same opponent's set, as a pass meets them.
                for _ in 0..150 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let start = x % paper.len();
                    for (us, them) in paper.positions(start, (start + 8).min(paper.len())) {
                        let pos = Position::from_parts(board, us, them, Color::White);
                        ranks.start(&pos);
                        try_for_each_capture(&pos, &capture_starts(&pos), |mv| {
                            let left = (them & !mv.captured).count_ones() as u8;
                            if left == 0 {
                                return true;
                            }
                            let child = SymSlice::new(board, Material { a: left, b: m.a })
                                .expect("a capture's result fits the board");
                            let c = pos.after(mv.from, mv.to(), mv.captured);
                            assert_eq!(
                                ranks.rank(&child, &pos, mv.from, mv.to(), mv.captured),
                                child.rank(c.us(), c.them()),
                                "{pos:?}: from {} to {}",
                                mv.from,
                                mv.to()
                            );
                            checked[usize::from(!child.small_is_us())] += 1;
                            true
                        });
                    }
                }
            }
        }
        assert!(checked.iter().all(|&n| n > 5_000), "{checked:?} captures");
    }

    /// Every position of 5x5's 3-2, 2-3 and 1-3 slices: valued both ways as its children probed
    /// through `Database` say where it has a capture, `None` where it has none.
    #[test]
    fn both_ways_value_captures_as_each_probed() {
        let board = Board::new(5, 5).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = BuildOptions {
            threads: 2,
            progress: false,
            distances: false,
            report_every: None,
            index: Scheme::Symmetric,
            checkpoint_every: None,
        };
        build(dir.path(), board, 4, &options, &mut |_| {}).unwrap();
        let db = Database::new(dir.path(), board);
        let (mut counts, mut reads) = ([0; 3], Scratch::new());
        // 1-3's captures lead to slices classed by the side that moved, the others' by what is
        // left of the opponent.
        for m in ["3-2", "2-3", "1-3"].map(|m| m.parse::<Material>().unwrap()) {
            let ways = [Reads::FirstWin, Reads::Gathered]
                .map(|r| CaptureValues::new(&db, m).unwrap().reading(r));
            let paper = Index::new(Scheme::Paper, board, m).unwrap();
            for (us, them) in paper.positions(0, paper.len()) {
                let pos = Position::from_parts(board, us, them, Color::White);
                let values = ways.each_ref().map(|w| w.value(&pos, &mut reads));
                if capture_starts(&pos).pieces() == 0 {
                    assert_eq!(values, [None, None]);
                    continue;
                }
                let mut probed = LOSS;
                for_each_child(&pos, |c| {
                    probed = match (probed, db.probe_sides(c.us(), c.them()).unwrap()) {
                        (WIN, _) | (_, Wdl::Loss) => WIN,
                        (_, Wdl::Draw) => DRAW,
                        (best, Wdl::Win) => best,
                    }
                });
                assert_eq!(values, [Some(probed); 2], "{pos:?}");
                counts[probed as usize] += 1;
            }
        }
        // Wins, draws and losses all met.
        assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    }
}
