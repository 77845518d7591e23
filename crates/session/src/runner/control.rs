//! How the outside (the daemon, a worker, the command line) asks a running session to stop,
//! bounds it, and sees its progress, its jobs and its failing checkpoints.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::checkpoint_failure::{self, CheckpointFailure};
use crate::log::Progress;
use crate::{SessionError, Sessions};

/// How the outside asks a running session to stop, and sees its progress.
#[derive(Default)]
pub struct Control {
    stop: AtomicBool,
    /// The stop is the process exiting (`request_exit`).
    exit: AtomicBool,
    /// The latest progress of the running session.
    pub progress: Mutex<Option<Progress>>,
    /// The latest progress of each of its questions (both run at once on two threads).
    pub live: Mutex<Vec<Progress>>,
    /// Time spent writing periodic checkpoints (the final one of a run not included).
    pub checkpoint_seconds: Mutex<f64>,
    /// The session's questions being searched now (each on a thread of its own).
    pub searches: AtomicUsize,
    /// At most this many questions searched at once (0: as many as are open); a worker
    /// limited to one also never expands two leaves at a time.
    pub max_searches: AtomicUsize,
    /// A question alone expanding two leaves at a time (on two threads).
    pub pairing: AtomicBool,
    /// Entries each second-level df-pn table keeps at most (0: the search's default); the
    /// config's `second_level_table`.
    pub second_level_table: AtomicUsize,
    /// The process's own resident bytes at which the session checkpoints and pauses itself
    /// (0: no bound); the config's `memory_bound`.
    pub memory_bound: AtomicU64,
    /// Set while the session's checkpoints fail; cleared by the first that succeeds.
    pub checkpoint_failure: Mutex<Option<CheckpointFailure>>,
    /// Where second-level searches go instead of this process's threads (the config's
    /// `[cluster]`); `None`: they run here.
    pub dispatcher: Option<std::sync::Arc<dyn fanorona_search::jobs::Dispatcher>>,
    /// Each question's jobs, while they go elsewhere.
    pub jobs: Mutex<Vec<fanorona_search::jobs::JobsView>>,
    /// Told when `searches` or `pairing` change (the daemon's spare worker waits on it).
    watcher: std::sync::OnceLock<crossbeam_channel::Sender<()>>,
}

impl Control {
    /// A control whose searches keep second-level tables of at most `bytes` each.
    pub fn with_table(bytes: u64) -> Control {
        let c = Control::default();
        c.second_level_table.store(
            fanorona_search::pn::second_level_entries(bytes),
            Ordering::Relaxed,
        );
        c
    }
}

impl Control {
    /// From now on, `watcher` is told (one message waiting at most) whenever the searches
    /// running or the pairing change. Set once.
    pub fn watch(&self, watcher: crossbeam_channel::Sender<()>) {
        let _ = self.watcher.set(watcher);
    }

    fn changed(&self) {
        if let Some(w) = self.watcher.get() {
            let _ = w.try_send(());
        }
    }

    /// Sets how many of the session's questions are searched now.
    pub fn set_searches(&self, n: usize) {
        if self.searches.swap(n, Ordering::SeqCst) != n {
            self.changed();
        }
    }

    /// One search of the session has returned.
    pub(super) fn search_ended(&self) {
        self.searches.fetch_sub(1, Ordering::SeqCst);
        self.changed();
    }

    /// Sets whether a question alone expands two leaves at a time.
    pub fn set_pairing(&self, pairing: bool) {
        if self.pairing.swap(pairing, Ordering::SeqCst) != pairing {
            self.changed();
        }
    }

    /// Asks the solve to checkpoint and return after its current iteration.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Asks the solve to stop because the process exits: a final checkpoint that fails (a
    /// full disk) is then given up after a few tries, where a pause or a handover keeps
    /// trying until it succeeds (the work since the last checkpoint exists only in memory).
    pub fn request_exit(&self) {
        self.exit.store(true, Ordering::SeqCst);
        self.request_stop();
    }

    pub(super) fn exit_requested(&self) -> bool {
        self.exit.load(Ordering::Relaxed)
    }

    pub fn clear(&self) {
        self.stop.store(false, Ordering::SeqCst);
        self.exit.store(false, Ordering::SeqCst);
        self.searches.store(0, Ordering::SeqCst);
        self.pairing.store(false, Ordering::SeqCst);
        self.live.lock().expect("live lock").clear();
        self.jobs.lock().expect("jobs lock").clear();
        *self.checkpoint_failure.lock().expect("failure lock") = None;
    }

    /// Checkpoints failing: `f`, or none (`None`).
    pub(super) fn set_failure(&self, f: Option<CheckpointFailure>) {
        *self.checkpoint_failure.lock().expect("failure lock") = f;
    }

    pub(super) fn failure(&self) -> Option<CheckpointFailure> {
        self.checkpoint_failure
            .lock()
            .expect("failure lock")
            .clone()
    }

    /// A checkpoint of question `g` of session `id` failed with `e` at `iteration`: the
    /// failure so far, one try longer, shown from now on.
    pub(super) fn note_failure(
        &self,
        sessions: &Sessions,
        id: u64,
        g: usize,
        e: &SessionError,
        iteration: u64,
    ) -> CheckpointFailure {
        let f = checkpoint_failure::note(sessions, id, g, e, iteration, self.failure());
        self.set_failure(Some(f.clone()));
        f
    }

    /// Question `view.goal`'s jobs as they stand.
    pub(super) fn report_jobs(&self, view: fanorona_search::jobs::JobsView) {
        let mut jobs = self.jobs.lock().expect("jobs lock");
        match jobs.iter_mut().find(|v| v.goal == view.goal) {
            Some(v) => *v = view,
            None => jobs.push(view),
        }
    }

    /// Records a question's latest progress.
    pub fn report(&self, p: Progress) {
        let mut live = self.live.lock().expect("live lock");
        match live.iter_mut().find(|q| q.goal == p.goal) {
            Some(q) => *q = p.clone(),
            None => live.push(p.clone()),
        }
        drop(live);
        *self.progress.lock().expect("progress lock") = Some(p);
    }
}
