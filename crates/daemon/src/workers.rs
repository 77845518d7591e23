//! The workers: the threads that solve the running sessions. The worker takes the oldest
//! running session and solves it with both threads; while it searches a single question on
//! one thread (or writes a solved session's certificates), the spare worker takes the next
//! running session onto the idle thread, one question at a time, and hands the thread back
//! when the worker needs both or wants that session.
//!
//! Nothing here polls: a worker with nothing to do waits on its channel (`Workers::poke`:
//! a session became runnable, the other worker took or let go of one, the worker's searches
//! changed) beside the shutdown signal, and a pause waits on its worker letting go.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, select};

use super::Service;
use super::shutdown::Shutdown;
use fanorona_search::config::Config;
use fanorona_search::jobs::JobsView;
use fanorona_session::certificates::CertificateError;
use fanorona_session::runner::{self, Control};
use fanorona_session::{SessionError, SessionRecord, State};

/// A worker's session and its control.
pub struct Slot {
    /// The session it solves.
    running: Mutex<Option<u64>>,
    /// Told when it lets go of its session.
    released: Condvar,
    pub control: Control,
    /// The jobs of the sessions it let go of (their last view), by session, for `session
    /// status` once they are solved or paused: kept for the daemon's life, the newest
    /// `KEPT_JOBS`.
    kept_jobs: Mutex<std::collections::BTreeMap<u64, Vec<JobsView>>>,
}

/// Sessions whose jobs a worker keeps after it lets go of them.
const KEPT_JOBS: usize = 256;

