//! What `fanorona solve` prints, one form for both ways it runs (in memory, or as a session
//! on the store), in words and as JSON.

use crate::cli::output::{CliResult, counted, print_json};
use crate::out;
use fanorona::Position;
use fanorona::certificate::{Made, Summary};
use fanorona::search::census;
use fanorona::search::report::{CensusRow, MoveValue, PositionSolved, QuestionSearched};

/// One question searched.
pub struct Question {
    /// "white" or "black": the side whose win is asked.
    pub attacker: String,
    /// "proven", "disproven" or "open".
    pub outcome: String,
    pub nodes: u64,
    pub iterations: u64,
    /// Nodes of the first-level tree (PN² as a session).
    pub first_level: Option<u64>,
    pub db_hits: u64,
    /// Positions answered by the rote store (sessions only).
    pub rote_hits: Option<u64>,
    pub repetitions: u64,
    pub seconds: f64,
}

impl Question {
    /// Whether this answer is one the value rests on: for a draw both disproofs, for a win
    /// the winner's proof. Another question was only searched on the way, or was halted
    /// when the other thread decided the value.
    pub fn decides(&self, value: Option<&str>) -> bool {
        match value {
            Some("draw") => self.outcome == "disproven",
            Some(winner) => self.attacker == winner && self.outcome == "proven",
            None => false,
        }
    }
}

/// The result of one `solve`.
pub struct Report {
    pub position: Position,
    /// "white", "black" or "draw"; `None` when undecided.
    pub value: Option<String>,
    /// Why there is no value (printed in its place).
    pub undecided: String,
    pub best_move: Option<String>,
    pub questions: Vec<Question>,
    pub seconds: f64,
    /// Whether the proofs that decide the value passed the independent check (`None`:
    /// nothing decided, or checking turned off).
    pub verified: Option<bool>,
    /// Why there is no check, when `verified` is `None`.
    pub unchecked: &'static str,
    pub algorithm: String,
    pub database: Option<String>,
    /// The session it ran as, with its data directory, and whether it was solved before.
    pub session: Option<(u64, String, bool)>,
    pub certificates: Vec<Made>,
    /// With --moves: each move and the value after it.
    pub moves: Option<Vec<(String, String)>>,
    /// With --census: positions created, by the pieces on the board of the position expanded
    /// and by their pair of tables.
    pub census: Option<census::Census>,
}

/// "white wins", "black wins", "draw" or "unknown".
pub fn value_words(value: &str) -> String {
    match value {
        "draw" | "unknown" => value.to_string(),
        v => format!("{v} wins"),
    }
}

impl Report {
    /// Nodes of the questions the value rests on: the same on every run, whichever thread
    /// finished first.
    pub fn deciding_nodes(&self) -> u64 {
        self.questions
            .iter()
            .filter(|q| q.decides(self.value.as_deref()))
            .map(|q| q.nodes)
            .sum()
    }

    pub fn nodes(&self) -> u64 {
        self.questions.iter().map(|q| q.nodes).sum()
    }

    pub fn print(&self, json: bool) -> CliResult {
        if json {
            return print_json(&self.answer());
        }
        self.print_words();
        Ok(())
    }

