//! The workers: the threads that solve the running sessions. The worker takes the oldest
//! running session and solves it with both threads; while it searches a single question on
//! one thread (or writes a solved session's certificates), the spare worker takes the next
//! running session onto the idle thread, one question at a time, and hands the thread back
//! when the worker needs both or wants that session.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::Service;
use crate::config::Config;
use crate::session::runner::{self, Control};
use crate::session::{SessionError, SessionRecord, State};

/// A worker's session and its control.
pub struct Slot {
    /// The session it solves.
    running: Mutex<Option<u64>>,
    pub control: Control,
}

impl Slot {
    fn new(config: &Config) -> Slot {
        let control = Control::with_table(config.second_level_table);
        control
            .memory_bound
            .store(config.memory_bound, Ordering::Relaxed);
        Slot {
            running: Mutex::new(None),
            control,
        }
    }

    /// The session this worker solves, if any.
    pub fn session(&self) -> Option<u64> {
        *self.running.lock().expect("running lock")
    }

    /// Marks session `id` as this worker's (a solve run by a command, not by a worker).
    pub fn hold(&self, id: u64) {
        *self.running.lock().expect("running lock") = Some(id);
    }

    /// Lets go of its session.
    pub fn release(&self) {
        *self.running.lock().expect("running lock") = None;
    }

    /// Waits until this worker no longer solves session `id`, at most `timeout`.
    pub fn wait_released(&self, id: u64, timeout: Duration) {
        let waited = std::time::Instant::now();
        while self.session() == Some(id) && waited.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// If this worker solves session `id`, asks it to stop, under the lock so the stop
    /// cannot reach a session it starts next. Whether it did.
    pub fn stop_if_solving(&self, id: u64) -> bool {
        let running = self.running.lock().expect("running lock");
        let active = *running == Some(id);
        if active {
            self.control.request_stop();
        }
        active
    }
}

/// Both workers and what they tell each other.
pub struct Workers {
    /// The worker: the oldest running session, on both threads.
    pub main: Slot,
    /// The spare worker: with two threads, while the worker searches one question alone,
    /// it solves the next session on the idle core, one question at a time.
    pub spare: Slot,
    /// Wakes the worker when a session becomes runnable.
    wake: crossbeam_channel::Sender<()>,
    woken: crossbeam_channel::Receiver<()>,
    /// Held while a worker chooses its next session.
    claiming: Mutex<()>,
    /// The worker wants the session the spare worker holds.
    handover: AtomicBool,
    /// The worker writes a solved session's certificates (one thread, however long): the
    /// spare may take a session meanwhile.
    certifying: AtomicBool,
}

impl Workers {
    pub fn new(config: &Config) -> Workers {
        let (wake, woken) = crossbeam_channel::bounded(1);
        Workers {
            main: Slot::new(config),
            spare: Slot::new(config),
            wake,
            woken,
            claiming: Mutex::new(()),
            handover: AtomicBool::new(false),
            certifying: AtomicBool::new(false),
        }
    }

    /// Both workers.
    pub fn slots(&self) -> [&Slot; 2] {
        [&self.main, &self.spare]
    }

    /// The worker solving session `id`, if one is.
    pub fn slot_of(&self, id: u64) -> Option<&Slot> {
        self.slots().into_iter().find(|s| s.session() == Some(id))
    }

    /// Tells the worker a session may have become runnable.
    pub fn wake(&self) {
        let _ = self.wake.try_send(());
    }
}

impl Service {
    /// The worker: solves running sessions, oldest first, until `shutdown`. After each it
    /// writes the certificates of a solved one (`finished`), on its own thread.
    pub fn work(&self, shutdown: &AtomicBool) {
        let mut reported = std::collections::HashSet::new();
        while !shutdown.load(Ordering::SeqCst) {
            let Some(id) = self.claim(false, &mut reported) else {
                let _ = self.workers.woken.recv_timeout(Duration::from_millis(500));
                continue;
            };
            if shutdown.load(Ordering::SeqCst) {
                self.workers.main.control.request_stop();
            }
            let result = runner::run_guarded(
                &self.sessions,
                id,
                &self.workers.main.control,
                &self.dir.logs(),
            );
            self.workers.main.release();
            // It searches nothing now (an error may have left the counts up): the spare must
            // not be told to hand its thread back.
            self.workers
                .main
                .control
                .searches
                .store(0, Ordering::SeqCst);
            self.workers
                .main
                .control
                .pairing
                .store(false, Ordering::SeqCst);
            // A solved session's certificates come next, on this thread alone (a session
            // that must wait before it is tried again is not the spare's meanwhile).
            let solved = matches!(&result, Ok(r) if r.state == State::Solved);
            self.workers.certifying.store(solved, Ordering::SeqCst);
            self.finished(id, result, &self.workers.main.control);
            self.workers.certifying.store(false, Ordering::SeqCst);
        }
    }

    /// Whether the worker needs the spare's thread: it searches two questions, or one on two
    /// threads, or is starting a session, or wants the spare's session.
    fn worker_needs_both(&self) -> bool {
        self.workers.main.control.searches.load(Ordering::SeqCst) >= 2
            || self.workers.main.control.pairing.load(Ordering::SeqCst)
            || self.workers.handover.load(Ordering::SeqCst)
    }

