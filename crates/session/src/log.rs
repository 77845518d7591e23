//! The per-session progress log: one JSON object per line, appended and flushed line by line,
//! so `session tail` can follow it while the daemon writes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::SessionError;

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
    /// Lines that could not be written since the failure was last said, and when it was.
    unwritten: u64,
    said: Option<std::time::Instant>,
}

/// How often a log that cannot be written says so (a full disk fails every line).
const SAY_FAILURE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Where session `id` logs under `log_dir`.
pub fn log_path(log_dir: &Path, id: u64) -> PathBuf {
    log_dir.join(format!("session-{id}.jsonl"))
}

impl ProgressLog {
    /// The directory of the progress logs.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

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
        Ok(ProgressLog {
            path,
            file,
            unwritten: 0,
            said: None,
        })
    }

    /// Appends one line. A log that cannot be written is reported, not fatal to the solve.
    pub fn write(&mut self, p: &Progress) {
        let mut line = serde_json::to_vec(p).expect("progress serialises");
        line.push(b'\n');
        match self.file.write_all(&line) {
            Ok(()) => {
                if self.unwritten > 0 {
                    tracing::info!(
                        "{}: written again ({} lines lost while it could not be)",
                        self.path.display(),
                        self.unwritten
                    );
                }
                (self.unwritten, self.said) = (0, None);
            }
            Err(e) => {
                // Said at once, then once a minute with the lines lost since.
                self.unwritten += 1;
                if self.said.is_none_or(|t| t.elapsed() >= SAY_FAILURE_EVERY) {
                    tracing::warn!(
                        "cannot write {}: {e} ({} lines lost so far)",
                        self.path.display(),
                        self.unwritten
                    );
                    self.said = Some(std::time::Instant::now());
                }
            }
        }
    }
}

/// Iterations a question had reached in the log, to tell what a crash lost: a resume starts
/// from its checkpoint's iteration, and every iteration logged past it since was done again.
#[derive(Debug, Default)]
pub struct LastLogged {
    reached: std::collections::HashMap<String, u64>,
}

impl LastLogged {
    /// Takes in the log's next line; for a resume, how many iterations of its question were
    /// logged past the checkpoint it resumes from (0 when nothing was lost, `None` when the
    /// line is no resume or the question had no line before).
    pub fn note(&mut self, p: &Progress) -> Option<u64> {
        let before = self.reached.insert(p.goal.clone(), p.iteration);
        (p.event == "resume")
            .then_some(before)
            .flatten()
            .map(|reached| reached.saturating_sub(p.iteration))
    }
}

/// What a resume line says of the iterations a crash lost.
pub fn lost_note(lost: u64) -> String {
    format!("{lost} iterations logged after the last checkpoint were lost (done again from it)")
}

/// How many iterations of question `goal` (its attacker's name) the log of session `id`
/// shows past `checkpoint`, the iteration a resume starts from: the work a crash lost, for
/// the resume's line to say (`lost_note`). Reads the log's end only (a week's log is hundreds
/// of megabytes); 0 when it cannot be read or shows nothing past the checkpoint.
pub fn lost_after_checkpoint(log_dir: &Path, id: u64, goal: &str, checkpoint: u64) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(log_path(log_dir, id)) else {
        return 0;
    };
    let len = file.metadata().map_or(0, |m| m.len());
    // Both questions log once a second between checkpoints: their last lines are near the
    // end, unless a question was decided long ago (then nothing of it is lost).
    let mut window = 64u64 << 10;
    loop {
        let from = len.saturating_sub(window);
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut bytes).is_err() {
            return 0;
        }
        let text = String::from_utf8_lossy(&bytes);
        let last = text
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Progress>(l).ok())
            .find(|p| p.goal == goal);
        if let Some(p) = last {
            return p.iteration.saturating_sub(checkpoint);
        }
        if from == 0 || window >= 4 << 20 {
            return 0;
        }
        window *= 4;
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
        // statm counts pages, 4 KiB on most machines but 16 or 64 KiB on some ARM ones.
        (Some(resident), Some(shared)) => {
            resident.saturating_sub(shared) * rustix::param::page_size() as u64
        }
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

    use fanorona_search::INFINITE;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: &str, goal: &str, iteration: u64) -> Progress {
        Progress {
            event: event.into(),
            goal: goal.into(),
            iteration,
            ..Progress::default()
        }
    }

    #[test]
    fn a_resume_says_how_many_logged_iterations_were_lost() {
        let mut last = LastLogged::default();
        assert_eq!(last.note(&line("start", "white", 0)), None);
        assert_eq!(last.note(&line("progress", "white", 900)), None);
        assert_eq!(last.note(&line("progress", "black", 50)), None);
        // Killed at 900 with the checkpoint at 85: 815 done again.
        assert_eq!(last.note(&line("resume", "white", 85)), Some(815));
        // A pause checkpoints first: nothing lost.
        assert_eq!(last.note(&line("paused", "black", 70)), None);
        assert_eq!(last.note(&line("resume", "black", 70)), Some(0));
        // A question never logged before: nothing to compare with.
        assert_eq!(last.note(&line("resume", "red", 3)), None);
    }

    #[test]
    fn the_loss_is_read_from_the_end_of_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ProgressLog::open(dir.path(), 4).unwrap();
        log.write(&line("start", "white", 0));
        for i in 1..=2000 {
            log.write(&line("progress", "white", i));
            log.write(&line("progress", "black", i / 2));
        }
        assert_eq!(lost_after_checkpoint(dir.path(), 4, "white", 1185), 815);
        assert_eq!(lost_after_checkpoint(dir.path(), 4, "black", 1000), 0);
        assert_eq!(lost_after_checkpoint(dir.path(), 4, "red", 0), 0);
        assert_eq!(lost_after_checkpoint(dir.path(), 5, "white", 0), 0);
    }
}
