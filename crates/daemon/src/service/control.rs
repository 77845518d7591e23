//! `Pause`, `Stop`, `Resume` and `Tune`: a session set aside, run again, or solved another
//! way from its next resume.

use std::time::Duration;

use super::{Apply, Refusal, Service};
use crate::answers::Status;
use crate::protocol::{Pause, Resume, Stop, Tune};
use fanorona_session::settings::check_new_tables;
use fanorona_session::{State, Tuning};

/// How long a pause or stop waits for the worker's checkpoint before answering.
const STOP_WAIT: Duration = Duration::from_secs(60);

impl Apply for Pause {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        set_aside(service, self.id, State::Paused)
    }
}

impl Apply for Stop {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        set_aside(service, self.id, State::Stopped)
    }
}

/// Pauses or stops session `id`, answering once its worker (if one solves it) has
/// checkpointed and let go; the status says "pausing" or "stopping" if that takes longer
/// than a client waits.
fn set_aside(service: &Service, id: u64, to: State) -> Result<Status, Refusal> {
    let rec = service.sessions.set_state(id, to)?;
    let slot = service
        .workers
        .slots()
        .into_iter()
        .find(|slot| slot.stop_if_solving(id));
    if let Some(slot) = slot {
        slot.wait_released(id, STOP_WAIT);
    }
    Ok(service.status(&service.sessions.get(id).unwrap_or(rec)))
}

impl Apply for Resume {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        let rec = service.sessions.set_state(self.id, State::Running)?;
        service.workers.poke();
        Ok(service.status(&rec))
    }
}

impl Apply for Tune {
    fn apply(self, service: &Service) -> Result<Status, Refusal> {
        let id = self.id;
        let before = service.sessions.get(id)?;
        if let Some(dir) = &self.db_dir {
            check_new_tables(&before, dir)?;
        }
        let tuning = Tuning {
            second_level: self.second_level,
            init: self.init,
            db_dir: self.db_dir.clone(),
        };
        let rec = service.sessions.tune(id, &tuning)?;
        if let Some(b) = self.second_level {
            let was = before.settings.second_level;
            tracing::info!("session {id}: second level {was} -> {b}");
        }
        if let Some(i) = self.init {
            let was = before.settings.init.name();
            tracing::info!("session {id}: first numbers from {was} -> {}", i.name());
        }
        if let Some(dir) = &self.db_dir {
            let was = before
                .settings
                .db_dir
                .as_ref()
                .map(|d| d.display().to_string());
            tracing::info!(
                "session {id}: tables {} -> {}",
                was.as_deref().unwrap_or("none"),
                dir.display()
            );
        }
        Ok(service.status(&rec))
    }
}
