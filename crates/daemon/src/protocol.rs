//! The daemon's protocol: one JSON object per line each way over a Unix socket.
//! A request is `{"protocol": 1, "request": {"command": ..., ...}}`; the answer is
//! `{"protocol": 1, "ok": true, "result": ...}` or `{"protocol": 1, "ok": false, "error": ..,
//! "bad_input": ..}`.
//!
//! Each command is a struct of its own, and `Command::Answer` names the type of its result
//! (`answers.rs`): the daemon, the command line and the web app share these types, so
//! neither side reads the other's JSON by key.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::answers::{
    Certificates, CurvePoint, Deleted, MovesAt, RoteRow, RoteStats, Started, Status,
};
use fanorona_rules::position::{Color, Position};
use fanorona_search::{Algorithm, Init, SecondLevel};

pub const PROTOCOL: u32 = 1;

/// A request a client may send, and what its answer holds.
pub trait Command: Serialize + DeserializeOwned + Into<Request> {
    type Answer: Serialize + DeserializeOwned;
}

/// What a client asks: one command, named by `"command"` beside its fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    Start(Start),
    List(List),
    Status(StatusOf),
    Pause(Pause),
    Resume(Resume),
    Stop(Stop),
    Curve(Curve),
    RoteStats(RoteStatsOf),
    RoteExport(RoteExport),
    Moves(Moves),
    Tune(Tune),
    Certificate(Certificate),
    Delete(Delete),
    Rename(Rename),
    Backup(Backup),
}

/// Declares each command's answer and how it goes into a `Request`.
macro_rules! commands {
    ($($command:ident => $variant:ident: $answer:ty),* $(,)?) => {
        $(
            impl Command for $command {
                type Answer = $answer;
            }

            impl From<$command> for Request {
                fn from(c: $command) -> Request {
                    Request::$variant(c)
                }
            }
        )*
    };
}

commands! {
    Start => Start: Started,
    List => List: Vec<Status>,
    StatusOf => Status: Status,
    Pause => Pause: Status,
    Resume => Resume: Status,
    Stop => Stop: Status,
    Curve => Curve: Vec<CurvePoint>,
    RoteStatsOf => RoteStats: RoteStats,
    RoteExport => RoteExport: Vec<RoteRow>,
    Moves => Moves: MovesAt,
    Tune => Tune: Status,
    Certificate => Certificate: Certificates,
    Delete => Delete: Deleted,
    Rename => Rename: Status,
    Backup => Backup: crate::backup::BackupTaken,
}

/// A new session on a board's start or a position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// The root: written as a position, read as `parse_target` reads a board (its start)
    /// or a position that can be played on.
    #[serde(with = "target")]
    pub target: Position,
    /// Endgame tables (an absolute path; default: the daemon's config, if it has the board).
    pub db: Option<PathBuf>,
    pub algo: Option<Algorithm>,
    pub name: Option<String>,
    /// PN²'s second-level bound (default: the daemon's config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_level: Option<SecondLevel>,
}

/// A target on the wire.
mod target {
    use serde::{Deserialize, Deserializer, Serializer};

    use fanorona_rules::position::Position;

    pub fn serialize<S: Serializer>(pos: &Position, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(pos)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Position, D::Error> {
        fanorona_rules::target::parse_target(&String::deserialize(d)?)
            .map_err(serde::de::Error::custom)
    }
}

/// Every session, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct List {}

/// One session's status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusOf {
    pub id: u64,
}

/// Checkpoint and set a running session aside; answered once its worker let go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    pub id: u64,
}

/// Run a paused, stopped or failed session again from its last checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resume {
    pub id: u64,
}

/// Checkpoint and stop a session; answered once its worker let go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub id: u64,
}

/// A session's root curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub id: u64,
    /// Only the points after these iterations, one per question in the session's order
    /// (all points when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Vec<u64>>,
}

/// What the rote store holds, and how often the searches hit it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoteStatsOf {}

/// Every rote entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoteExport {}

/// The moves at the end of `line` (from the root) in each question's first-level tree,
/// as last checkpointed; with `heaviest`, the line most of the nodes go down from there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Moves {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub heaviest: bool,
    /// Also the nodes below by pieces on the board.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pieces: bool,
    /// Also how many distinct searches the live nodes below stand for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transpositions: bool,
}

/// Changes the second-level bound, the leaves' first numbers or the tables (a set deciding
/// at least as much) of a paused, stopped or failed session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tune {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_level: Option<SecondLevel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<Init>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_dir: Option<PathBuf>,
}

/// Writes and checks, under `prefix` (an absolute path), the certificates of a session's
/// decided questions, or with `mv` of the position after that decided capture of the root,
/// from the store, while the sessions go on. Answered when they are written (a client waits
/// without a time limit; the daemon's log shows the progress).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    pub id: u64,
    pub prefix: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mv: Option<String>,
    /// Only the question of this side's win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Color>,
    /// A partial certificate: search nodes re-deciding one node may take before it is
    /// left open and listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_budget: Option<u64>,
}

/// Removes a session that is not running: its record, trees, curve and progress log (the
/// rote entries it made stay; so do its certificates, and its id is not given again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delete {
    pub id: u64,
}

/// Gives a session another name, one no other session has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rename {
    pub id: u64,
    pub name: String,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands go on the wire as they did when `Request` held their fields itself.
    #[test]
    fn requests_keep_their_wire_form() {
        let cases: [(Request, &str); 4] = [
            (List {}.into(), r#"{"command":"list"}"#),
            (StatusOf { id: 3 }.into(), r#"{"command":"status","id":3}"#),
            (RoteStatsOf {}.into(), r#"{"command":"rote_stats"}"#),
            (
                Moves {
                    id: 1,
                    line: vec!["d2-e3A".into()],
                    heaviest: true,
                    pieces: false,
                    transpositions: false,
                }
                .into(),
                r#"{"command":"moves","id":1,"line":["d2-e3A"],"heaviest":true}"#,
            ),
        ];
        for (request, wire) in cases {
            assert_eq!(serde_json::to_string(&request).unwrap(), wire);
            assert_eq!(serde_json::from_str::<Request>(wire).unwrap(), request);
        }
    }

    /// A start's target is read as every command reads one: a board's name is its start, a
    /// finished game is refused.
    #[test]
    fn a_start_reads_its_target_as_parse_target_does() {
        let start = |target: &str| {
            serde_json::from_str::<Request>(&format!(
                r#"{{"command":"start","target":"{target}","db":null,"algo":null,"name":null}}"#
            ))
        };
        let Ok(Request::Start(s)) = start("3x5") else {
            panic!("a board's name is a target");
        };
        assert_eq!(s.target, Position::initial("3x5".parse().unwrap()));
        let e = start("BBB/.../... b").unwrap_err().to_string();
        assert!(e.contains("the game ended"), "{e}");
    }
}

/// A backup of the store into `into` (an absolute path to a new or empty directory), taken
/// while the sessions run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Backup {
    pub into: PathBuf,
}
