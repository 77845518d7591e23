//! What a session operation can fail with, one type for the layer.

use std::path::PathBuf;

use thiserror::Error;

use crate::codec::DecodeError;
use crate::name;
use crate::record::State;
use crate::store::StoreError;

/// A session's recorded state as a refusal names it: "running" is to be worked on, which
/// without a daemon means waiting for one.
fn state_in_words(state: State) -> &'static str {
    match state {
        State::Running => "running (or waiting for a daemon to run it)",
        s => s.name(),
    }
}

#[derive(Debug, Error)]
pub enum SessionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the store's disk has {free_mib} MiB free, and a checkpoint needs {need_mib} MiB (its writes twice over, and {margin_mib} MiB kept free so that the store never meets a full disk)"
    )]
    DiskFull {
        free_mib: u64,
        need_mib: u64,
        margin_mib: u64,
    },
    #[error(
        "the store failed writing ({0}); the process that has it open must restart to reopen it"
    )]
    StorePoisoned(String),
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("no session {0} (see `fanorona session list`)")]
    Unknown(u64),
    #[error("not a fanorona session store: {0}")]
    Foreign(String),
    #[error("the session store is damaged: {0}")]
    Damaged(String),
    #[error("move {index} '{text}' of the line in {position}: {reason}")]
    Line {
        index: usize,
        text: String,
        position: String,
        reason: String,
    },
    #[error("internal error: {0}")]
    Internal(String),
    #[error("the store has format {found}, newer than this build's {known}: use a newer fanorona")]
    Newer { found: u32, known: u32 },
    #[error("no upgrade step from store format {from} (see migrations/)")]
    NoMigration { from: u32 },
    #[error("session {id} is {}: {action} needs {needs}", state_in_words(*state))]
    BadState {
        id: u64,
        state: State,
        action: &'static str,
        needs: &'static str,
    },
    #[error(transparent)]
    Name(#[from] name::NameError),
    #[error("session {id} is already named '{name}': give another name")]
    NameTaken { id: u64, name: String },
    /// Settings that cannot run on the session's board (first numbers without weights).
    #[error("{0}")]
    Unusable(String),
    #[error("cannot write the progress log {path}: {source}")]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
