//! What the session commands answer with `--json` where no daemon answer says it
//! (`session start`, `session certificate`, `session curve`): typed, so that the command line
//! only fills and prints them. (`session certificate --move` answers with the daemon's
//! `answers::Certificates`, whichever side wrote them.)

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `session start --json`: the new session's number (all the command has ever printed of
/// the daemon's answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStarted {
    pub id: u64,
}

/// `session certificate ID PREFIX --json`: the session's certificates, copied to PREFIX and
/// checked again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCertificates {
    pub session: u64,
    pub certificates: Vec<CertificateCopied>,
}

/// One certificate handed out by `session certificate`: where it went, and its check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateCopied {
    /// "white wins" or "black wins".
    pub goal: String,
    pub path: PathBuf,
    pub bytes: u64,
    pub verified: bool,
}

/// `session curve --json`: the points written, and the files (null where not asked for).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurveWritten {
    pub points: usize,
    pub csv: Option<PathBuf>,
    pub png: Option<PathBuf>,
    pub svg: Option<PathBuf>,
}
