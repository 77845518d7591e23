//! `List` and `Status`: what is stored of a session, and what is happening to it now.

use super::{Apply, Refusal, Service};
use crate::answers::{Shown, Status};
use crate::protocol::{List, StatusOf};
use fanorona_session::log::log_path;
use fanorona_session::{SessionRecord, State};

impl Apply for List {
    fn apply(self, service: &Service) -> Result<Vec<Status>, Refusal> {
        Ok(service
            .sessions
            .list()?
            .iter()
            .map(|r| service.status(r))
            .collect())
    }
}

impl Apply for StatusOf {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        Ok(service.status(&service.sessions.get(self.id)?))
    }
}

impl Service {
    /// A session's status: its record, its totals and, while it runs, its live progress.
    pub fn status(&self, r: &SessionRecord) -> Status {
        let (nodes, seconds, rote_hits) = r.totals();
        let slot = self.workers.slot_of(r.id);
        let active = slot.is_some();
        // What is true now, not only what is stored: a running session nobody solves waits
        // (for the worker, or for a daemon), one told to pause may still be checkpointing.
        let state = match (r.state, active) {
            (State::Running, true) => Shown::Running,
            (State::Running, false) if self.has_worker => Shown::Queued,
            (State::Running, false) => Shown::Waiting,
            (State::Paused, true) => Shown::Pausing,
            (State::Stopped, true) => Shown::Stopping,
            (State::Paused, false) => Shown::Paused,
            (State::Stopped, false) => Shown::Stopped,
            (State::Solved, _) => Shown::Solved,
            (State::Failed, _) => Shown::Failed,
            (State::Damaged, _) => Shown::Damaged,
        };
        let checkpoint_failure = slot.and_then(|s| {
            s.control
                .checkpoint_failure
                .lock()
                .expect("failure lock")
                .clone()
        });
        let (progress, live) = match slot {
            Some(slot) => (
                slot.control
                    .progress
                    .lock()
                    .expect("progress lock")
                    .clone()
                    .filter(|p| p.session == r.id),
                slot.control
                    .live
                    .lock()
                    .expect("live lock")
                    .iter()
                    .filter(|p| p.session == r.id)
                    .cloned()
                    .collect(),
            ),
            None => (None, Vec::new()),
        };
        // A session solved or paused shows what its jobs came to, not an empty table.
        let jobs = slot.map_or_else(
            || self.workers.kept_jobs(r.id),
            |s| s.control.jobs.lock().expect("jobs lock").clone(),
        );
        Status {
            id: r.id,
            name: r.name.clone(),
            root: r.root.clone(),
            state,
            value: r.value,
            error: r.error.clone(),
            active,
            algo: r.settings.algo,
            db_dir: r.settings.db_dir.clone(),
            second_level: r.settings.second_level,
            init: r.settings.init,
            weights: r.settings.own_weights().map(|w| w.file.clone()),
            checkpoint_ms: r.settings.checkpoint_ms,
            checkpoints: r.checkpoints,
            nodes,
            seconds,
            rote_hits,
            rote_hit_rate: rote_hits as f64 / nodes.max(1) as f64,
            goals: r.goals.clone(),
            progress,
            live,
            log: log_path(&self.dir.logs(), r.id),
            checkpoint_trouble: checkpoint_failure.as_ref().map(|f| f.describe()),
            checkpoint_failure,
            jobs,
            backups: Some(self.backups.lock().expect("backups lock").clone()),
        }
    }
}
