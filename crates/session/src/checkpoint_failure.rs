//! Checkpoints that fail (a full disk, a failing device): what a running session shows and
//! logs until one succeeds again.
//!
//! Two cases. Most often the disk is short of room before the store meets it
//! (`Sessions::check_room`): the checkpoint waits, the search goes on in memory, and the
//! first checkpoint once space is back writes it all; nothing is lost. If a write fails
//! anyway (the disk filled between the check and the write), sled keeps the error and cannot
//! even be closed: the store is poisoned, the session's run ends once the disk has room
//! again, and the daemon restarts itself to open the store afresh from the last checkpoint
//! on disk; the work since is lost, and the resume's log line counts it.

use serde::{Deserialize, Serialize};

use crate::log::unix_now;
use crate::{SessionError, Sessions};

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
    /// The store failed a write and takes no more (see the module's comment).
    #[serde(default)]
    pub poisoned: bool,
}

/// How often a failing checkpoint is tried again.
pub const RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl CheckpointFailure {
    /// One line for the status, the log and the web page.
    pub fn describe(&self) -> String {
        let lost = self
            .iteration_in_memory
            .saturating_sub(self.iteration_on_disk);
        let then = if self.poisoned {
            "the store failed and takes no more writes: once the disk has room the daemon restarts itself to reopen it, and resumes from that checkpoint (those iterations are done again)".to_string()
        } else {
            format!(
                "they go to disk with the first checkpoint that succeeds, tried every {} s (a kill loses them)",
                RETRY.as_secs()
            )
        };
        format!(
            "checkpoints failing for {} s ({} {}): {}; the store holds checkpoint {} (iteration {}), the {lost} iterations since are in memory only; {then}",
            (unix_now() - self.since).max(0.0).round(),
            self.tries,
            if self.tries == 1 { "try" } else { "tries" },
            self.message,
            self.checkpoints_on_disk,
            self.iteration_on_disk,
        )
    }
}

/// Records that a checkpoint of question `g` of session `id` failed with `e` when the search
/// was at `iteration`, after `before` (the failure so far, if any).
pub fn note(
    sessions: &Sessions,
    id: u64,
    g: usize,
    e: &SessionError,
    iteration: u64,
    before: Option<CheckpointFailure>,
) -> CheckpointFailure {
    // The record as on disk: a commit whose sync failed is not read back.
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
        message: e.to_string(),
        checkpoints_on_disk,
        iteration_on_disk,
        iteration_in_memory: iteration,
        poisoned: sessions.store().poisoned().is_some(),
    }
}

/// With the store poisoned: waits, searching nothing, until its disk has room again (or
/// `stopping` says the run should end), then returns the error that ends the run so that
/// the daemon restarts.
pub fn wait_for_room(sessions: &Sessions, stopping: &dyn Fn() -> bool) -> SessionError {
    while !stopping() && sessions.check_room(0).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    SessionError::StorePoisoned(sessions.store().poisoned().unwrap_or_default())
}
