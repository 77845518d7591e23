//! Verification: every entry re-derived from its successors (one-ply consistency), on top
//! of the header and checksum checks done when a file is opened. Distances, where kept, are
//! checked the same way, which also pins down the values: a win must be one ply before a
//! loss, so no cycle of positions can pass as wins.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::parallel::{self, for_chunks};
use crate::probe::Database;
use crate::scheme::Index;
use crate::wdl::{Wdl, code_at};
use fanorona_rules::movegen::{for_each_child, has_capture};
use fanorona_rules::position::{Color, Position};

/// At most this many mismatches are kept for the report.
const KEEP: usize = 10;

/// One entry whose stored value differs from what its successors say.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub index: u64,
    pub position: Position,
    pub stored: String,
    pub derived: String,
}

/// The result of verifying one slice.
#[derive(Debug, Clone)]
pub struct SliceCheck {
    pub positions: u64,
    pub mismatches: u64,
    pub first: Vec<Mismatch>,
}

/// Re-derives every entry of `slice` (whose value file holds `payload`, and distance file
/// `distances` if there is one) from its successors in `db`: a win if some move reaches a
/// loss (or takes the last piece), a loss if every move reaches a win (or there is no move),
/// else a draw; a paika win one ply more than its nearest lost successor, a paika loss one
/// more than its farthest won one, a capture or the end 0 plies away.
pub fn verify_slice(
    db: &Database,
    slice: &Index,
    payload: &[u8],
    distances: Option<&[u8]>,
    threads: usize,
) -> SliceCheck {
    let len = slice.len();
    let found = Found::default();
    for_chunks(
        len,
        parallel::POSITIONS,
        threads,
        |_| {},
        |range| {
            for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                found.check(db, slice, payload, distances, i, us, them);
            }
        },
    );
    found.into_check(len)
}

/// `verify_slice` on `count` entries drawn at random (the same ones every run: a fixed
/// seed), for slices too large to check whole; `positions` reports the sample's size.
pub fn verify_sample(
    db: &Database,
    slice: &Index,
    payload: &[u8],
    count: u64,
    threads: usize,
) -> SliceCheck {
    let len = slice.len();
    if count >= len {
        return verify_slice(db, slice, payload, None, threads);
    }
    let found = Found::default();
    for_chunks(
        count,
        parallel::POSITIONS,
        threads,
        |_| {},
        |range| {
            for k in range {
                // splitmix64 of the draw's number: independent of the threads' split.
                let mut z = k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                let i = (z ^ (z >> 31)) % len;
                let (us, them) = slice.unrank(i);
                found.check(db, slice, payload, None, i, us, them);
            }
        },
    );
    found.into_check(count)
}

/// The mismatches found so far, by every thread.
#[derive(Default)]
struct Found {
    mismatches: AtomicU64,
    first: Mutex<Vec<Mismatch>>,
}

impl Found {
    /// Checks entry `i` (the position `us` against `them`) against its successors.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        db: &Database,
        slice: &Index,
        payload: &[u8],
        distances: Option<&[u8]>,
        i: u64,
        us: u64,
        them: u64,
    ) {
        let pos = Position::from_parts(slice.board(), us, them, Color::White);
        let stored = Wdl::from_code(code_at(payload, i));
        let derived = derive(db, &pos);
        let mut wrong =
            (derived != stored).then(|| (format!("{stored:?}"), format!("{derived:?}")));
        if wrong.is_none()
            && let (Some(d), Some(v)) = (distances, stored)
        {
            let age = d[i as usize];
            let expected = derive_age(db, &pos, v);
            if expected != Some(age) && age != 255 {
                wrong = Some((format!("distance byte {age}"), format!("{expected:?}")));
            }
        }
        if let Some((stored, derived)) = wrong {
            self.mismatches.fetch_add(1, Ordering::Relaxed);
            let mut f = self.first.lock().expect("no thread panics holding it");
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

    fn into_check(self, positions: u64) -> SliceCheck {
        let mut first = self
            .first
            .into_inner()
            .expect("no thread panics holding it");
        first.sort_by_key(|m| m.index);
        SliceCheck {
            positions,
            mismatches: self.mismatches.into_inner(),
            first,
        }
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

/// The distance byte `pos` (worth `value`) should hold: 0 for a draw, 1 for a capture or the
/// end, else 1 + the plies of the best successor as the winner hurries and the loser delays.
fn derive_age(db: &Database, pos: &Position, value: Wdl) -> Option<u8> {
    let mut children = Vec::new();
    for_each_child(pos, |c| children.push(c));
    if value == Wdl::Draw {
        return Some(0);
    }
    if children.is_empty() || has_capture(pos) {
        return Some(1);
    }
    // Paika: successors stay in the paired slice, whose bytes hold 1 + plies.
    let plies = |c: &Position| db.distance(c);
    let best = match value {
        Wdl::Win => children
            .iter()
            .filter(|c| db.probe(c) == Some(Wdl::Loss))
            .filter_map(plies)
            .min()?,
        _ => children.iter().filter_map(plies).max()?,
    };
    // Plies from here = 1 + plies from the successor; the byte holds 1 + plies.
    Some((best + 2).min(255) as u8)
}