    /// The spare worker: while the worker searches a single question (the other one
    /// decided, or a session with one question), it solves the next running session on the
    /// idle thread, one question at a time, and hands the thread back (checkpointing) when
    /// the worker needs both or wants that session.
    pub fn work_spare(&self, shutdown: &AtomicBool) {
        let mut reported = std::collections::HashSet::new();
        while !shutdown.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(500));
            let Some(id) = self.claim(true, &mut reported) else {
                continue;
            };
            tracing::info!("session {id}: taken up by the spare worker, on the idle thread");
            let result = std::thread::scope(|s| {
                let run = s.spawn(|| {
                    runner::run_guarded(
                        &self.sessions,
                        id,
                        &self.workers.spare.control,
                        &self.dir.logs(),
                    )
                });
                while !run.is_finished() {
                    if shutdown.load(Ordering::SeqCst) || self.worker_needs_both() {
                        self.workers.spare.control.request_stop();
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                run.join().unwrap_or_else(|_| {
                    Err(SessionError::Internal("the spare worker panicked".into()))
                })
            });
            self.workers.spare.release();
            self.finished(id, result, &self.workers.spare.control);
        }
    }

    /// The next session for the worker (`spare` false) or the spare worker, marked as
    /// theirs; one claims at a time, so the two never take the same session.
    ///
    /// The worker takes the oldest running session; if the spare holds it, the worker asks
    /// for it back (`handover`) and waits. The spare takes the oldest running session the
    /// worker does not hold, and only while the worker leaves a thread idle
    /// (`spare_may_claim`).
    fn claim(&self, spare: bool, reported: &mut std::collections::HashSet<u64>) -> Option<u64> {
        let _claiming = self.workers.claiming.lock().expect("claim lock");
        let (mine, other) = if spare {
            (&self.workers.spare, &self.workers.main)
        } else {
            (&self.workers.main, &self.workers.spare)
        };
        let held = other.session();
        if spare
            && !spare_may_claim(
                held,
                self.workers.main.control.searches.load(Ordering::SeqCst),
                self.worker_needs_both(),
                self.workers.certifying.load(Ordering::SeqCst),
            )
        {
            return None;
        }
        let rec = match self.sessions.list_readable() {
            Ok((list, damaged)) => {
                for id in damaged {
                    if reported.insert(id) {
                        tracing::error!("session {id}: its record is damaged; skipped");
                    }
                }
                let oldest = list
                    .into_iter()
                    .find(|r| r.state == State::Running && (!spare || Some(r.id) != held))?;
                if !spare && Some(oldest.id) == held {
                    self.workers.handover.store(true, Ordering::SeqCst);
                    return None;
                }
                oldest
            }
            Err(e) => {
                tracing::error!("cannot list sessions: {e}");
                return None;
            }
        };
        let control = &mine.control;
        let mut running = mine.running.lock().expect("running lock");
        control.clear();
        if spare {
            control.max_searches.store(1, Ordering::SeqCst);
        } else {
            // Both threads are the worker's until its search says how many it uses.
            control.searches.store(2, Ordering::SeqCst);
            self.workers.handover.store(false, Ordering::SeqCst);
        }
        *running = Some(rec.id);
        Some(rec.id)
    }

    /// After a worker's run of session `id`: the certificates of a solved session, a pause
    /// before retrying one that could not go on.
    fn finished(&self, id: u64, result: Result<SessionRecord, SessionError>, control: &Control) {
        if let Ok(r) = &result
            && r.state == State::Solved
        {
            // Logged inside; the session stays solved whatever happens here.
            let _ = self.write_certificates(r, false);
        }
        match result {
            Ok(r) if r.state == State::Running && !control.stop_requested() => {
                // Ran out without finishing: back off before trying again.
                std::thread::sleep(Duration::from_secs(1));
            }
            Ok(_) => {}
            // A damaged record or a bug: `run_guarded` marked the session failed.
            Err(SessionError::Decode(_) | SessionError::Damaged(_) | SessionError::Internal(_)) => {
            }
            Err(e) => {
                tracing::error!("session {id}: {e}; retrying in 5 s");
                std::thread::sleep(Duration::from_secs(5));
            }
        }
    }
}

/// Whether the spare worker may take a session: while the worker solves one (`held`) with a
/// single search on one thread and does not want both threads back, or while it writes a
/// solved session's certificates (one thread; a 5x9 certificate can take an hour, and the
/// other core idled through it unless the spare already held a session).
fn spare_may_claim(
    held: Option<u64>,
    searches: usize,
    worker_needs_both: bool,
    certifying: bool,
) -> bool {
    if certifying {
        return true;
    }
    held.is_some() && searches == 1 && !worker_needs_both
}

#[cfg(test)]
mod tests {
    use super::spare_may_claim;

    #[test]
    fn the_spare_takes_a_session_only_beside_one_busy_thread() {
        // Beside a single search, not beside two, a pair, or nothing.
        assert!(spare_may_claim(Some(1), 1, false, false));
        assert!(!spare_may_claim(Some(1), 2, false, false));
        assert!(!spare_may_claim(Some(1), 1, true, false));
        assert!(!spare_may_claim(None, 0, false, false));
        // Beside the worker writing certificates (it holds no session then).
        assert!(spare_may_claim(None, 0, false, true));
    }
}