    /// The `--json` answer.
    fn answer(&self) -> PositionSolved<Summary> {
        let value = self.value.as_deref();
        PositionSolved {
            position: self.position,
            value: value.unwrap_or("unknown").to_string(),
            best_move: self.best_move.clone(),
            nodes: self.nodes(),
            deciding_nodes: self.deciding_nodes(),
            rote_hits: self.questions.iter().map(|q| q.rote_hits).sum(),
            seconds: self.seconds,
            verified: self.verified == Some(true),
            algorithm: self.algorithm.clone(),
            database: self.database.clone(),
            session: self.session.as_ref().map(|s| s.0),
            solved_before: self.session.as_ref().is_some_and(|s| s.2),
            searches: self
                .questions
                .iter()
                .map(|q| QuestionSearched {
                    goal: format!("{} wins", q.attacker),
                    outcome: q.outcome.clone(),
                    decides: q.decides(value),
                    nodes: q.nodes,
                    iterations: q.iterations,
                    first_level: q.first_level,
                    db_hits: q.db_hits,
                    rote_hits: q.rote_hits,
                    repetitions: q.repetitions,
                    seconds: q.seconds,
                })
                .collect(),
            certificates: self.certificates.iter().map(Made::summary).collect(),
            census: self
                .census
                .as_ref()
                .map(|c| c.rows().iter().map(CensusRow::from).collect()),
            moves: self.moves.as_ref().map(|moves| {
                moves
                    .iter()
                    .map(|(mv, value)| MoveValue {
                        mv: mv.clone(),
                        value: value.clone(),
                    })
                    .collect()
            }),
        }
    }

    fn print_words(&self) {
        let value = self.value.as_deref();
        out!("{}", self.position);
        match value {
            Some(v) => out!("value: {}", value_words(v)),
            None => out!("value: {}", self.undecided),
        }
        if let Some(b) = &self.best_move {
            out!("best move: {b}");
        }
        for q in &self.questions {
            let rote = q
                .rote_hits
                .map(|r| format!(", {}", counted(r, "rote hit", "rote hits")))
                .unwrap_or_default();
            let first = q
                .first_level
                .map(|f| format!(", first level {f}"))
                .unwrap_or_default();
            let role = if value.is_none() || q.decides(value) {
                ""
            } else if q.outcome == "open" {
                " (halted: the other question decided the value)"
            } else {
                " (not needed for the value)"
            };
            out!(
                "  {} wins? {}: {}, {}{first}, {}{rote}, {}, {:.2} s{role}",
                q.attacker,
                q.outcome,
                counted(q.nodes, "node", "nodes"),
                counted(q.iterations, "iteration", "iterations"),
                counted(q.db_hits, "table hit", "table hits"),
                counted(q.repetitions, "repetition", "repetitions"),
                q.seconds
            );
        }
        for (m, v) in self.moves.iter().flatten() {
            out!("  {m}: {}", value_words(v));
        }
        if let Some(c) = &self.census {
            let total = c.total().max(1) as f64;
            let share = |n: u64| 100.0 * n as f64 / total;
            out!("where the nodes went (positions created by expanding one of N pieces):");
            let rows = c.rows();
            for r in &rows {
                out!(
                    "  {:>2} pieces: {:>14} ({:.2}%)",
                    r.pieces,
                    r.created,
                    share(r.created)
                );
            }
            // The fewest pieces expanded: what tables of one more piece would spare, by pair.
            if let Some(r) = rows.last() {
                out!(
                    "the {} pieces by pair of tables (either side to move):",
                    r.pieces
                );
                for &(pair, n) in &r.pairs {
                    out!("  {:>5}: {n:>14} ({:.2}%)", pair.to_string(), share(n));
                }
            }
        }
        for c in &self.certificates {
            out!("{}", crate::cli::certificate::line(c));
        }
        let nodes = match (value, self.nodes() - self.deciding_nodes()) {
            (Some(_), extra) if extra > 0 => format!(
                "{} nodes decided it (+{extra} in the other question)",
                self.deciding_nodes()
            ),
            _ => format!("{} nodes", self.nodes()),
        };
        let session = match &self.session {
            Some((id, dir, true)) => format!(" (solved before: session {id}, {dir})"),
            Some((id, dir, false)) => format!(" (session {id}, {dir})"),
            None => String::new(),
        };
        out!(
            "{nodes} in {:.2} s{session}; {}",
            self.seconds,
            match self.verified {
                None => self.unchecked,
                Some(true) => "proofs verified by the independent checker",
                Some(false) => "a proof FAILED the independent check",
            }
        );
    }
}
