//! Checkpoints that fail (a full disk, a failing device): what a running session shows and
//! logs until one succeeds again, and the store reopened so that one can.
//!
//! sled 0.34 keeps the first IO error of its log and fails every later flush until the
//! database is opened again, so a store error is followed by a reopen: from then on the store
//! reads what reached the disk (the last checkpoint that succeeded), and the next checkpoint,
//! once space is back, writes everything the search did since, which stayed in memory.

use serde::{Deserialize, Serialize};

use crate::session::log::unix_now;
use crate::session::{SessionError, Sessions};

/// Checkpoints failing since `since`: tried every `RETRY` while they fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointFailure {
    /// When the first of them failed (seconds since the epoch).
    pub since: f64,
    /// Failed tries so far.
    pub tries: u64,
    /// The last error.
    pub message: String,
    /// What the store holds meanwhile: its checkpoints, and the question's iteration.
    pub checkpoints_on_disk: u64,
    pub iteration_on_disk: u64,
    /// The iteration the search had reached at the last try (held in memory only).
    pub iteration_in_memory: u64,
}

/// How often a failing checkpoint is tried again.
pub const RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl CheckpointFailure {
    /// One line for the status, the log and the web page.
    pub fn describe(&self) -> String {
        let lost = self
            .iteration_in_memory
            .saturating_sub(self.iteration_on_disk);
        format!(
            "checkpoints failing for {} s ({} {}): {}; the store holds checkpoint {} (iteration {}), the {lost} iterations since are in memory only and go to disk with the first checkpoint that succeeds (tried every {} s; a kill loses them)",
            (unix_now() - self.since).max(0.0).round(),
            self.tries,
            if self.tries == 1 { "try" } else { "tries" },
            self.message,
            self.checkpoints_on_disk,
            self.iteration_on_disk,
            RETRY.as_secs()
        )
    }
}

/// Records that a checkpoint of question `g` of session `id` failed with `e` when the search
/// was at `iteration`, after `before` (the failure so far, if any). A store error reopens the
/// store first, so that what it reports holding is what is on disk.
pub fn note(
    sessions: &Sessions,
    id: u64,
    g: usize,
    e: &SessionError,
    iteration: u64,
    before: Option<CheckpointFailure>,
) -> CheckpointFailure {
    let mut message = e.to_string();
    if matches!(e, SessionError::Store(_))
        && let Err(reopen) = sessions.recover()
    {
        message = format!("{message}; reopening the store: {reopen}");
    }
    let on_disk = sessions.get(id).ok();
    let (checkpoints_on_disk, iteration_on_disk) = on_disk
        .map(|r| (r.checkpoints, r.goals.get(g).map_or(0, |q| q.iterations)))
        .or(before
            .as_ref()
            .map(|b| (b.checkpoints_on_disk, b.iteration_on_disk)))
        .unwrap_or((0, 0));
    CheckpointFailure {
        since: before.as_ref().map_or_else(unix_now, |b| b.since),
        tries: before.map_or(0, |b| b.tries) + 1,
        message,
        checkpoints_on_disk,
        iteration_on_disk,
        iteration_in_memory: iteration,
    }
}
