//! The service: what the daemon does for each command, one `Apply` a command in the files
//! beside this one, and `handle`, which hands a request to its command's `apply`. Commands
//! run without a daemon (`fanorona session ...` with none running) call `apply` in their
//! own process, on a `Service` without workers.
//!
//! - `start.rs`: a new session;
//! - `status.rs`: a session's status, every session's;
//! - `control.rs`: pause, resume, stop, tune;
//! - `manage.rs`: delete, rename;
//! - `inspect.rs`: a session's moves and curve, the rote store;
//! - `certificate.rs`: certificates, on request and when a session is solved;
//! - `backup.rs`: a backup on request, and the daemon's own every `backup_every`.

mod backup;
mod certificate;
mod control;
mod inspect;
mod manage;
mod start;
mod status;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

use super::DataDir;
use super::protocol::{Command, Request};
use super::workers::Workers;
use fanorona_rules::target::TargetError;
use fanorona_search::config::Config;
use fanorona_session::settings::SettingsError;
use fanorona_session::{SessionError, Sessions};

/// An error answered to a client.
#[derive(Debug)]
pub struct Refusal {
    pub message: String,
    /// The request was at fault (exit status 2, HTTP 400), not the daemon or its machine.
    pub bad_input: bool,
}

/// A refusal of the request itself.
fn bad_input(message: String) -> Refusal {
    Refusal {
        message,
        bad_input: true,
    }
}

impl From<SettingsError> for Refusal {
    fn from(e: SettingsError) -> Refusal {
        Refusal {
            bad_input: e.is_bad_input(),
            message: e.to_string(),
        }
    }
}

impl From<TargetError> for Refusal {
    fn from(e: TargetError) -> Refusal {
        bad_input(e.to_string())
    }
}

impl From<SessionError> for Refusal {
    fn from(e: SessionError) -> Refusal {
        let bad_input = matches!(
            e,
            SessionError::Unknown(_)
                | SessionError::BadState { .. }
                | SessionError::Line { .. }
                | SessionError::Name(_)
                | SessionError::NameTaken { .. }
        );
        Refusal {
            message: e.to_string(),
            bad_input,
        }
    }
}

/// A command the service carries out.
pub trait Apply: Command {
    fn apply(self, service: &Service) -> Result<Self::Answer, Refusal>;
}

/// The commands' side of the daemon (also used in-process when no daemon runs).
pub struct Service {
    pub sessions: Sessions,
    pub config: Config,
    pub dir: DataDir,
    /// Whether a worker runs sessions here (false for a command run without a daemon).
    pub has_worker: bool,
    /// The workers' sessions and controls (`workers.main` is also the solve a command runs
    /// in its own process).
    pub workers: Workers,
    /// The daemon is shutting down: certificates being written give up.
    pub closing: fanorona_certificate::Cancel,
    /// Prefixes of certificates being written: two writers on one prefix would share its
    /// temporary files, list and leaves.
    writing: Mutex<HashSet<PathBuf>>,
    /// Sessions whose final checkpoint failed as the daemon exited (a full disk).
    pub unwritten: Mutex<Vec<String>>,
    /// The store failed a write: the daemon shuts down to start again in a new process.
    pub restart: std::sync::atomic::AtomicBool,
    /// The daemon's own backups as they stand (`backup.rs` keeps it up to date).
    pub backups: Mutex<crate::backup::BackupsView>,
    /// Held while a backup is taken or a session put back from one: a backup pruned as it
    /// is read would not serve.
    backups_busy: Mutex<()>,
    /// How many times each session was put back from a backup since the daemon started.
    mended: Mutex<std::collections::HashMap<u64, u32>>,
}

impl Service {
    pub fn new(sessions: Sessions, config: Config, dir: DataDir, has_worker: bool) -> Service {
        let backups = crate::backup::BackupsView::of(
            &crate::backup::rolling_dir(&config, &dir),
            config.backup_every,
        );
        Service {
            sessions,
            backups: Mutex::new(backups),
            backups_busy: Mutex::new(()),
            mended: Mutex::default(),
            workers: Workers::new(&config),
            config,
            dir,
            has_worker,
            closing: Default::default(),
            writing: Mutex::default(),
            unwritten: Mutex::default(),
            restart: Default::default(),
        }
    }

    /// Second-level searches go through `dispatcher` (the config's `[cluster]`).
    pub fn dispatching(
        mut self,
        dispatcher: Option<std::sync::Arc<dyn fanorona_search::jobs::Dispatcher>>,
    ) -> Service {
        self.workers.main.control.dispatcher = dispatcher.clone();
        self.workers.spare.control.dispatcher = dispatcher;
        self
    }

    /// Ends the service. Its store is closed only if that cannot hang: sled's close flushes,
    /// and after a failed write (or with the disk short of room) that flush may wait for
    /// good, so then the store is left for the process's end to release (what is on disk
    /// is whole either way; `work_lost` says a final checkpoint failed).
    pub fn close(self, work_lost: bool) {
        let store = self.sessions.store();
        if work_lost || store.poisoned().is_some() || store.sync().is_err() {
            std::mem::forget(self);
        }
    }

    /// Answers one request from the socket: its command applied, the answer as JSON.
    pub fn handle(&self, request: Request) -> Result<Value, Refusal> {
        match request {
            Request::Start(c) => self.answer(c),
            Request::List(c) => self.answer(c),
            Request::Status(c) => self.answer(c),
            Request::Pause(c) => self.answer(c),
            Request::Resume(c) => self.answer(c),
            Request::Stop(c) => self.answer(c),
            Request::Curve(c) => self.answer(c),
            Request::RoteStats(c) => self.answer(c),
            Request::RoteExport(c) => self.answer(c),
            Request::Moves(c) => self.answer(c),
            Request::Tune(c) => self.answer(c),
            Request::Certificate(c) => self.answer(c),
            Request::Delete(c) => self.answer(c),
            Request::Rename(c) => self.answer(c),
            Request::Backup(c) => self.answer(c),
        }
    }

    fn answer<C: Apply>(&self, command: C) -> Result<Value, Refusal> {
        let answer = command.apply(self)?;
        Ok(serde_json::to_value(answer).expect("answers serialise"))
    }
}
