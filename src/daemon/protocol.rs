//! The daemon's protocol: one JSON object per line each way over a Unix socket.
//! A request is `{"protocol": 1, "request": {"command": ..., ...}}`; the answer is
//! `{"protocol": 1, "ok": true, "result": ...}` or `{"protocol": 1, "ok": false, "error": ..,
//! "bad_input": ..}`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::search::{Algorithm, Init, SecondLevel};

pub const PROTOCOL: u32 = 1;

/// What a client asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    Start {
        /// A board (RxC) or a position.
        target: String,
        db: Option<PathBuf>,
        algo: Option<Algorithm>,
        name: Option<String>,
        /// PN²'s second-level bound (default: the daemon's config).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        second_level: Option<SecondLevel>,
    },
    List,
    Status {
        id: u64,
    },
    Pause {
        id: u64,
    },
    Resume {
        id: u64,
    },
    Stop {
        id: u64,
    },
    Curve {
        id: u64,
        /// Only the points after these iterations, one per question in the session's order
        /// (all points when left out).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<Vec<u64>>,
    },
    RoteStats,
    RoteExport,
    /// The moves at the end of `line` (from the root) in each question's first-level tree,
    /// as last checkpointed; with `heaviest`, the line most of the nodes go down from there.
    Moves {
        id: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        line: Vec<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        heaviest: bool,
        /// Also the nodes below by pieces on the board.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pieces: bool,
        /// Also how many distinct searches the live nodes below stand for.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        transpositions: bool,
    },
    /// Changes the second-level bound, the leaves' first numbers or the tables (a set
    /// deciding at least as much) of a paused, stopped or failed session.
    Tune {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        second_level: Option<SecondLevel>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        init: Option<Init>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        db_dir: Option<PathBuf>,
    },
    /// Writes and checks, under `prefix` (an absolute path), the certificates of a session's
    /// decided questions, or with `mv` of the position after that decided capture of the
    /// root, from the store, while the sessions go on. Answered when they are written (a
    /// client waits without a time limit; the daemon's log shows the progress).
    Certificate {
        id: u64,
        prefix: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mv: Option<String>,
        /// Only the question of this side's win ("white" or "black").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        goal: Option<String>,
        /// A partial certificate: search nodes re-deciding one node may take before it is
        /// left open and listed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        leaf_budget: Option<u64>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub protocol: u32,
    pub request: Request,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Answer {
    pub protocol: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The request itself was wrong (an unknown session, a bad position).
    #[serde(default)]
    pub bad_input: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no daemon answers on {0}")]
    NoDaemon(PathBuf),
    #[error("talking to the daemon on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the daemon's answer is not understood: {0}")]
    Garbled(String),
    #[error("{message}")]
    Refused { message: String, bad_input: bool },
}

/// Sends `request` to the daemon listening on `socket` and waits for its answer.
pub fn call(socket: &Path, request: Request) -> Result<serde_json::Value, ClientError> {
    call_within(socket, request, Some(Duration::from_secs(120)))
}

/// `call`, waiting for the answer at most `timeout` (`None`: as long as it takes, for a
/// request that works for long, such as `Certificate`).
pub fn call_within(
    socket: &Path,
    request: Request,
    timeout: Option<Duration>,
) -> Result<serde_json::Value, ClientError> {
    let stream =
        UnixStream::connect(socket).map_err(|_| ClientError::NoDaemon(socket.to_path_buf()))?;
    let io = |source| ClientError::Io {
        path: socket.to_path_buf(),
        source,
    };
    stream.set_read_timeout(timeout).map_err(io)?;
    let mut line = serde_json::to_vec(&Envelope {
        protocol: PROTOCOL,
        request,
    })
    .expect("requests serialise");
    line.push(b'\n');
    (&stream).write_all(&line).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).map_err(io)?;
    let a: Answer =
        serde_json::from_str(&answer).map_err(|e| ClientError::Garbled(e.to_string()))?;
    if a.protocol != PROTOCOL {
        return Err(ClientError::Garbled(format!(
            "protocol {} (this client speaks {PROTOCOL})",
            a.protocol
        )));
    }
    if a.ok {
        Ok(a.result.unwrap_or(serde_json::Value::Null))
    } else {
        Err(ClientError::Refused {
            message: a.error.unwrap_or_default(),
            bad_input: a.bad_input,
        })
    }
}

/// The curve rows of a `Curve` answer (goal's attacker, point), in order.
pub fn curve_rows(v: &serde_json::Value) -> Vec<crate::session::curve::Row> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let n = |k: &str| p[k].as_u64().unwrap_or(0);
            (
                p["goal"].as_str().unwrap_or("?").to_string(),
                crate::search::CurvePoint {
                    iteration: n("iteration"),
                    nodes: n("nodes"),
                    seconds: p["seconds"].as_f64().unwrap_or(0.0),
                    pn: n("root_pn"),
                    dn: n("root_dpn"),
                },
            )
        })
        .collect()
}
