//! The value of a position whose side to move must capture, from the smaller, finished
//! slices its captures lead to: what a build's first pass computes for most positions.

use crate::egdb::index::Material;
use crate::egdb::probe::Database;
use crate::egdb::scheme::Index;
use crate::egdb::wdl::{DRAW, LOSS, WIN, code_at};
use crate::movegen::{capturing_pieces, for_each_capture};
use crate::position::Position;

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
        // All the captures are ranked before any value is read. The reads are then
        // independent loads side by side, which the processor keeps in flight together:
        // each is a cache and TLB miss in a slice of hundreds of megabytes, and one at a time
        // behind the move generator they cost ~300 ns each (`bench tables`: 4-5 positions
        // valued 1.5x as fast, 5-4 ones, which often win by their first capture, 5% slower).
        reads.clear();
        let mut took_all = false;
        for_each_capture(pos, starts, |m| {
            if took_all {
                return;
            }
            let c = pos.after(m.from, m.to(), m.captured);
            match c.us().count_ones() as usize {
                0 => took_all = true,
                left => reads.push((self.after[left - 1].1.rank(c.us(), c.them()), left - 1)),
            }
        });
        if took_all {
            return Some(WIN);
        }
        // LOSS until a move shows better.
        let mut best = LOSS;
        for &(rank, s) in reads.iter() {
            match code_at(self.after[s].0, rank) {
                LOSS => return Some(WIN),
                DRAW => best = DRAW,
                _ => {}
            }
        }
        Some(best)
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

    /// Every position of 5x5's 3-2 and 2-3 slices: valued as its children probed through
    /// `Database` say where it has a capture, `None` where it has none.
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
        let (mut counts, mut reads) = ([0; 3], Vec::new());
        for m in [Material { a: 3, b: 2 }, Material { a: 2, b: 3 }] {
            let captures = CaptureValues::new(&db, m).unwrap();
            let paper = Index::new(Scheme::Paper, board, m).unwrap();
            for (us, them) in paper.positions(0, paper.len()) {
                let pos = Position::from_parts(board, us, them, Color::White);
                let value = captures.value(&pos, &mut reads);
                if capturing_pieces(&pos) == 0 {
                    assert_eq!(value, None);
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
                assert_eq!(value, Some(probed), "{pos:?}");
                counts[probed as usize] += 1;
            }
        }
        // Wins, draws and losses all met.
        assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    }
}
