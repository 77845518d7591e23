//! The first pass over a slice: captures from the smaller slices, positions without a
//! move and copies valued, in the order `PassOrder` gives, its mark saved as it goes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::build::{BuildError, capture_values, progress_bar};
use crate::capture_values::{CaptureValues, Scratch};
use crate::file::FileError;
use crate::probe::Database;
use crate::symmetric::SymSlice;
use crate::wdl::{DRAW, LOSS};
use fanorona_rules::geometry::Bitboard;
use fanorona_rules::machine::own_cpu_seconds;
use fanorona_rules::position::{Color, Position};

use super::order::PassOrder;
use super::state::State;
use super::{Pair, SETTLED};

pub(super) type Save<'s> = dyn FnMut(&mut State, &Pair) -> Result<(), FileError> + 's;

impl Pair<'_> {
    /// Pass 1 over slice `x`, from its mark, in the order `PassOrder::of` gives it: captures
    /// from the smaller slices, positions without a move, copies; the mark saved as it goes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn first_pass(
        &self,
        db: &Database,
        x: usize,
        state: &mut State,
        save: &mut Save<'_>,
        label: &str,
        name: &str,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), BuildError> {
        let slice = &self.slices[x];
        let values = &self.values[x];
        let order = PassOrder::of(slice.material);
        if state.big_sets_done.len() != self.slices.len() {
            state.big_sets_done = vec![0; self.slices.len()];
        }
        if order == PassOrder::BigSets {
            // A mark of a pass in the order of the entries means nothing here; the entries
            // it covered are written again with the same codes.
            state.first_pass[x] = 0;
        }
        let (units, chunk) = order.units(slice);
        let from = state.mark(x, order);
        let (len, start, cpu) = (slice.len(), Instant::now(), own_cpu_seconds());
        let captures = capture_values(db, slice.material)?;
        let bar = progress_bar(self.options, len, &format!("{label} first pass {name}"));
        bar.set_position(state.first_pass_done(x, slice) as u64);
        let entries = AtomicU64::new(0);
        let work = |range: std::ops::Range<u64>| {
            let (mut reads, mut visited) = (Scratch::new(), 0);
            // The codes of one word, written together: in either order the entries of a
            // chunk come mostly as increasing neighbours.
            let (mut word, mut bits) = (u64::MAX, 0u64);
            order.walk(slice, range, |class, i, us, them| {
                visited += 1;
                if let Some(code) = first_code(slice, &captures, class, i, us, them, &mut reads) {
                    if i >> 5 != word {
                        values.or_word(word, bits);
                        (word, bits) = (i >> 5, 0);
                    }
                    bits |= (code as u64) << (2 * (i & 31));
                }
            });
            values.or_word(word, bits);
            bar.inc(visited);
            entries.fetch_add(visited, Ordering::Relaxed);
        };
        chunks_with_marks(
            from,
            units,
            self.threads,
            chunk,
            &work,
            |_| {},
            self.checkpoint_every(),
            |done| {
                state.set_mark(x, order, done);
                save(state, self)?;
                // To a log file, where there is no bar: how far, how fast, how long still.
                if self.options.report_every.is_some() {
                    let rate =
                        entries.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
                    let left = len as f64 * (units - done) as f64 / units.max(1) as f64;
                    log(&format!(
                        "{label} first pass {name}{}: {:.1}% ({done} of {units} {}), {rate:.0} entries/s, eta {:.0} s",
                        order.by(),
                        100.0 * done as f64 / units.max(1) as f64,
                        order.unit(),
                        left / rate.max(1e-9)
                    ));
                }
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        state.set_mark(x, order, units);
        state.first_pass[x] = len;
        save(state, self)?;
        log(&format!(
            "{label}: first pass {name} {:.2} s (processor {:.1} s)",
            start.elapsed().as_secs_f64(),
            own_cpu_seconds() - cpu
        ));
        Ok(())
    }
}

/// The first pass's work over at least `count` entries of `slice` (fewer at its end) from
/// about `at` (a share of the slice, 0 to 1), in `order`, with the capture values
/// `captures`; nothing written. Returns the entries valued and the sum of their codes (so
/// that none is optimised away).
pub fn first_pass_sample(
    slice: &SymSlice,
    captures: &CaptureValues,
    order: PassOrder,
    at: f64,
    count: u64,
) -> (u64, u64) {
    let (mut reads, mut n, mut sum) = (Scratch::new(), 0u64, 0u64);
    let (units, chunk) = order.units(slice);
    let mut unit = (units as f64 * at) as u64;
    while n < count && unit < units {
        let end = (unit + chunk).min(units);
        order.walk(slice, unit..end, |class, i, us, them| {
            n += 1;
            sum += first_code(slice, captures, class, i, us, them, &mut reads).unwrap_or(0) as u64;
        });
        unit = end;
    }
    (n, sum)
}

/// The first pass's code for entry `i` (of class `class`) of `slice`, where the side to
/// move holds `us` and the opponent `them`: `SETTLED` for a copy or a drawn capture position,
/// the value of a capture position, a loss with no move at all; `None` for a position left
/// to the rounds.
#[inline(always)]
pub(super) fn first_code(
    slice: &SymSlice,
    captures: &CaptureValues,
    class: u64,
    i: u64,
    us: Bitboard,
    them: Bitboard,
    reads: &mut Scratch,
) -> Option<u8> {
    if slice.class_is_symmetric(class) {
        // The entries' small set is the class's representative as it stands.
        let big = if slice.small_is_us() { them } else { us };
        if slice.rank_in_class(&slice.class(class), big) != i {
            return Some(SETTLED);
        }
    }
    let pos = Position::from_parts(slice.board, us, them, Color::White);
    if let Some(code) = captures.value(&pos, reads) {
        return Some(match code {
            DRAW => SETTLED,
            c => c,
        });
    }
    let g = slice.board.geometry();
    let empty = g.all & !(us | them);
    (0..8).all(|d| g.step(us, d) & empty == 0).then_some(LOSS)
}

/// Runs `work` over `from..len` in chunks of `chunk` on `threads` threads, and every `every`
/// calls `mark` with a unit below which every chunk is done. `done` is told each chunk's size.
#[allow(clippy::too_many_arguments)]
pub(super) fn chunks_with_marks<W, D, M>(
    from: u64,
    len: u64,
    threads: usize,
    chunk: u64,
    work: &W,
    done: D,
    every: Duration,
    mut mark: M,
) -> Result<(), BuildError>
where
    W: Fn(std::ops::Range<u64>) + Sync,
    D: Fn(u64) + Sync,
    M: FnMut(u64) -> Result<(), BuildError>,
{
    let next = AtomicU64::new(from);
    // Per thread: the start of the chunk it works on (a lower bound of it while it takes
    // one), u64::MAX when it has none.
    let busy: Vec<AtomicU64> = (0..threads.max(1))
        .map(|_| AtomicU64::new(u64::MAX))
        .collect();
    let (alive, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        for slot in &busy {
            let (next, done, alive) = (&next, &done, alive.clone());
            s.spawn(move || {
                loop {
                    slot.store(next.load(Ordering::SeqCst), Ordering::SeqCst);
                    let start = next.fetch_add(chunk, Ordering::SeqCst);
                    if start >= len {
                        slot.store(u64::MAX, Ordering::SeqCst);
                        break;
                    }
                    slot.store(start, Ordering::SeqCst);
                    let end = (start + chunk).min(len);
                    work(start..end);
                    done(end - start);
                }
                drop(alive);
            });
        }
        drop(alive);
        // Woken by the timeout to save a mark, or by the last worker's sender going away.
        let mut result = Ok(());
        while wait.recv_timeout(every) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            if result.is_ok() {
                // Chunks are handed out in order: every chunk below both the next one to
                // hand out and the lowest one in work is done.
                let ahead = next.load(Ordering::SeqCst);
                let low = busy
                    .iter()
                    .map(|b| b.load(Ordering::SeqCst))
                    .min()
                    .unwrap_or(u64::MAX);
                result = mark(ahead.min(low).min(len));
            }
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Material;
    use std::sync::Mutex;

    #[test]
    fn the_pass_goes_by_big_sets_where_captures_read_the_opponents_classes() {
        let m = |a, b| Material { a, b };
        assert_eq!(PassOrder::of(m(4, 5)), PassOrder::BigSets);
        assert_eq!(PassOrder::of(m(4, 4)), PassOrder::BigSets);
        assert_eq!(PassOrder::of(m(5, 4)), PassOrder::Entries);
        assert_eq!(PassOrder::of(m(3, 5)), PassOrder::Entries);
    }

    #[test]
    fn chunks_are_each_done_once_and_marks_never_pass_an_unfinished_one() {
        let len = 10_000;
        let done: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(0)).collect();
        let marks = Mutex::new(Vec::new());
        let work = |range: std::ops::Range<u64>| {
            for i in range {
                done[i as usize].fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        chunks_with_marks(
            100,
            len,
            2,
            64,
            &work,
            |_| {},
            Duration::from_millis(1),
            |mark| {
                // Everything below the mark is done.
                assert!((100..mark).all(|i| done[i as usize].load(Ordering::SeqCst) == 1));
                marks.lock().unwrap().push(mark);
                Ok(())
            },
        )
        .unwrap();
        assert!(
            (0..100).all(|i| done[i].load(Ordering::SeqCst) == 0),
            "from the mark on"
        );
        assert!((100..len as usize).all(|i| done[i].load(Ordering::SeqCst) == 1));
        let marks = marks.into_inner().unwrap();
        assert!(
            !marks.is_empty(),
            "the test needs the pass to outlast a mark"
        );
        assert!(marks.windows(2).all(|w| w[0] <= w[1]), "{marks:?}");
    }
}
