//! The paika rounds to the fixpoint: backward from what the last round decided while its
//! list fits in memory, forward from every undecided entry when it does not.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::build::BuildError;
use crate::plan::LIST_BYTES;
use crate::wdl::{LOSS, WIN};
use fanorona_rules::geometry::{NONE, points};

use super::first_pass::Save;
use super::state::State;
use super::{CHUNK, Pair};

impl Pair<'_> {
    /// The slice whose positions follow a move from slice `x`.
    pub(super) fn other(&self, x: usize) -> usize {
        if self.slices.len() == 2 { 1 - x } else { 0 }
    }

    /// How often a long pass saves its mark.
    pub(super) fn checkpoint_every(&self) -> Duration {
        self.options.checkpoint_every.unwrap_or(
            self.options
                .report_every
                .unwrap_or(Duration::from_secs(60))
                .min(Duration::from_secs(300)),
        )
    }

    /// Entries of slice `x` still undecided.
    pub(super) fn count_undecided(&self, x: usize) -> u64 {
        let v = &self.values[x];
        let n = AtomicU64::new(0);
        let len = self.slices[x].len();
        crate::parallel::for_chunks(
            v.count as u64,
            crate::parallel::WORDS,
            self.threads,
            |_| {},
            |range| {
                let mut c = 0;
                for w in range {
                    let mut bits = v.undecided_in(w as usize);
                    // The padding past the last entry reads as undecided: left out.
                    if (w + 1) * 32 > len {
                        bits &= (1u64 << (2 * (len - w * 32))) - 1;
                    }
                    c += bits.count_ones() as u64;
                }
                n.fetch_add(c, Ordering::Relaxed);
            },
        );
        n.into_inner()
    }

    /// Paika rounds to the fixpoint; returns (rounds, forward rounds) of this run.
    pub(super) fn rounds(
        &self,
        state: &mut State,
        save: &mut Save<'_>,
        label: &str,
        log: &mut dyn FnMut(&str),
    ) -> Result<(u32, u32), BuildError> {
        let mut undecided: u64 = (0..self.slices.len())
            .map(|x| self.count_undecided(x))
            .sum();
        // The first round looks forward: the first pass decided too much to list, and after a
        // resume nothing is listed.
        let mut frontier: Option<Vec<Vec<u64>>> = None;
        let (mut rounds, mut forwards) = (0, 0);
        let mut last_log = Instant::now();
        let status = crate::build::status_line(self.options);
        loop {
            let round_start = Instant::now();
            let round = state.rounds + 1;
            let list = Decided::new(self.slices.len());
            let forward = match &frontier {
                None => true,
                Some(f) => f.iter().map(Vec::len).sum::<usize>() as u64 > undecided,
            };
            if forward {
                forwards += 1;
                self.forward_round(&list);
            } else {
                self.backward_round(frontier.as_ref().expect("a list"), &list);
            }
            let (decided, next) = list.take();
            rounds += 1;
            state.rounds = round;
            undecided = undecided.saturating_sub(decided);
            save(state, self)?;
            let line = format!(
                "{label}: round {round} ({}): {decided} decided, {undecided} undecided, {:.2} s",
                if forward { "forward" } else { "backward" },
                round_start.elapsed().as_secs_f64()
            );
            if self
                .options
                .report_every
                .is_some_and(|e| last_log.elapsed() >= e)
            {
                last_log = Instant::now();
                log(&line);
            }
            if self.options.progress {
                status.set_message(line);
            }
            if decided == 0 {
                break;
            }
            frontier = next;
        }
        status.finish_and_clear();
        Ok((rounds, forwards))
    }

    /// Calls `f(i, us, them)` for every undecided entry of slice `x`, on all threads, and
    /// decides the entry as `f` says (listing it in `list`).
    pub(super) fn for_undecided<F>(&self, x: usize, list: &Decided, f: F)
    where
        F: Fn(u64, u64, u64) -> Option<u8> + Sync,
    {
        let (v, slice) = (&self.values[x], &self.slices[x]);
        let len = slice.len();
        crate::parallel::for_chunks(
            v.count as u64,
            crate::parallel::WORDS,
            self.threads,
            |_| {},
            |range| {
                let mut cursor = slice.cursor();
                let mut decided = Vec::new();
                for w in range {
                    let mut bits = v.undecided_in(w as usize);
                    while bits != 0 {
                        let i = w * 32 + bits.trailing_zeros() as u64 / 2;
                        bits &= bits - 1;
                        if i >= len {
                            break;
                        }
                        // Decided since the word was read (by this thread's own last step).
                        if v.get(i) != 0 {
                            continue;
                        }
                        let (us, them) = cursor.seek(i);
                        if let Some(code) = f(i, us, them)
                            && v.set(i, code)
                        {
                            decided.push(i);
                        }
                    }
                }
                list.extend(x, &mut decided);
            },
        );
    }

    /// Decides each undecided entry from its successors: a win if one is a loss, a loss if
    /// all are wins.
    pub(super) fn forward_round(&self, list: &Decided) {
        let g = self.board.geometry();
        for x in 0..self.slices.len() {
            let y = self.other(x);
            let (after, seen) = (&self.slices[y], &self.values[y]);
            self.for_undecided(x, list, |_, us, them| {
                let empty = g.all & !(us | them);
                let mut all_win = true;
                for d in 0..8 {
                    for to in points(g.step(us, d) & empty) {
                        let from = (to as i32 - g.shift[d]) as u8;
                        match seen.get(after.rank(them, us ^ (1 << from) ^ (1 << to))) {
                            LOSS => return Some(WIN),
                            WIN => {}
                            _ => all_win = false,
                        }
                    }
                }
                all_win.then_some(LOSS)
            });
        }
    }

    /// Whether every paika move of the side holding `us` against `them` leads to an entry of
    /// slice `x` that is a win (for the side then to move).
    pub(super) fn all_paika_reach_wins(&self, us: u64, them: u64, x: usize) -> bool {
        let g = self.board.geometry();
        let (slice, values) = (&self.slices[x], &self.values[x]);
        let empty = g.all & !(us | them);
        (0..8).all(|d| {
            points(g.step(us, d) & empty).all(|to| {
                let from = (to as i32 - g.shift[d]) as u8;
                values.get(slice.rank(them, us ^ (1 << from) ^ (1 << to))) == WIN
            })
        })
    }

    /// Walks back from the entries decided in the last round: their undecided paika
    /// predecessors win against a loss, and lose if every move reaches a win.
    pub(super) fn backward_round(&self, frontier: &[Vec<u64>], list: &Decided) {
        let g = self.board.geometry();
        for (x, entries) in frontier.iter().enumerate() {
            let y = self.other(x);
            let (before, values) = (&self.slices[y], &self.values[y]);
            let slice = &self.slices[x];
            crate::parallel::for_chunks(
                entries.len() as u64,
                CHUNK,
                self.threads,
                |_| {},
                |range| {
                    let mut decided = Vec::new();
                    for k in range {
                        let i = entries[k as usize];
                        let lost = self.values[x].get(i) == LOSS;
                        let (us, them) = slice.unrank(i);
                        let empty = g.all & !(us | them);
                        // The side that just moved is `them`: step each of its pieces back.
                        for q in points(them) {
                            for d in 0..8 {
                                let p = g.neighbour(q, d);
                                if p == NONE || empty & (1 << p) == 0 {
                                    continue;
                                }
                                let mover = them ^ (1 << q) ^ (1 << p);
                                let j = before.rank(mover, us);
                                if values.get(j) != 0 {
                                    continue;
                                }
                                let code = if lost {
                                    WIN
                                } else if self.all_paika_reach_wins(mover, us, x) {
                                    LOSS
                                } else {
                                    continue;
                                };
                                if values.set(j, code) {
                                    decided.push(j);
                                }
                            }
                        }
                    }
                    list.extend(y, &mut decided);
                },
            );
        }
    }
}

