//! What travels between master and workers: a job and its answer, as rkyv archives after
//! an eight-byte frame (`FNRW` and the wire's version, little-endian). A decoder checks the
//! archive (bytecheck) and every position in it before anything reads them, so a damaged or
//! foreign message is refused with a reason, never run. Binary, not JSON: encoding a job's
//! positions as text and parsing an answer's numbers was a third of the master's time a job
//! (docs/guide/cluster.md, "The master's cost").

use serde::{Deserialize, Serialize};

use fanorona_rules::position::{Color, Position};
use fanorona_rules::{Bitboard, Board};
use fanorona_search::Init;
use fanorona_search::dfpn::Entry;
use fanorona_search::jobs::{Answer, Job};
use fanorona_search::pn::Work;

/// The wire's version: streams and subjects carry it (`cluster::JOBS`), so programs of
/// another wire never see these messages; the frame carries it too.
pub const VERSION: u32 = 4;

/// The first bytes of every message.
const MARK: &[u8; 4] = b"FNRW";

/// Where the archive starts: after the mark and the version, 8-byte aligned.
const ARCHIVE_AT: usize = 8;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WireError {
    #[error("not a message of this wire (it starts {0:?}, not FNRW)")]
    Unmarked(String),
    #[error("a message of wire version {0}; this program speaks {VERSION}")]
    Version(u32),
    #[error("a damaged {what}: {why}")]
    Damaged { what: &'static str, why: String },
}

fn damaged(what: &'static str, why: impl std::fmt::Display) -> WireError {
    WireError::Damaged {
        what,
        why: why.to_string(),
    }
}

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

impl From<fanorona_search::jobs::TablesUsed> for Tables {
    fn from(t: fanorona_search::jobs::TablesUsed) -> Tables {
        Tables {
            board: t.board.to_string(),
            pieces: t.pieces,
            fingerprint: t.fingerprint,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobMsg {
    /// The run (master) it belongs to: its answer goes to `cluster::answers_subject(RUN)`.
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

#[derive(Clone, Debug, PartialEq)]
pub struct AnswerMsg {
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
    pub host: String,
    pub threads: usize,
    pub seconds: f64,
    /// Which delivery of the job this was (above 1: another worker had it and went quiet).
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

// ---- the archives ----

/// A position of the message's board: its pieces and the side to move (0 White, 1 Black).
#[derive(rkyv::Archive, rkyv::Serialize)]
struct PositionRecord {
    white: u64,
    black: u64,
    side: u8,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct TablesRecord {
    board: String,
    pieces: u32,
    fingerprint: Option<String>,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct JobRecord {
    run: String,
    id: u64,
    attacker: u8,
    init: u8,
    rows: u8,
    cols: u8,
    position: PositionRecord,
    history: Vec<PositionRecord>,
    budget: u64,
    tables: Option<TablesRecord>,
    leaf: u32,
}

#[derive(rkyv::Archive, rkyv::Serialize)]
struct AnswerRecord {
    run: String,
    id: u64,
    attacker: u8,
    leaf: u32,
    rows: u8,
    cols: u8,
    position: PositionRecord,
    entries: Vec<[u64; 2]>,
    nodes: u64,
    db_hits: u64,
    repetitions: u64,
    worker: String,
    host: String,
    threads: u32,
    seconds: f64,
    delivered: i64,
}

fn record(p: &Position) -> PositionRecord {
    PositionRecord {
        white: p.white(),
        black: p.black(),
        side: p.side_to_move().byte(),
    }
}

fn color(b: u8, what: &'static str) -> Result<Color, WireError> {
    Color::from_byte(b).ok_or_else(|| damaged(what, format!("side {b}")))
}

fn init_byte(i: Init) -> u8 {
    match i {
        Init::Mobility => 0,
        Init::Material => 1,
        Init::Learned => 2,
    }
}

fn board(rows: u8, cols: u8, what: &'static str) -> Result<Board, WireError> {
    Board::new(rows as usize, cols as usize).map_err(|e| damaged(what, e))
}

fn position(
    board: Board,
    p: &ArchivedPositionRecord,
    what: &'static str,
) -> Result<Position, WireError> {
    let (white, black): (Bitboard, Bitboard) = (p.white.to_native(), p.black.to_native());
    Position::checked_parts(board, white, black, color(p.side, what)?)
        .ok_or_else(|| damaged(what, "pieces off the board or on one point twice"))
}

/// An archive that fails its check, in our words: the checker's own (rkyv's, built
/// without its allocating errors) names its build features, not the message.
fn unchecked(what: &'static str) -> WireError {
    damaged(
        what,
        "its bytes after the frame are not one (cut short, changed, or of another layout)",
    )
}

/// `archive` after the frame.
fn framed(archive: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ARCHIVE_AT + archive.len());
    v.extend_from_slice(MARK);
    v.extend_from_slice(&VERSION.to_le_bytes());
    v.extend_from_slice(archive);
    v
}

/// Runs `read` on the archive of `bytes` once its frame is checked.
fn unframed<T>(
    bytes: &[u8],
    read: impl FnOnce(&[u8]) -> Result<T, WireError>,
) -> Result<T, WireError> {
    if bytes.len() < ARCHIVE_AT || &bytes[..4] != MARK {
        let start = String::from_utf8_lossy(&bytes[..bytes.len().min(8)]).into_owned();
        return Err(WireError::Unmarked(start));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(WireError::Version(version));
    }
    fanorona_session::codec::aligned(&bytes[ARCHIVE_AT..], read)
}

/// A job as it travels.
pub fn encode_job(msg: &JobMsg) -> Vec<u8> {
    let r = JobRecord {
        run: msg.run.clone(),
        id: msg.id,
        attacker: msg.attacker.byte(),
        init: init_byte(msg.init),
        rows: msg.position.board().rows() as u8,
        cols: msg.position.board().cols() as u8,
        position: record(&msg.position),
        history: msg.history.iter().map(record).collect(),
        budget: msg.budget,
        tables: msg.tables.as_ref().map(|t| TablesRecord {
            board: t.board.clone(),
            pieces: t.pieces as u32,
            fingerprint: t.fingerprint.clone(),
        }),
        leaf: msg.leaf,
    };
    framed(&rkyv::to_bytes::<rkyv::rancor::Error>(&r).expect("jobs always serialise"))
}

/// A job as `encode_job` wrote it, checked.
pub fn decode_job(bytes: &[u8]) -> Result<JobMsg, WireError> {
    const W: &str = "job";
    unframed(bytes, |a| {
        let r =
            rkyv::access::<ArchivedJobRecord, rkyv::rancor::Error>(a).map_err(|_| unchecked(W))?;
        let board = board(r.rows, r.cols, W)?;
        Ok(JobMsg {
            run: r.run.as_str().to_string(),
            id: r.id.to_native(),
            attacker: color(r.attacker, W)?,
            init: match r.init {
                0 => Init::Mobility,
                1 => Init::Material,
                2 => Init::Learned,
                i => return Err(damaged(W, format!("first numbers {i}"))),
            },
            position: position(board, &r.position, W)?,
            history: r
                .history
                .iter()
                .map(|p| position(board, p, W))
                .collect::<Result<_, _>>()?,
            budget: r.budget.to_native(),
            tables: r.tables.as_ref().map(|t| Tables {
                board: t.board.as_str().to_string(),
                pieces: t.pieces.to_native() as usize,
                fingerprint: t.fingerprint.as_ref().map(|f| f.as_str().to_string()),
            }),
            leaf: r.leaf.to_native(),
        })
    })
}

/// An answer as it travels.
pub fn encode_answer(msg: &AnswerMsg) -> Vec<u8> {
    let r = AnswerRecord {
        run: msg.run.clone(),
        id: msg.id,
        attacker: msg.attacker.byte(),
        leaf: msg.leaf,
        rows: msg.position.board().rows() as u8,
        cols: msg.position.board().cols() as u8,
        position: record(&msg.position),
        entries: msg.entries.iter().map(|&(pn, dn)| [pn, dn]).collect(),
        nodes: msg.work.nodes,
        db_hits: msg.work.db_hits,
        repetitions: msg.work.repetitions,
        worker: msg.worker.clone(),
        host: msg.host.clone(),
        threads: msg.threads as u32,
        seconds: msg.seconds,
        delivered: msg.delivered,
    };
    framed(&rkyv::to_bytes::<rkyv::rancor::Error>(&r).expect("answers always serialise"))
}

/// An answer as `encode_answer` wrote it, checked.
pub fn decode_answer(bytes: &[u8]) -> Result<AnswerMsg, WireError> {
    const W: &str = "answer";
    unframed(bytes, |a| {
        let r = rkyv::access::<ArchivedAnswerRecord, rkyv::rancor::Error>(a)
            .map_err(|_| unchecked(W))?;
        let board = board(r.rows, r.cols, W)?;
        // Summed into the workers' figures and written to traces: a number, never NaN.
        let seconds = r.seconds.to_native();
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(damaged(W, format!("{seconds} seconds")));
        }
        Ok(AnswerMsg {
            run: r.run.as_str().to_string(),
            id: r.id.to_native(),
            attacker: color(r.attacker, W)?,
            leaf: r.leaf.to_native(),
            position: position(board, &r.position, W)?,
            entries: r
                .entries
                .iter()
                .map(|[pn, dn]| (pn.to_native(), dn.to_native()))
                .collect(),
            work: Work {
                nodes: r.nodes.to_native(),
                db_hits: r.db_hits.to_native(),
                repetitions: r.repetitions.to_native(),
            },
            worker: r.worker.as_str().to_string(),
            host: r.host.as_str().to_string(),
            threads: r.threads.to_native() as usize,
            seconds,
            delivered: r.delivered.to_native(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_rules::movegen::successors;

    fn job() -> JobMsg {
        let start = Position::initial(Board::STANDARD);
        let next = successors(&start)[3];
        JobMsg {
            run: "host-4-black".into(),
            id: 77,
            attacker: Color::Black,
            init: Init::Material,
            position: next,
            history: vec![start],
            budget: 30_000,
            tables: Some(Tables {
                board: "5x9".into(),
                pieces: 9,
                fingerprint: Some("ab12".into()),
            }),
            leaf: 12,
        }
    }

    fn answer() -> AnswerMsg {
        let j = job();
        AnswerMsg {
            run: j.run.clone(),
            id: j.id,
            attacker: j.attacker,
            leaf: j.leaf,
            position: j.position,
            entries: vec![(1, 2), (u64::MAX, 0), (0, u64::MAX)],
            work: Work {
                nodes: 30_001,
                db_hits: 17,
                repetitions: 2,
            },
            worker: "w1".into(),
            host: "node-3".into(),
            threads: 2,
            seconds: 0.0115,
            delivered: 2,
        }
    }

    #[test]
    fn jobs_and_answers_read_back_as_they_were_written() {
        assert_eq!(decode_job(&encode_job(&job())), Ok(job()));
        let mut bare = job();
        (bare.tables, bare.history) = (None, vec![]);
        assert_eq!(decode_job(&encode_job(&bare)), Ok(bare));
        assert_eq!(decode_answer(&encode_answer(&answer())), Ok(answer()));
    }

    #[test]
    fn a_foreign_or_damaged_message_is_refused_with_its_reason() {
        let json = br#"{"version": 1, "run": "r"}"#;
        assert!(matches!(decode_job(json), Err(WireError::Unmarked(_))));
        let mut other = encode_job(&job());
        other[4] = 2;
        assert_eq!(decode_job(&other), Err(WireError::Version(2)));
        // An answer is not a job, a cut message is not either; the reason is in our words,
        // not the checker's build features.
        let answer = encode_answer(&answer());
        let e = decode_job(&answer).unwrap_err();
        assert!(matches!(e, WireError::Damaged { .. }), "{e}");
        assert!(!e.to_string().contains("rancor"), "{e}");
        let whole = encode_job(&job());
        for cut in [0, 5, 8, whole.len() / 2, whole.len() - 1] {
            assert!(decode_job(&whole[..cut]).is_err(), "cut at {cut}");
        }
        // Pieces off the board, or a board there is not, are caught before anything reads
        // them.
        let written = |rows: u8, white: u64| {
            let record = JobRecord {
                run: "r".into(),
                id: 1,
                attacker: 0,
                init: 0,
                rows,
                cols: 9,
                position: PositionRecord {
                    white,
                    black: 0,
                    side: 0,
                },
                history: vec![],
                budget: 1,
                tables: None,
                leaf: 0,
            };
            framed(&rkyv::to_bytes::<rkyv::rancor::Error>(&record).unwrap())
        };
        assert!(decode_job(&written(5, 1)).is_ok());
        for seconds in [f64::NAN, f64::INFINITY, -1.0] {
            let bad = AnswerMsg {
                seconds,
                ..super::tests::answer()
            };
            assert!(matches!(
                decode_answer(&encode_answer(&bad)),
                Err(WireError::Damaged { .. })
            ));
        }
        for bad in [written(5, 1 << 63), written(4, 1)] {
            assert!(matches!(decode_job(&bad), Err(WireError::Damaged { .. })));
        }
    }
}
