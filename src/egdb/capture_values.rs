//! The value of a position whose side to move must capture, from the smaller, finished
//! slices its captures lead to: what a build's first pass computes for most positions.

use crate::egdb::index::Material;
use crate::egdb::probe::Database;
use crate::egdb::scheme::Index;
use crate::egdb::wdl::{DRAW, LOSS, WIN, code_at};
use crate::geometry::Bitboard;
use crate::movegen::{capturing_pieces, try_for_each_capture};
use crate::position::Position;

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
    /// to move must capture; `None` if it has no capture. `reads` is the caller's to reuse
    /// from one position to the next, so that nothing is allocated or cleared a position.
    pub fn value(&self, pos: &Position, reads: &mut Vec<(u64, usize)>) -> Option<u8> {
        debug_assert_eq!(pos.us().count_ones(), self.material.a as u32);
        debug_assert_eq!(pos.them().count_ones(), self.material.b as u32);
        let starts = capturing_pieces(pos);
        if starts == 0 {
            return None;
        }
        Some(match self.reads {
            Reads::FirstWin => self.first_win(pos, starts),
            Reads::Gathered => self.gathered(pos, starts, reads),
        })
    }

    /// The codes of the slice of a capture's result `c`, where the opponent, to move, has
    /// `left` pieces, and its entry there.
    #[inline(always)]
    fn rank(&self, c: &Position, left: usize) -> (&'a [u8], u64) {
        let (codes, index) = self.after[left - 1];
        (codes, index.rank(c.us(), c.them()))
    }

    fn first_win(&self, pos: &Position, starts: Bitboard) -> u8 {
        // LOSS until a move shows better.
        let mut best = LOSS;
        let stopped = !try_for_each_capture(pos, starts, |m| {
            let c = pos.after(m.from, m.to(), m.captured);
            let code = match c.us().count_ones() as usize {
                0 => LOSS,
                left => {
                    let (codes, rank) = self.rank(&c, left);
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

    fn gathered(&self, pos: &Position, starts: Bitboard, reads: &mut Vec<(u64, usize)>) -> u8 {
        reads.clear();
        let took_all = !try_for_each_capture(pos, starts, |m| {
            let c = pos.after(m.from, m.to(), m.captured);
            match c.us().count_ones() as usize {
                0 => return false,
                left => reads.push((self.rank(&c, left).1, left - 1)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egdb::build::{BuildOptions, build};
    use crate::egdb::scheme::Scheme;
    use crate::egdb::wdl::Wdl;
    use crate::geometry::Board;
    use crate::movegen::for_each_child;
    use crate::position::Color;

    /// Every position of 5x5's 3-2 and 2-3 slices: valued both ways as its children probed
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
        let (mut counts, mut reads) = ([0; 3], Vec::new());
        for m in [Material { a: 3, b: 2 }, Material { a: 2, b: 3 }] {
            let ways = [Reads::FirstWin, Reads::Gathered]
                .map(|r| CaptureValues::new(&db, m).unwrap().reading(r));
            let paper = Index::new(Scheme::Paper, board, m).unwrap();
            for (us, them) in paper.positions(0, paper.len()) {
                let pos = Position::from_parts(board, us, them, Color::White);
                let values = ways.each_ref().map(|w| w.value(&pos, &mut reads));
                if capturing_pieces(&pos) == 0 {
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
