//! Verification: every entry re-derived from its successors (one-ply consistency), on top
//! of the header and checksum checks done when a file is opened.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::egdb::index::Slice;
use crate::egdb::parallel::for_chunks;
use crate::egdb::probe::Database;
use crate::egdb::wdl::{Wdl, code_at};
use crate::movegen::for_each_child;
use crate::position::{Color, Position};

/// At most this many mismatches are kept for the report.
const KEEP: usize = 10;

/// One entry whose stored value differs from what its successors say.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub index: u64,
    pub position: Position,
    pub stored: Option<Wdl>,
    pub derived: Option<Wdl>,
}

/// The result of verifying one slice.
#[derive(Debug, Clone)]
pub struct SliceCheck {
    pub positions: u64,
    pub mismatches: u64,
    pub first: Vec<Mismatch>,
}

/// Re-derives every entry of `slice` (whose file `payload` holds) from the values of its
/// successors in `db`: a win if some move reaches a loss (or takes the last piece), a loss if
/// every move reaches a win (or there is no move), else a draw.
pub fn verify_slice(db: &Database, slice: &Slice, payload: &[u8], threads: usize) -> SliceCheck {
    let len = slice.len();
    let mismatches = AtomicU64::new(0);
    let first = Mutex::new(Vec::new());
    for_chunks(
        len,
        threads,
        |_| {},
        |range| {
            for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                let pos = Position::from_parts(slice.board, us, them, Color::White);
                let derived = derive(db, &pos);
                let stored = Wdl::from_code(code_at(payload, i));
                if derived != stored {
                    mismatches.fetch_add(1, Ordering::Relaxed);
                    let mut f = first.lock().expect("no thread panics holding it");
                    if f.len() < KEEP {
                        f.push(Mismatch {
                            index: i,
                            position: pos,
                            stored,
                            derived,
                        });
                    }
                }
            }
        },
    );
    let mut first = first.into_inner().expect("no thread panics holding it");
    first.sort_by_key(|m| m.index);
    SliceCheck {
        positions: len,
        mismatches: mismatches.into_inner(),
        first,
    }
}

/// The value one ply of search over the tables gives; None if a successor's slice is missing.
fn derive(db: &Database, pos: &Position) -> Option<Wdl> {
    let mut any = false;
    let mut missing = false;
    let mut best = Wdl::Loss;
    for_each_child(pos, |c| {
        any = true;
        match db.probe_sides(c.us(), c.them()) {
            None => missing = true,
            Some(Wdl::Loss) => best = Wdl::Win,
            Some(Wdl::Draw) if best == Wdl::Loss => best = Wdl::Draw,
            Some(_) => {}
        }
    });
    if !any {
        return Some(Wdl::Loss);
    }
    if missing && best != Wdl::Win {
        return None;
    }
    Some(best)
}