/// The entries decided in a round, per slice, while they fit the lists' memory.
pub(super) struct Decided {
    pub(super) lists: Vec<Mutex<Vec<u64>>>,
    pub(super) count: AtomicU64,
    pub(super) overflow: AtomicBool,
}

impl Decided {
    pub(super) fn new(slices: usize) -> Decided {
        Decided {
            lists: (0..slices).map(|_| Mutex::new(Vec::new())).collect(),
            count: AtomicU64::new(0),
            overflow: AtomicBool::new(false),
        }
    }

    /// Takes a thread's entries of slice `x` decided in one chunk (counted always, listed
    /// while the lists fit), leaving `entries` empty.
    pub(super) fn extend(&self, x: usize, entries: &mut Vec<u64>) {
        let n = entries.len() as u64;
        if n == 0 {
            return;
        }
        let before = self.count.fetch_add(n, Ordering::Relaxed);
        if before + n > LIST_BYTES / 8 {
            self.overflow.store(true, Ordering::Relaxed);
        } else if !self.overflow.load(Ordering::Relaxed) {
            self.lists[x]
                .lock()
                .expect("no thread panics holding it")
                .append(entries);
        }
        entries.clear();
    }

    /// How many were decided, and the lists if they all fit.
    pub(super) fn take(self) -> (u64, Option<Vec<Vec<u64>>>) {
        let count = self.count.into_inner();
        if self.overflow.into_inner() {
            return (count, None);
        }
        let lists = self
            .lists
            .into_iter()
            .map(|l| l.into_inner().expect("no thread panics holding it"))
            .collect();
        (count, Some(lists))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decided_entries_are_listed_per_slice_and_counted() {
        let list = Decided::new(2);
        let mut a = vec![3, 9];
        list.extend(1, &mut a);
        assert!(
            a.is_empty(),
            "the thread's buffer is left empty for its next chunk"
        );
        list.extend(0, &mut vec![4]);
        list.extend(1, &mut vec![]);
        let (count, lists) = list.take();
        assert_eq!(count, 3);
        assert_eq!(lists, Some(vec![vec![4], vec![3, 9]]));
    }

    #[test]
    fn a_list_past_its_memory_is_given_up_but_still_counted() {
        let list = Decided::new(1);
        list.extend(0, &mut vec![1]);
        list.count.store(LIST_BYTES / 8, Ordering::Relaxed);
        list.extend(0, &mut vec![2, 3]);
        let (count, lists) = list.take();
        assert_eq!(count, LIST_BYTES / 8 + 2);
        assert_eq!(lists, None, "the next round looks forward instead");
    }
}
