//! `Start`: a new session, running, its settings from the request and the config.

use super::{Apply, Refusal, Service, bad_input};
use crate::answers::Started;
use crate::protocol::Start;
use fanorona_rules::movegen::is_lost;
use fanorona_rules::target::playable;
use fanorona_session::name::check_name;
use fanorona_session::settings::new_settings;

impl Apply for Start {
    fn apply(self, service: &Service) -> Result<Started, Refusal> {
        let pos = self.target;
        playable(&pos)?;
        // Refused before the tables are opened (`Sessions::create` checks it again).
        if let Some(n) = &self.name {
            check_name(n).map_err(|e| bad_input(e.to_string()))?;
        }
        if is_lost(&pos) {
            return Err(bad_input(format!(
                "{pos} is already decided: {} has lost",
                pos.side_to_move()
            )));
        }
        let mut settings = new_settings(&service.config, &pos, self.db, self.algo)?;
        if let Some(s) = self.second_level {
            settings.second_level = s;
        }
        let rec = service.sessions.create(&pos, self.name, settings)?;
        tracing::info!("session {}: created for {}", rec.id, rec.root);
        service.workers.poke();
        Ok(Started {
            id: rec.id,
            name: rec.name,
            daemon: service.has_worker,
        })
    }
}
