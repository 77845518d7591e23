//! What travels between master and workers: a job and its answer, as JSON. Positions are
//! texts, so a message reads the same to any program of the same wire version.

use serde::{Deserialize, Serialize};

use crate::position::{Color, Position};
use crate::search::Init;
use crate::search::dfpn::Entry;
use crate::search::jobs::{Answer, Job};
use crate::search::pn::Work;

/// The wire's version: a worker refuses a job of another.
pub const VERSION: u32 = 1;

/// The tables a job's search reads: the board's, up to this many pieces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    pub board: String,
    pub pieces: usize,
    /// Their manifest's fingerprint (`egdb::manifest::fingerprint`): a worker whose tables
    /// have another refuses the job.
    #[serde(default)]
    pub fingerprint: Option<String>,
}

impl From<crate::search::jobs::TablesUsed> for Tables {
    fn from(t: crate::search::jobs::TablesUsed) -> Tables {
        Tables {
            board: t.board.to_string(),
            pieces: t.pieces,
            fingerprint: t.fingerprint,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobMsg {
    pub version: u32,
    /// The run (master) it belongs to: its answer goes to `fanorona.answers.RUN`.
    pub run: String,
    /// The master's number for it; answers name it.
    pub id: u64,
    pub attacker: Color,
    /// How first numbers are set.
    pub init: Init,
    pub position: Position,
    pub history: Vec<Position>,
    pub budget: u64,
    pub tables: Option<Tables>,
    pub leaf: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerMsg {
    pub version: u32,
    pub run: String,
    pub id: u64,
    /// The question's side, as the job said.
    pub attacker: Color,
    pub leaf: u32,
    pub position: Position,
    /// (pn, dn) of each successor, in `successors` order.
    pub entries: Vec<(u64, u64)>,
    pub work: Work,
    /// Who ran it, where, with how many threads, and how long it took.
    pub worker: String,
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub threads: usize,
    pub seconds: f64,
    /// Which delivery of the job this was (above 1: another worker had it and went quiet).
    #[serde(default)]
    pub delivered: i64,
}

/// How a worker signs its answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub name: String,
    pub host: String,
    pub threads: usize,
}

impl JobMsg {
    pub fn new(
        run: &str,
        id: u64,
        job: &Job,
        attacker: Color,
        init: Init,
        tables: Option<Tables>,
    ) -> JobMsg {
        JobMsg {
            version: VERSION,
            run: run.to_string(),
            id,
            attacker,
            init,
            position: job.position,
            history: job.history.clone(),
            budget: job.budget,
            tables,
            leaf: job.leaf,
        }
    }

    pub fn job(&self) -> Job {
        Job {
            leaf: self.leaf,
            position: self.position,
            history: self.history.clone(),
            budget: self.budget,
        }
    }
}

impl AnswerMsg {
    pub fn new(
        job: &JobMsg,
        answer: &Answer,
        worker: &Signature,
        seconds: f64,
        delivered: i64,
    ) -> AnswerMsg {
        AnswerMsg {
            version: VERSION,
            run: job.run.clone(),
            id: job.id,
            attacker: job.attacker,
            leaf: answer.leaf,
            position: answer.position,
            entries: answer.entries.iter().map(|e| (e.pn, e.dn)).collect(),
            work: answer.work,
            worker: worker.name.clone(),
            host: worker.host.clone(),
            threads: worker.threads,
            seconds,
            delivered,
        }
    }

    pub fn answer(&self) -> Answer {
        Answer {
            leaf: self.leaf,
            position: self.position,
            entries: entries(&self.entries),
            work: self.work,
        }
    }
}

/// Successors' numbers as answers carry them, (pn, dn) pairs, as df-pn entries.
pub fn entries(pairs: &[(u64, u64)]) -> Vec<Entry> {
    pairs.iter().map(|&(pn, dn)| Entry { pn, dn }).collect()
}
