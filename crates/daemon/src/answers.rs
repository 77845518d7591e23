//! The daemon's answers, one type a command (`protocol::Command::Answer`): what the service
//! returns, the socket carries as JSON, and the command line and the web app read back.
//!
//! Printed as JSON (`--json`, the web API), an answer goes through `serde_json::Value`, whose
//! objects keep their keys in order: the output is the same whichever side made it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use fanorona_certificate::Summary;
use fanorona_rules::position::{Color, Position};
use fanorona_search::rote::{RoteEntry, RoteKey, RoteTable};
use fanorona_search::{Algorithm, Init, SecondLevel, Value};
use fanorona_session::GoalRecord;
use fanorona_session::checkpoint_failure::CheckpointFailure;
use fanorona_session::log::Progress;
use fanorona_session::moves::QuestionMoves;

/// `Start`: the new session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Started {
    pub id: u64,
    pub name: String,
    /// Whether a daemon answered (and will solve it), rather than the command itself.
    pub daemon: bool,
}

/// `Delete`: the session removed, as it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deleted {
    pub id: u64,
    pub name: String,
}

/// Where a session stands as shown: its stored state, or what is happening to it now.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shown {
    /// A worker solves it.
    Running,
    /// Running, waiting for a worker of the daemon.
    Queued,
    /// Running, but no daemon runs to solve it.
    Waiting,
    /// Told to pause; its worker is writing its checkpoint.
    Pausing,
    /// Told to stop; its worker is writing its checkpoint.
    Stopping,
    Paused,
    Stopped,
    Solved,
    Failed,
    /// Its records cannot be read: `error` says which and what to do.
    Damaged,
}

impl Shown {
    pub fn name(self) -> &'static str {
        match self {
            Shown::Running => "running",
            Shown::Queued => "queued",
            Shown::Waiting => "waiting",
            Shown::Pausing => "pausing",
            Shown::Stopping => "stopping",
            Shown::Paused => "paused",
            Shown::Stopped => "stopped",
            Shown::Solved => "solved",
            Shown::Failed => "failed",
            Shown::Damaged => "damaged",
        }
    }

    /// Whether its log may still grow: it is solved now, or will be.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            Shown::Running | Shown::Queued | Shown::Waiting | Shown::Pausing | Shown::Stopping
        )
    }
}

/// A session's status: its record, its totals and, while it runs, its live progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub id: u64,
    pub name: String,
    /// The root position's text.
    pub root: String,
    pub state: Shown,
    pub value: Option<Value>,
    /// Why it failed, or why it paused itself.
    pub error: Option<String>,
    /// Whether a worker holds it now.
    pub active: bool,
    pub algo: Algorithm,
    pub db_dir: Option<PathBuf>,
    #[serde(with = "text")]
    pub second_level: SecondLevel,
    pub init: Init,
    /// The file the session's own weights were read from (learned first numbers not from
    /// the built-in weights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<PathBuf>,
    pub checkpoint_ms: u64,
    pub checkpoints: u64,
    /// Over all questions, at the last checkpoint.
    pub nodes: u64,
    pub seconds: f64,
    pub rote_hits: u64,
    pub rote_hit_rate: f64,
    pub goals: Vec<GoalRecord>,
    /// The latest progress line of its worker, and the latest of each question searched.
    pub progress: Option<Progress>,
    pub live: Vec<Progress>,
    /// Its progress log.
    pub log: PathBuf,
    /// While its checkpoints fail (a full disk): since when, why, and what is on disk.
    #[serde(default)]
    pub checkpoint_failure: Option<CheckpointFailure>,
    /// The same in words (for the web page).
    #[serde(default)]
    pub checkpoint_trouble: Option<String>,
    /// Each question's jobs, while they go to workers elsewhere (`[cluster]`).
    #[serde(default)]
    pub jobs: Vec<fanorona_search::jobs::JobsView>,
    /// The store's backups the daemon keeps (the same for every session).
    #[serde(default)]
    pub backups: Option<crate::backup::BackupsView>,
}

impl Status {
    /// " (weights FILE)" when the learned first numbers use the session's own weights.
    pub fn weights_note(&self) -> String {
        match (&self.weights, self.init) {
            (Some(w), Init::Learned) => {
                let file = w.file_name().map_or(w.as_os_str(), |f| f);
                format!(" (weights {})", file.to_string_lossy())
            }
            _ => String::new(),
        }
    }

