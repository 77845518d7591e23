//! The per-session progress log: one JSON object per line, appended and flushed line by line,
//! so `session tail` can follow it while the daemon writes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::session::SessionError;

/// One line of the progress log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Progress {
    /// Seconds since the Unix epoch.
    pub time: f64,
    /// start, resume, progress, checkpoint, goal, solved, paused, stopped, error.
    pub event: String,
    pub session: u64,
    /// The attacker of the goal being searched.
    pub goal: String,
    pub iteration: u64,
    pub nodes: u64,
    pub nodes_per_second: f64,
    /// The root's proof and disproof numbers; infinity is written "inf".
    #[serde(with = "proof_number")]
    pub root_pn: u64,
    #[serde(with = "proof_number")]
    pub root_dpn: u64,
    pub first_level: u64,
    pub rote_hits: u64,
    /// Rote hits per node created.
    pub rote_hit_rate: f64,
    pub db_hits: u64,
    /// Resident memory of the process.
    pub memory_bytes: u64,
    pub store_bytes: u64,
    /// Solving time of this goal (over all runs).
    pub seconds: f64,
    pub checkpoints: u64,
    /// Bytes the checkpoint this line reports wrote to the tree: chunks and patch, and the
    /// chunks of a fold it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The log file of one session.
pub struct ProgressLog {
    path: PathBuf,
    file: File,
}

/// Where session `id` logs under `log_dir`.
pub fn log_path(log_dir: &Path, id: u64) -> PathBuf {
    log_dir.join(format!("session-{id}.jsonl"))
}

impl ProgressLog {
    pub fn open(log_dir: &Path, id: u64) -> Result<ProgressLog, SessionError> {
        let path = log_path(log_dir, id);
        let err = |source| SessionError::Log {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(log_dir).map_err(err)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        Ok(ProgressLog { path, file })
    }

    /// Appends one line. A log that cannot be written is reported, not fatal to the solve.
    pub fn write(&mut self, p: &Progress) {
        let mut line = serde_json::to_vec(p).expect("progress serialises");
        line.push(b'\n');
        if let Err(e) = self.file.write_all(&line) {
            tracing::warn!("cannot write {}: {e}", self.path.display());
        }
    }
}

/// Resident memory of this process that is its own, in bytes: resident pages less the
/// file-backed ones (statm's "shared"), so memory-mapped endgame tables, which are the page
/// cache's and given back under pressure, are not counted (0 where /proc is missing).
pub fn resident_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let field = |i| statm.split_whitespace().nth(i)?.parse::<u64>().ok();
    match (field(1), field(2)) {
        (Some(resident), Some(shared)) => resident.saturating_sub(shared) * 4096,
        _ => 0,
    }
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A proof or disproof number in JSON: a number, or "inf" for infinity.
mod proof_number {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::search::INFINITE;

    pub fn serialize<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *n >= INFINITE {
            s.serialize_str("inf")
        } else {
            s.serialize_u64(*n)
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Finite(u64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match Number::deserialize(d)? {
            Number::Finite(n) => Ok(n),
            Number::Text(t) if t == "inf" => Ok(INFINITE),
            Number::Text(t) => Err(serde::de::Error::custom(format!(
                "'{t}' is not a proof number"
            ))),
        }
    }
}