impl Slot {
    fn new(config: &Config) -> Slot {
        let control = Control::with_table(config.second_level_table);
        control
            .memory_bound
            .store(config.memory_bound, Ordering::Relaxed);
        Slot {
            running: Mutex::new(None),
            released: Condvar::new(),
            control,
            kept_jobs: Mutex::default(),
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
        let mut running = self.running.lock().expect("running lock");
        if let Some(id) = running.take() {
            let jobs = self.control.jobs.lock().expect("jobs lock").clone();
            if !jobs.is_empty() {
                let mut kept = self.kept_jobs.lock().expect("kept jobs lock");
                kept.insert(id, jobs);
                while kept.len() > KEPT_JOBS {
                    kept.pop_first();
                }
            }
        }
        drop(running);
        self.released.notify_all();
    }

    /// Waits until this worker no longer solves session `id`, at most `timeout`.
    pub fn wait_released(&self, id: u64, timeout: Duration) {
        let running = self.running.lock().expect("running lock");
        let _ = self
            .released
            .wait_timeout_while(running, timeout, |r| *r == Some(id))
            .expect("running lock");
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

/// A channel that holds at most one wake-up: a worker told twice while busy looks once.
struct Bell {
    ring: Sender<()>,
    heard: Receiver<()>,
}

impl Bell {
    fn new() -> Bell {
        let (ring, heard) = crossbeam_channel::bounded(1);
        // Each worker looks for a session once at its start.
        let _ = ring.try_send(());
        Bell { ring, heard }
    }

    fn ring(&self) {
        let _ = self.ring.try_send(());
    }

    /// Waits until it rings (true) or the daemon shuts down (false).
    fn wait(&self, shutdown: &Shutdown) -> bool {
        select! {
            recv(self.heard) -> _ => true,
            recv(shutdown.signal()) -> _ => false,
        }
    }
}

/// Both workers and what they tell each other.
pub struct Workers {
    /// The worker: the oldest running session, on both threads.
    pub main: Slot,
    /// The spare worker: with two threads, while the worker searches one question alone,
    /// it solves the next session on the idle core, one question at a time.
    pub spare: Slot,
    /// Wake the worker and the spare worker.
    main_bell: Bell,
    spare_bell: Bell,
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
        let workers = Workers {
            main: Slot::new(config),
            spare: Slot::new(config),
            main_bell: Bell::new(),
            spare_bell: Bell::new(),
            claiming: Mutex::new(()),
            handover: AtomicBool::new(false),
            certifying: AtomicBool::new(false),
        };
        // The worker's searches changing (one question left, a pair of leaves) may free a
        // thread for the spare, or take it back.
        workers.main.control.watch(workers.spare_bell.ring.clone());
        workers
    }

    /// Both workers.
    pub fn slots(&self) -> [&Slot; 2] {
        [&self.main, &self.spare]
    }

    /// The worker solving session `id`, if one is.
    pub fn slot_of(&self, id: u64) -> Option<&Slot> {
        self.slots().into_iter().find(|s| s.session() == Some(id))
    }

    /// Session `id`'s jobs as they were when a worker let go of it, if it had any.
    pub fn kept_jobs(&self, id: u64) -> Vec<JobsView> {
        self.slots()
            .into_iter()
            .find_map(|s| {
                s.kept_jobs
                    .lock()
                    .expect("kept jobs lock")
                    .get(&id)
                    .cloned()
            })
            .unwrap_or_default()
    }

    /// Tells both workers to look again: a session may have become runnable, or one of them
    /// took or let go of one.
    pub fn poke(&self) {
        self.main_bell.ring();
        self.spare_bell.ring();
    }
}

impl Service {
    /// The worker: solves running sessions, oldest first, until `shutdown`. After each it
    /// writes the certificates of a solved one (`finished`), on its own thread.
    pub fn work(&self, shutdown: &Shutdown) {
        let workers = &self.workers;
        let mut reported = HashSet::new();
        while workers.main_bell.wait(shutdown) {
            while let Some(id) = self.claim(false, &mut reported) {
                if shutdown.is_set() {
                    workers.main.control.request_exit();
                }
                let control = &workers.main.control;
                let result = runner::run_guarded(&self.sessions, id, control, &self.dir.logs());
                workers.main.release();
                // It searches nothing now (an error may have left the counts up): the spare
                // must not be told to hand its thread back.
                control.set_searches(0);
                control.set_pairing(false);
                // A solved session's certificates come next, on this thread alone (a
                // session that must wait before it is tried again is not the spare's
                // meanwhile).
                let solved = matches!(&result, Ok(r) if r.state == State::Solved);
                workers.certifying.store(solved, Ordering::SeqCst);
                workers.poke();
                self.finished(id, result, control, shutdown);
                workers.certifying.store(false, Ordering::SeqCst);
                if shutdown.is_set() {
                    return;
                }
            }
        }
    }

    /// Whether the worker needs the spare's thread: it searches two questions, or one on two
    /// threads, or is starting a session, or wants the spare's session.
    fn worker_needs_both(&self) -> bool {
        let main = &self.workers.main.control;
        main.searches.load(Ordering::SeqCst) >= 2
            || main.pairing.load(Ordering::SeqCst)
            || self.workers.handover.load(Ordering::SeqCst)
    }

    /// The spare worker: while the worker searches a single question (the other one
    /// decided, or a session with one question), it solves the next running session on the
    /// idle thread, one question at a time, and hands the thread back (checkpointing) when
    /// the worker needs both or wants that session.
    pub fn work_spare(&self, shutdown: &Shutdown) {
        let workers = &self.workers;
        let mut reported = HashSet::new();
        while workers.spare_bell.wait(shutdown) {
            let Some(id) = self.claim(true, &mut reported) else {
                continue;
            };
            tracing::info!("session {id}: taken up by the spare worker, on the idle thread");
            let control = &workers.spare.control;
            let result = std::thread::scope(|s| {
                let (done, ended) = crossbeam_channel::bounded::<()>(1);
                let run = s.spawn(move || {
                    let r = runner::run_guarded(&self.sessions, id, control, &self.dir.logs());
                    drop(done);
                    r
                });
                // Until the run ends: told to look, it stops if the thread is wanted back.
                loop {
                    if shutdown.is_set() || self.worker_needs_both() {
                        if shutdown.is_set() {
                            control.request_exit();
                        } else {
                            control.request_stop();
                        }
                        let _ = ended.recv();
                        break;
                    }
                    select! {
                        recv(ended) -> _ => break,
                        recv(workers.spare_bell.heard) -> _ => {}
                        recv(shutdown.signal()) -> _ => {}
                    }
                }
                run.join().unwrap_or_else(|_| {
                    Err(SessionError::Internal("the spare worker panicked".into()))
                })
            });
            workers.spare.release();
            workers.poke();
            self.finished(id, result, control, shutdown);
        }
    }

    /// The next session for the worker (`spare` false) or the spare worker, marked as
    /// theirs; one claims at a time, so the two never take the same session.
    ///
    /// The worker takes the oldest running session; if the spare holds it, the worker asks
    /// for it back (`handover`) and waits. The spare takes the oldest running session the
    /// worker does not hold, and only while the worker leaves a thread idle
    /// (`spare_may_claim`).
    fn claim(&self, spare: bool, reported: &mut HashSet<u64>) -> Option<u64> {
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
                    // The spare lets go when it looks next (`poke`), and pokes back.
                    self.workers.handover.store(true, Ordering::SeqCst);
                    self.workers.spare_bell.ring();
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
            control.set_searches(2);
            self.workers.handover.store(false, Ordering::SeqCst);
        }
        *running = Some(rec.id);
        drop(running);
        self.workers.poke();
        Some(rec.id)
    }

    /// After a worker's run of session `id`: the certificates of a solved session, a pause
    /// before retrying one that could not go on (cut short by a shutdown).
    fn finished(
        &self,
        id: u64,
        result: Result<SessionRecord, SessionError>,
        control: &Control,
        shutdown: &Shutdown,
    ) {
        if let Ok(r) = &result
            && r.state == State::Solved
        {
            // Logged inside; the session stays solved whatever happens here. A tree that
            // cannot be read for its certificate is damage: a backup that holds the session
            // whole solves it again, certificates and all.
            if let Err(CertificateError::Session(e)) = self.write_certificates(r, false)
                && runner::is_damage(&e)
                && !shutdown.is_set()
            {
                self.mend(id);
            }
        }
        match result {
            Ok(r) if r.state == State::Running && !control.stop_requested() => {
                // Ran out without finishing: back off before trying again.
                shutdown.wait_timeout(Duration::from_secs(1));
            }
            Ok(_) => {}
            // Damage or a bug: `run_guarded` marked the session damaged or failed; a damaged
            // one is put back from a backup if one holds it.
            Err(e) if runner::fails_the_session(&e, &self.sessions) => {
                if runner::is_damage(&e) && !shutdown.is_set() {
                    self.mend(id);
                }
            }
            // The process exits with work only in memory: the daemon's exit says so.
            Err(
                e @ (SessionError::Store(_)
                | SessionError::StorePoisoned(_)
                | SessionError::DiskFull { .. }),
            ) if shutdown.is_set() => {
                tracing::error!("session {id}: {e}; its work since the last checkpoint is lost");
                self.unwritten
                    .lock()
                    .expect("unwritten lock")
                    .push(format!("session {id}: {e}"));
            }
            // Only a new process reopens a store that failed a write: once its disk has room,
            // the daemon restarts itself (and resumes the session from its last checkpoint).
            Err(e) if self.sessions.store().poisoned().is_some() => {
                tracing::error!(
                    "session {id}: {e}; the daemon restarts itself to reopen the store once its disk has room"
                );
                while self.sessions.check_room(0).is_err() {
                    if shutdown.wait_timeout(Duration::from_secs(1)) {
                        return;
                    }
                }
                self.restart.store(true, Ordering::SeqCst);
                shutdown.trigger();
            }
            Err(e) => {
                tracing::error!("session {id}: {e}; retrying in 5 s");
                shutdown.wait_timeout(Duration::from_secs(5));
            }
        }
        // The session it let go may be the next to run.
        self.workers.poke();
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
