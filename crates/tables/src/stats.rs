//! Win, draw and loss counts per slice, in the paper's Table 3 convention: each class of
//! positions under the board's mirror symmetries (left-right, top-bottom, and the 180-degree
//! turn that combines them) counts once, and positions that the 180-degree turn leaves
//! unchanged are not counted at all.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::index::Slice;
use crate::parallel::{self, for_chunks};
use crate::scheme::Index;
use crate::symmetric::{SymSlice, Symmetries};
use crate::wdl::code_at;
use fanorona_rules::geometry::Bitboard;

/// Counts of one slice: `[win, draw, loss]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub win: u64,
    pub draw: u64,
    pub loss: u64,
}

/// Table 3's counts of a slice from its payload, on `threads` threads; `None` if the table
/// gives mirror images different values (it is damaged: `db verify` finds where).
pub fn table3_counts(slice: &Index, payload: &[u8], threads: usize) -> Option<Counts> {
    match slice {
        Index::Paper(s) => paper_counts(s, payload, threads),
        Index::Symmetric(s) => symmetric_counts(s, payload, threads),
    }
}

/// Counts under the symmetric index: each canonical entry is one class already; a copy must
/// hold its canonical entry's value (the counterpart of the classes dividing evenly).
fn symmetric_counts(slice: &SymSlice, payload: &[u8], threads: usize) -> Option<Counts> {
    let counts: [AtomicU64; 3] = Default::default();
    let bad = AtomicU64::new(0);
    let turn = |set| slice.symmetries().apply(3, set);
    for_chunks(
        slice.len(),
        parallel::POSITIONS,
        threads,
        |_| {},
        |range| {
            let mut c = [0u64; 3];
            let mut wrong = 0;
            for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                let code = code_at(payload, i);
                if slice.class_is_symmetric(i / slice.per_class()) {
                    let canonical = slice.rank(us, them);
                    if canonical != i {
                        wrong += u64::from(code_at(payload, canonical) != code);
                        continue;
                    }
                }
                if code > 2 || (turn(us) == us && turn(them) == them) {
                    continue;
                }
                c[code as usize] += 1;
            }
            for (total, n) in counts.iter().zip(c) {
                total.fetch_add(n, Ordering::Relaxed);
            }
            bad.fetch_add(wrong, Ordering::Relaxed);
        },
    );
    let get = |c: usize| counts[c].load(Ordering::Relaxed);
    (bad.into_inner() == 0).then(|| Counts {
        win: get(1),
        draw: get(0),
        loss: get(2),
    })
}

fn paper_counts(slice: &Slice, payload: &[u8], threads: usize) -> Option<Counts> {
    let sym = Symmetries::new(slice.board);
    let image = |g: usize, us: Bitboard, them: Bitboard| (sym.apply(g, us), sym.apply(g, them));
    // Per value: positions in classes of 4 and positions in classes of 2 (fixed by exactly
    // one mirror; fixed by both means fixed by the turn, which is left out).
    let quads: [AtomicU64; 3] = Default::default();
    let pairs: [AtomicU64; 3] = Default::default();
    for_chunks(
        slice.len(),
        parallel::POSITIONS,
        threads,
        |_| {},
        |range| {
            let mut q = [0u64; 3];
            let mut p = [0u64; 3];
            for (i, (us, them)) in range.clone().zip(slice.positions(range.start, range.end)) {
                let fixed_lr = image(1, us, them) == (us, them);
                let fixed_tb = image(2, us, them) == (us, them);
                let turned = image(3, us, them);
                if turned == (us, them) {
                    continue;
                }
                let code = code_at(payload, i) as usize;
                if code > 2 {
                    continue;
                }
                if fixed_lr || fixed_tb {
                    p[code] += 1;
                } else {
                    q[code] += 1;
                }
            }
            for c in 0..3 {
                quads[c].fetch_add(q[c], Ordering::Relaxed);
                pairs[c].fetch_add(p[c], Ordering::Relaxed);
            }
        },
    );
    // Codes: 0 draw, 1 win, 2 loss. Mirror images share a value, so the classes divide
    // evenly; anything else means the table is not symmetric, which no sound table is.
    let class = |c: usize| {
        let (q, p) = (
            quads[c].load(Ordering::Relaxed),
            pairs[c].load(Ordering::Relaxed),
        );
        (q % 4 == 0 && p % 2 == 0).then_some(q / 4 + p / 2)
    };
    Some(Counts {
        win: class(1)?,
        draw: class(0)?,
        loss: class(2)?,
    })
}
