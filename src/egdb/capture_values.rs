//! The value of a position whose side to move must capture, from the smaller, finished
//! slices its captures lead to: what a build's first pass computes for most positions.

use crate::egdb::index::Material;
use crate::egdb::probe::Database;
use crate::egdb::scheme::Index;
use crate::egdb::wdl::{DRAW, LOSS, WIN, code_at};
use crate::movegen::for_each_child;
use crate::position::Position;

/// Captures of one position that `value` ranks before reading any of their values; a
/// position with more is valued one capture at a time.
const GATHERED: usize = 64;

/// The slices the captures of one material's positions lead to, found once for a whole pass.
/// A capture leaves the opponent, now to move, with fewer pieces against as many: from
/// slice a-b, to slices left-a for left below b. Finding the slice once a child (a lock, a
/// `Result`, its drop) took a ninth of a 9-piece first pass.
pub struct CaptureValues<'a> {
    material: Material,
    /// `after[left - 1]`: the codes and the index of slice left-a.
    after: Vec<(&'a [u8], &'a Index)>,
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
        Ok(CaptureValues { material, after })
    }

    /// The value code (`wdl::WIN`, `DRAW` or `LOSS`) of `pos`, of this material, whose side
    /// to move must capture.
    pub fn value(&self, pos: &Position) -> u8 {
        debug_assert_eq!(pos.us().count_ones(), self.material.a as u32);
        debug_assert_eq!(pos.them().count_ones(), self.material.b as u32);
        // All the captures are ranked before any value is read. The reads are then
        // independent loads side by side, which the processor keeps in flight together:
        // each is a cache and TLB miss in a slice of hundreds of megabytes, and one at a time
        // behind the move generator they cost ~300 ns each (`bench tables`: 4-5 positions
        // valued 1.5x as fast, 5-4 ones, which often win by their first capture, 5% slower).
        let mut ranks = [0u64; GATHERED];
        let mut slices = [0u8; GATHERED];
        let (mut n, mut took_all) = (0, false);
        for_each_child(pos, |c| {
            if took_all {
                return;
            }
            let left = c.us().count_ones() as usize;
            if left == 0 {
                took_all = true;
            } else if n < GATHERED {
                ranks[n] = self.after[left - 1].1.rank(c.us(), c.them());
                slices[n] = (left - 1) as u8;
            }
            n += 1;
        });
        if took_all {
            return WIN;
        }
        if n > GATHERED {
            return self.value_one_by_one(pos);
        }
        // LOSS until a move shows better.
        let mut best = LOSS;
        for (&rank, &s) in ranks[..n].iter().zip(&slices[..n]) {
            match code_at(self.after[s as usize].0, rank) {
                LOSS => return WIN,
                DRAW => best = DRAW,
                _ => {}
            }
        }
        best
    }

    /// `value`, reading each capture's value as it is generated.
    fn value_one_by_one(&self, pos: &Position) -> u8 {
        // LOSS until a move shows better.
        let mut best = LOSS;
        for_each_child(pos, |c| {
            if best == WIN {
                return;
            }
            let left = c.us().count_ones() as usize;
            let code = match left {
                0 => LOSS,
                _ => {
                    let (codes, index) = self.after[left - 1];
                    code_at(codes, index.rank(c.us(), c.them()))
                }
            };
            match code {
                LOSS => best = WIN,
                DRAW => best = DRAW,
                _ => {}
            }
        });
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
    use crate::movegen::capturing_pieces;
    use crate::position::Color;

    /// Every position with a capture of 5x5's 3-2 and 2-3 slices: the value of its captures
    /// gathered, one by one, and from each child probed through `Database`, all the same.
    #[test]
    fn gathered_captures_value_as_each_probed() {
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
        let mut counts = [0; 3];
        for m in [Material { a: 3, b: 2 }, Material { a: 2, b: 3 }] {
            let captures = CaptureValues::new(&db, m).unwrap();
            let paper = Index::new(Scheme::Paper, board, m).unwrap();
            for (us, them) in paper.positions(0, paper.len()) {
                let pos = Position::from_parts(board, us, them, Color::White);
                if capturing_pieces(&pos) == 0 {
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
                assert_eq!(captures.value(&pos), probed, "{pos:?}");
                assert_eq!(captures.value_one_by_one(&pos), probed, "{pos:?}");
                counts[probed as usize] += 1;
            }
        }
        // Wins, draws and losses all met.
        assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    }
}
