//! A trace of jobs: each job a master had run (its question, position, the path to it as one
//! hash, its budget) with what it found and cost (its answer, nodes, seconds). The
//! simulator (`cluster::simulate`) replays jobs from it instead of running them again.
//!
//! One JSON object a line: a header first (the board, how first numbers are set, the
//! tables), then one line a job. A job is keyed by all it depends on except the worker's
//! warm df-pn table: a replayed answer is the one its first run gave.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::wire::Tables;
use fanorona_rules::position::{Color, Position};
use fanorona_rules::repetition::position_key;
use fanorona_search::Init;
use fanorona_search::jobs::{Answer, Job};
use fanorona_search::pn::Work;

/// The trace format's version, in its header.
pub const VERSION: u32 = 1;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}, line {line}: {message}")]
    Format {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path} traces other jobs ({theirs}), not these ({ours}): give another file")]
    Other {
        path: String,
        theirs: String,
        ours: String,
    },
}

/// What every job of a trace shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub trace: u32,
    pub board: String,
    pub init: Init,
    pub tables: Option<Tables>,
    /// Entries of the df-pn table the jobs ran with (0 in traces from before it was
    /// written): a job's answer depends on it, so traces of other sizes are not mixed.
    #[serde(default)]
    pub table_entries: u64,
}

impl Header {
    /// The header of jobs run as workers run them (`worker::TABLE_BYTES`).
    pub fn new(board: String, init: Init, tables: Option<Tables>) -> Header {
        Header {
            trace: VERSION,
            board,
            init,
            tables,
            table_entries: fanorona_search::pn::second_level_entries(super::worker::TABLE_BYTES)
                as u64,
        }
    }

    fn describe(&self) -> String {
        let tables = self.tables.as_ref().map_or("no tables".to_string(), |t| {
            format!(
                "{} tables to {} pieces{}",
                t.board,
                t.pieces,
                t.fingerprint
                    .as_deref()
                    .map_or(String::new(), |f| format!(" ({})", &f[..f.len().min(12)]))
            )
        });
        format!(
            "trace v{}, {}, first numbers {:?}, {tables}, tables of {} entries",
            self.trace, self.board, self.init, self.table_entries
        )
    }
}

/// One job as run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub attacker: Color,
    pub position: Position,
    /// `path_key` of the positions before it.
    pub path: u64,
    pub budget: u64,
    /// (pn, dn) of each successor, in `successors` order.
    pub entries: Vec<(u64, u64)>,
    pub work: Work,
    /// How long it ran, on one thread.
    pub seconds: f64,
}