    /// Its curve's figure: titled with its name, the search and its tables beside the
    /// legend, each resume marked.
    pub fn figure(&self) -> fanorona_session::curve::Figure {
        let mut about = vec![
            format!("search: {}", self.algo),
            format!("first numbers: {}{}", self.init.name(), self.weights_note()),
        ];
        if self.algo != Algorithm::Pn {
            about.push(format!("second level: {}", self.second_level));
        }
        let board = self.root.parse::<Position>().map(|p| p.board());
        about.push(match (&self.db_dir, board) {
            (Some(dir), Ok(board)) => {
                match fanorona_tables::probe::Database::new(dir, board).max_pieces() {
                    0 => "tables: none built".to_string(),
                    n => format!("tables: to {n} pieces"),
                }
            }
            _ => "tables: none".to_string(),
        });
        fanorona_session::curve::Figure {
            title: format!("{} (session {})", self.name, self.id),
            about,
            resumed: self
                .goals
                .iter()
                .flat_map(|g| {
                    g.resumed_at
                        .iter()
                        .map(|&at| (g.attacker.name().to_string(), at))
                })
                .collect(),
            beside: None,
        }
    }
}

/// A second-level bound in its text form ("tree-size", "max(N,tree/D)", ...).
mod text {
    use serde::{Deserialize, Deserializer, Serializer};

    use fanorona_search::SecondLevel;

    pub fn serialize<S: Serializer>(b: &SecondLevel, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(b)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SecondLevel, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// `Moves`: each question's first-level tree at the end of the line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MovesAt {
    pub id: u64,
    pub line: Vec<String>,
    /// The position after the line.
    pub position: Position,
    pub questions: Vec<QuestionMoves>,
}

/// `Certificate`: the certificates written and checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Certificates {
    pub session: u64,
    #[serde(rename = "move")]
    pub mv: Option<String>,
    pub certificates: Vec<Summary>,
}

/// One point of a session's root curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The attacker of the question it belongs to.
    pub goal: Color,
    pub iteration: u64,
    pub nodes: u64,
    pub seconds: f64,
    pub root_pn: u64,
    pub root_dpn: u64,
}

impl CurvePoint {
    /// The curve's rows (question's attacker, point) as the curve's files take them.
    pub fn rows(points: &[CurvePoint]) -> Vec<fanorona_session::curve::Row> {
        points
            .iter()
            .map(|p| {
                (
                    p.goal.name().to_string(),
                    fanorona_search::CurvePoint {
                        iteration: p.iteration,
                        nodes: p.nodes,
                        seconds: p.seconds,
                        pn: p.root_pn,
                        dn: p.root_dpn,
                    },
                )
            })
            .collect()
    }
}

/// `RoteStats`: what the rote store holds and how often the searches hit it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoteStats {
    pub entries: u64,
    pub attacker_wins: u64,
    pub attacker_does_not_win: u64,
    pub with_best_move: u64,
    /// Entries by board.
    pub boards: BTreeMap<String, u64>,
    /// Hits over all sessions, and per node they created.
    pub hits: u64,
    pub hit_rate: f64,
}

/// One rote entry (`RoteExport`; one line of `rote export`'s file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoteRow {
    pub position: Position,
    /// The positions since the last capture that it was decided under, hashed (16 hex
    /// digits).
    #[serde(with = "hex")]
    pub history: u64,
    pub attacker: Color,
    pub attacker_wins: bool,
    pub best_move: Option<String>,
}

/// A history hash as 16 hex digits.
mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(h: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{h:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let text = String::deserialize(d)?;
        u64::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

impl RoteRow {
    pub fn new(k: &RoteKey, e: &RoteEntry) -> RoteRow {
        RoteRow {
            position: k.pos,
            history: k.history,
            attacker: k.attacker,
            attacker_wins: e.proven,
            best_move: e.best_move.map(|m| m.notation(k.pos.board())),
        }
    }

    /// The rows of `board` as a table players can consult (without their best moves: the
    /// players search for their own).
    pub fn table(rows: &[RoteRow], board: fanorona_rules::Board) -> RoteTable {
        let mut table = RoteTable::new();
        for r in rows.iter().filter(|r| r.position.board() == board) {
            table.insert(
                RoteKey {
                    pos: r.position,
                    history: r.history,
                    attacker: r.attacker,
                },
                RoteEntry {
                    proven: r.attacker_wins,
                    best_move: None,
                },
            );
        }
        table
    }
}
