//! A command of the session commands, sent to the daemon or, with none running, to a
//! service in this process.

use super::*;

use anyhow::anyhow;
use serde_json::Value;

use crate::cli::output::Failure;
use fanorona::config::Config;
use fanorona::daemon::answers::RoteRow;
use fanorona::daemon::client::{ClientError, call};
use fanorona::daemon::protocol::{self, StatusOf};
use fanorona::daemon::{self, Apply, DaemonError, DataDir, Service};

/// A refusal as a failure: bad input (exit 2) or not.
pub(super) fn refused(message: String, bad_input: bool) -> Failure {
    if bad_input {
        Failure::input(anyhow!(message))
    } else {
        Failure::other(anyhow!(message))
    }
}

/// A command the session commands send, to the daemon or, with none running, to a service in
/// this process.
pub trait Ask: Apply + Clone {
    /// Whether it may make the data directory (only a start does: a mistyped one is named,
    /// not made empty).
    const MAKES_DATA: bool = false;

    /// Its answer when the data directory does not exist (`None`: the directory is named as
    /// missing).
    fn without_data() -> Option<Self::Answer> {
        None
    }
}

impl Ask for protocol::Start {
    const MAKES_DATA: bool = true;
}

impl Ask for protocol::List {}

impl Ask for protocol::RoteExport {
    fn without_data() -> Option<Vec<RoteRow>> {
        Some(Vec::new())
    }
}

impl Ask for StatusOf {}
impl Ask for protocol::Pause {}
impl Ask for protocol::Resume {}
impl Ask for protocol::Stop {}
impl Ask for protocol::Curve {}
impl Ask for protocol::RoteStatsOf {}
impl Ask for protocol::Moves {}
impl Ask for protocol::Tune {}
impl Ask for protocol::Delete {}
impl Ask for protocol::Rename {}
impl Ask for protocol::Backup {}

/// Sends `command` to the daemon, or, with none running, answers it here. Says whether the
/// daemon answered.
pub fn ask<C: Ask>(config: &Config, command: C) -> Result<(C::Answer, bool), Failure> {
    let dir = DataDir::new(&config.data_dir);
    if !C::MAKES_DATA && !dir.root.exists() {
        if let Some(answer) = C::without_data() {
            return Ok((answer, false));
        }
        return Err(Failure::input(anyhow!(
            "{}: no such data directory, so no session store (`fanorona session start` or `fanorona solve` makes one; give --data-dir or the config's data_dir for another)",
            dir.root.display()
        )));
    }
    match call(&dir.socket(), command.clone()) {
        Ok(v) => return Ok((v, true)),
        Err(ClientError::NoDaemon(_)) => {}
        Err(ClientError::Refused { message, bad_input }) => {
            return Err(refused(message, bad_input));
        }
        Err(e) => return Err(Failure::other(e)),
    }
    // Another user's data directory: the cause said, not taken for one without a store.
    if let Err(e) = std::fs::read_dir(&dir.root)
        && e.kind() == std::io::ErrorKind::PermissionDenied
    {
        return Err(Failure::input(anyhow!(
            "{}: {e}: it is another user's (its daemon's socket too); run as its owner, or give --data-dir a directory of your own",
            dir.root.display()
        )));
    }
    // A directory that exists but never held a store (a home directory given by mistake) is
    // named, not given a store, a lock file and an empty answer.
    if !C::MAKES_DATA && dir.root.is_dir() && !dir.store().exists() && !dir.created().exists() {
        if let Some(answer) = C::without_data() {
            return Ok((answer, false));
        }
        return Err(Failure::input(anyhow!(
            "{} holds no session store ({} is not there: `fanorona session start` or `fanorona solve` makes one; give --data-dir or the config's data_dir for another)",
            dir.root.display(),
            dir.store().display()
        )));
    }
    let _lock = match daemon::lock(&dir) {
        Ok(l) => l,
        // A daemon that is starting holds the lock before it listens: ask it again shortly.
        Err(DaemonError::Locked { .. }) => {
            for _ in 0..50 {
                std::thread::sleep(Duration::from_millis(100));
                match call(&dir.socket(), command.clone()) {
                    Ok(v) => return Ok((v, true)),
                    Err(ClientError::NoDaemon(_)) => continue,
                    Err(ClientError::Refused { message, bad_input }) => {
                        return Err(refused(message, bad_input));
                    }
                    Err(e) => return Err(Failure::other(e)),
                }
            }
            return Err(Failure::other(daemon::lock(&dir).err().map_or_else(
                || anyhow!("the daemon on {} does not answer", dir.root.display()),
                anyhow::Error::from,
            )));
        }
        Err(e) => return Err(daemon_failure(e)),
    };
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let service = Service::new(sessions, config.clone(), dir, false);
    command
        .apply(&service)
        .map(|v| (v, false))
        .map_err(|r| refused(r.message, r.bad_input))
}

/// An answer as `--json` prints it: its JSON, keys in order (as the daemon's socket and the
/// web API have them).
pub(super) fn json_of(answer: impl serde::Serialize) -> Value {
    serde_json::to_value(answer).expect("answers serialise")
}