/// An ordered hash of the positions before a job's (its path decides repetitions).
pub fn path_key(history: &[Position]) -> u64 {
    history.iter().fold(0x243F_6A88_85A3_08D3, |h, p| {
        (h.rotate_left(23) ^ position_key(p)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

type Key = (Color, Position, u64, u64);

fn key(attacker: Color, job: &Job) -> Key {
    (attacker, job.position, path_key(&job.history), job.budget)
}

/// A job's recorded outcome.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub entries: Vec<(u64, u64)>,
    pub work: Work,
    pub seconds: f64,
}

impl Recorded {
    /// The answer it gives `job`.
    pub fn answer(&self, job: &Job) -> Answer {
        Answer {
            leaf: job.leaf,
            position: job.position,
            entries: super::wire::entries(&self.entries),
            work: self.work,
        }
    }
}

/// A trace in memory, and its file, to which jobs recorded now are added.
pub struct Trace {
    path: PathBuf,
    jobs: HashMap<Key, Recorded>,
    /// Whether recorded jobs are kept in `jobs` too (not by a master that only writes).
    keep: bool,
    file: BufWriter<File>,
}

fn io(path: &Path, e: impl std::fmt::Display) -> TraceError {
    TraceError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl Trace {
    /// The trace at `path`, made with `header` if there is none; one of other jobs (another
    /// board, first numbers or tables) is refused.
    pub fn open(path: &Path, header: &Header) -> Result<Trace, TraceError> {
        Trace::open_with(path, header, true)
    }

    /// The trace at `path` to add jobs to, its jobs neither read nor kept (a master's
    /// memory does not grow with its trace).
    pub fn append(path: &Path, header: &Header) -> Result<Trace, TraceError> {
        Trace::open_with(path, header, false)
    }

    fn open_with(path: &Path, header: &Header, keep: bool) -> Result<Trace, TraceError> {
        let mut jobs = HashMap::new();
        let fresh = !path.exists() || std::fs::metadata(path).map_err(|e| io(path, e))?.len() == 0;
        if !fresh {
            let reader = BufReader::new(File::open(path).map_err(|e| io(path, e))?);
            let format = |line: usize, message: String| TraceError::Format {
                path: path.display().to_string(),
                line,
                message,
            };
            for (i, text) in reader.lines().enumerate() {
                let text = text.map_err(|e| io(path, e))?;
                if i == 0 {
                    let theirs: Header =
                        serde_json::from_str(&text).map_err(|e| format(1, e.to_string()))?;
                    if theirs != *header {
                        return Err(TraceError::Other {
                            path: path.display().to_string(),
                            theirs: theirs.describe(),
                            ours: header.describe(),
                        });
                    }
                    if !keep {
                        break;
                    }
                    continue;
                }
                if text.trim().is_empty() {
                    continue;
                }
                // A last line cut short (the run was killed while writing it) is dropped.
                let line: Line = match serde_json::from_str(&text) {
                    Ok(l) => l,
                    Err(e) if e.is_eof() => continue,
                    Err(e) => return Err(format(i + 1, e.to_string())),
                };
                jobs.insert(
                    (line.attacker, line.position, line.path, line.budget),
                    Recorded {
                        entries: line.entries,
                        work: line.work,
                        seconds: line.seconds,
                    },
                );
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| io(path, e))?;
        let mut file = BufWriter::new(file);
        if fresh {
            let text = serde_json::to_string(header).expect("headers serialise");
            writeln!(file, "{text}").map_err(|e| io(path, e))?;
        }
        Ok(Trace {
            path: path.to_path_buf(),
            jobs,
            keep,
            file,
        })
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The run of `job` of question `attacker`, if recorded.
    pub fn get(&self, attacker: Color, job: &Job) -> Option<&Recorded> {
        self.jobs.get(&key(attacker, job))
    }

    /// Records `answer` to `job`, which took `seconds`.
    pub fn record(
        &mut self,
        attacker: Color,
        job: &Job,
        answer: &Answer,
        seconds: f64,
    ) -> Result<(), TraceError> {
        let line = Line {
            attacker,
            position: job.position,
            path: path_key(&job.history),
            budget: job.budget,
            entries: answer.entries.iter().map(|e| (e.pn, e.dn)).collect(),
            work: answer.work,
            seconds,
        };
        let text = serde_json::to_string(&line).expect("trace lines serialise");
        writeln!(self.file, "{text}").map_err(|e| io(&self.path, e))?;
        if self.keep {
            self.jobs.insert(
                key(attacker, job),
                Recorded {
                    entries: line.entries,
                    work: line.work,
                    seconds,
                },
            );
        }
        Ok(())
    }

    /// Writes what is buffered.
    pub fn flush(&mut self) -> Result<(), TraceError> {
        self.file.flush().map_err(|e| io(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_rules::Board;
    use fanorona_search::dfpn::Entry;

    fn job(budget: u64) -> Job {
        let start = Position::initial("3x5".parse::<Board>().unwrap());
        Job {
            leaf: 7,
            position: start,
            history: Vec::new(),
            budget,
        }
    }

    fn answer(job: &Job, pn: u64) -> Answer {
        Answer {
            leaf: job.leaf,
            position: job.position,
            entries: vec![Entry { pn, dn: 2 }, Entry { pn: 3, dn: 4 }],
            work: Work {
                nodes: 99,
                db_hits: 1,
                repetitions: 0,
            },
        }
    }

    #[test]
    fn jobs_recorded_are_replayed_after_a_reopen_and_a_cut_last_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        let header = Header::new("3x5".into(), Init::Material, None);
        let (a, b) = (job(300), job(301));
        {
            let mut t = Trace::open(&path, &header).unwrap();
            assert!(t.get(Color::White, &a).is_none());
            t.record(Color::White, &a, &answer(&a, 5), 0.25).unwrap();
            t.record(Color::Black, &b, &answer(&b, 6), 0.5).unwrap();
            assert_eq!(t.get(Color::White, &a).unwrap().seconds, 0.25);
            t.flush().unwrap();
        }
        // Killed while writing a line.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"attacker\":\"white\",\"posi");
        std::fs::write(&path, text).unwrap();
        let t = Trace::open(&path, &header).unwrap();
        assert_eq!(t.len(), 2);
        let r = t.get(Color::White, &a).unwrap();
        assert_eq!(r.answer(&a), answer(&a, 5));
        assert_eq!(r.seconds, 0.25);
        // Another question, budget or path is another job.
        assert!(t.get(Color::Black, &a).is_none());
        assert!(t.get(Color::White, &job(302)).is_none());
        let mut moved = a.clone();
        moved.history = vec![a.position];
        assert!(t.get(Color::White, &moved).is_none());
        assert_eq!(t.get(Color::Black, &b).unwrap().answer(&b), answer(&b, 6));
    }

    #[test]
    fn a_trace_of_other_jobs_is_refused_by_name_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        let header = Header::new("3x5".into(), Init::Material, None);
        let a = job(300);
        let mut t = Trace::append(&path, &header).unwrap();
        t.record(Color::White, &a, &answer(&a, 5), 0.25).unwrap();
        t.flush().unwrap();
        // A writer keeps nothing in memory.
        assert!(t.get(Color::White, &a).is_none());
        drop(t);
        let before = std::fs::read(&path).unwrap();
        let other = Header::new("3x5".into(), Init::Mobility, None);
        let e = Trace::open(&path, &other).err().unwrap().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains("Mobility") && e.contains("Material"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        std::fs::write(&path, "not json\n").unwrap();
        let e = Trace::open(&path, &header).err().unwrap().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
