//! `Delete` and `Rename`: a session removed, or known by another name.

use std::time::Duration;

use super::{Apply, Refusal, Service, bad_input};
use crate::answers::{Deleted, Status};
use crate::protocol::{Delete, Rename};
use fanorona_session::log::log_path;

/// How long a delete waits for a worker to let go of the session.
const RELEASE_WAIT: Duration = Duration::from_secs(10);

impl Apply for Delete {
    fn apply(self, service: &Service) -> Result<Deleted, Refusal> {
        let id = self.id;
        // A worker still holding it (pausing, stopping, its certificates being written
        // after the solve) would write to a tree being removed: it is given a moment.
        if let Some(slot) = service.workers.slot_of(id) {
            slot.wait_released(id, RELEASE_WAIT);
        }
        if service.workers.slot_of(id).is_some() {
            return Err(bad_input(format!(
                "session {id} is still being written by a worker (checkpointing or writing its certificates): try again once `fanorona session status {id}` says it has stopped"
            )));
        }
        let rec = service.sessions.delete(id)?;
        // The log goes with the session: a new one never takes its id, but a reader of the
        // directory should not find a log of nothing.
        let log = log_path(&service.dir.logs(), id);
        if let Err(e) = std::fs::remove_file(&log)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("session {id}: deleted, but its log {}: {e}", log.display());
        }
        tracing::info!("session {id} '{}': deleted", rec.name);
        Ok(Deleted { id, name: rec.name })
    }
}

impl Apply for Rename {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        let rec = service.sessions.rename(self.id, self.name.trim())?;
        tracing::info!("session {}: renamed '{}'", self.id, rec.name);
        Ok(service.status(&rec))
    }
}
