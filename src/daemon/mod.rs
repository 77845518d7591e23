//! The solve-session daemon: it owns the data directory (a lock file keeps a second process
//! out), runs the running sessions one at a time, and answers commands on a Unix socket.
//!
//! Layout of the data directory: `store/` (the session store), `daemon.lock`, `daemon.sock`,
//! `logs/session-N.jsonl` (one progress log per session).

pub mod compact;
pub mod datadir;
pub mod protocol;
pub mod server;
pub mod workers;

pub use datadir::{DaemonError, DataDir, DataLock, lock, open_sessions};
pub use server::{answer, bind, serve};

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::config::Config;
use crate::position::Position;
use crate::session::certificates;
use crate::session::settings::{SettingsError, check_name, check_new_tables, new_settings};
use crate::session::{SessionError, SessionRecord, Sessions, State, Tuning};
use crate::target::{TargetError, parse_target};
use protocol::Request;
use workers::Workers;

/// How long a pause or stop waits for the worker's checkpoint before answering.
const STOP_WAIT: Duration = Duration::from_secs(60);

/// An error answered to a client.
#[derive(Debug)]
pub struct Refusal {
    pub message: String,
    pub bad_input: bool,
}

impl From<SettingsError> for Refusal {
    fn from(e: SettingsError) -> Refusal {
        Refusal {
            bad_input: e.is_bad_input(),
            message: e.to_string(),
        }
    }
}

impl From<TargetError> for Refusal {
    fn from(e: TargetError) -> Refusal {
        bad_input(e.to_string())
    }
}

impl From<SessionError> for Refusal {
    fn from(e: SessionError) -> Refusal {
        let bad_input = matches!(
            e,
            SessionError::Unknown(_) | SessionError::BadState { .. } | SessionError::Line { .. }
        );
        Refusal {
            message: e.to_string(),
            bad_input,
        }
    }
}

fn bad_input(message: String) -> Refusal {
    Refusal {
        message,
        bad_input: true,
    }
}

/// The commands' side of the daemon (also used in-process when no daemon runs).
pub struct Service {
    pub sessions: Sessions,
    pub config: Config,
    pub dir: DataDir,
    /// Whether a worker runs sessions here (false for a command run without a daemon).
    pub has_worker: bool,
    /// The workers' sessions and controls (`workers.main` is also the solve a command runs
    /// in its own process).
    pub workers: Workers,
    /// The daemon is shutting down: certificates being written give up.
    pub closing: crate::certificate::Cancel,
    /// Prefixes of certificates being written: two writers on one prefix would share its
    /// temporary files, list and leaves.
    writing: Mutex<std::collections::HashSet<PathBuf>>,
}

/// A certificate prefix held by one writer until dropped.
struct Writing<'s> {
    set: &'s Mutex<std::collections::HashSet<PathBuf>>,
    prefix: PathBuf,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.set.lock().expect("writing lock").remove(&self.prefix);
    }
}

impl Service {
    pub fn new(sessions: Sessions, config: Config, dir: DataDir, has_worker: bool) -> Service {
        Service {
            sessions,
            workers: Workers::new(&config),
            config,
            dir,
            has_worker,
            closing: Default::default(),
            writing: Mutex::default(),
        }
    }

    /// Answers one request.
    pub fn handle(&self, request: Request) -> Result<Value, Refusal> {
        match request {
            Request::Start {
                target,
                db,
                algo,
                name,
                second_level,
            } => {
                let pos = parse_target(&target)?;
                if let Some(n) = &name {
                    check_name(n)?;
                }
                if crate::movegen::is_lost(&pos) {
                    return Err(bad_input(format!(
                        "{pos} is already decided: {} has lost",
                        pos.side_to_move()
                    )));
                }
                let mut settings = new_settings(&self.config, &pos, db, algo)?;
                if let Some(s) = second_level {
                    settings.second_level = s;
                }
                let rec = self.sessions.create(&pos, name, settings)?;
                tracing::info!("session {}: created for {}", rec.id, rec.root);
                self.workers.wake();
                Ok(json!({"id": rec.id, "name": rec.name, "daemon": self.has_worker}))
            }
            Request::List => Ok(Value::Array(
                self.sessions
                    .list()?
                    .iter()
                    .map(|r| self.status_json(r))
                    .collect(),
            )),
            Request::Status { id } => Ok(self.status_json(&self.sessions.get(id)?)),
            Request::Pause { id } | Request::Stop { id } => {
                let to = if matches!(request, Request::Pause { .. }) {
                    State::Paused
                } else {
                    State::Stopped
                };
                let rec = self.sessions.set_state(id, to)?;
                let slot = self
                    .workers
                    .slots()
                    .into_iter()
                    .find(|slot| slot.stop_if_solving(id));
                // Answer once the worker has checkpointed and let go (the status says
                // "pausing" or "stopping" if that takes longer than a client waits).
                let waited = std::time::Instant::now();
                while let Some(slot) = slot
                    && slot.session() == Some(id)
                    && waited.elapsed() < STOP_WAIT
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(self.status_json(&self.sessions.get(id).unwrap_or(rec)))
            }
            Request::Moves {
                id,
                line,
                heaviest,
                pieces,
                transpositions,
            } => {
                let extras = crate::session::moves::Extras {
                    heaviest,
                    pieces,
                    transpositions,
                };
                let below = crate::session::moves::moves_below(&self.sessions, id, &line, extras)?;
                Ok(json!({
                    "id": id,
                    "line": line,
                    "position": below.position,
                    "questions": below.questions,
                }))
            }
            Request::Certificate {
                id,
                prefix,
                mv,
                goal,
                leaf_budget,
            } => {
                let rec = self.sessions.get(id)?;
                let attacker = goal
                    .as_deref()
                    .map(|g| {
                        crate::position::Color::from_name(g).ok_or_else(|| {
                            bad_input(format!("goal '{g}': say \"white\" or \"black\""))
                        })
                    })
                    .transpose()?;
                let what = mv
                    .as_deref()
                    .map_or(String::new(), |m| format!(" (move {m})"));
                let _held = self.hold_prefix(&prefix).ok_or_else(|| {
                    bad_input(
                        certificates::CertificateError::Busy {
                            prefix: prefix.clone(),
                        }
                        .to_string(),
                    )
                })?;
                let report = |line: &str| tracing::info!("session {id}{what}: certificate: {line}");
                // The session's own certificates (`session certificate ID` writes the missing
                // ones there): one already there and checked is kept.
                let own = self.own_prefix(id);
                let opts = self.certificate_options(
                    certificates::Options {
                        attacker,
                        leaf_budget,
                        keep_checked: mv.is_none() && prefix == own,
                        ..Default::default()
                    },
                    &report,
                );
                if !prefix.is_absolute() {
                    return Err(bad_input(format!(
                        "{}: the daemon needs an absolute path",
                        prefix.display()
                    )));
                }
                if mv.is_none()
                    && !rec.goals.iter().any(|g| g.outcome.decided())
                    && rec.value.is_none()
                {
                    return Err(bad_input(format!(
                        "session {id} has no question decided yet: no certificate to write"
                    )));
                }
                tracing::info!(
                    "session {id}{what}: writing certificates under {}",
                    prefix.display()
                );
                let mut progress = |goal: &str, w: &crate::certificate::Written| {
                    tracing::info!(
                        "session {id}{what}: certificate of {goal}: {}",
                        w.progress_line()
                    )
                };
                let made = certificates::write_any(
                    &self.sessions,
                    &rec,
                    mv.as_deref(),
                    &prefix,
                    opts,
                    &mut progress,
                )
                .map_err(|e| Refusal {
                    bad_input: matches!(
                        e,
                        certificates::CertificateError::Move { .. }
                            | certificates::CertificateError::FromStore { .. }
                    ),
                    message: e.to_string(),
                })?;
                // The session's own certificates (not a move's, nor copies elsewhere): its
                // questions' checks.
                if mv.is_none() && prefix == own {
                    self.record_checks(id, &made);
                }
                for m in &made {
                    match &m.check {
                        Ok(_) => tracing::info!(
                            "session {id}{what}: certificate {} verified",
                            m.path.display()
                        ),
                        Err(e) => tracing::error!(
                            "session {id}{what}: certificate {} FAILED verification: {e}",
                            m.path.display()
                        ),
                    }
                }
                Ok(
                    json!({"session": id, "move": mv, "certificates": made.iter().map(crate::certificate::Made::json).collect::<Vec<_>>()}),
                )
            }
            Request::Tune {
                id,
                second_level,
                init,
                db_dir,
            } => {
                let before = self.sessions.get(id)?;
                if let Some(dir) = &db_dir {
                    check_new_tables(&before, dir)?;
                }
                let tuning = Tuning {
                    second_level,
                    init,
                    db_dir: db_dir.clone(),
                };
                let rec = self.sessions.tune(id, &tuning)?;
                if let Some(b) = second_level {
                    let was = before.settings.second_level;
                    tracing::info!("session {id}: second level {was} -> {b}");
                }
                if let Some(i) = init {
                    let was = before.settings.init.name();
                    tracing::info!("session {id}: first numbers from {was} -> {}", i.name());
                }
                if let Some(dir) = &db_dir {
                    let was = before
                        .settings
                        .db_dir
                        .as_ref()
                        .map(|d| d.display().to_string());
                    tracing::info!(
                        "session {id}: tables {} -> {}",
                        was.as_deref().unwrap_or("none"),
                        dir.display()
                    );
                }
                Ok(self.status_json(&rec))
            }
            Request::Resume { id } => {
                let rec = self.sessions.set_state(id, State::Running)?;
                self.workers.wake();
                Ok(self.status_json(&rec))
            }
            Request::Curve { id, since } => {
                let rec = self.sessions.get(id)?;
                let points = match since {
                    Some(since) => self.sessions.curve_since(id, &since)?,
                    None => self.sessions.curve(id)?,
                };
                Ok(Value::Array(
                    points
                        .iter()
                        .map(|(g, p)| {
                            json!({
                                "goal": rec.goals.get(*g as usize).map(|g| g.attacker),
                                "iteration": p.iteration,
                                "nodes": p.nodes,
                                "seconds": p.seconds,
                                "root_pn": p.pn,
                                "root_dpn": p.dn,
                            })
                        })
                        .collect(),
                ))
            }
            Request::RoteStats => {
                let entries = self.sessions.rote(None)?;
                let mut boards = std::collections::BTreeMap::<String, u64>::new();
                for (k, _) in &entries {
                    *boards.entry(k.pos.board().to_string()).or_default() += 1;
                }
                let proven = entries.iter().filter(|(_, e)| e.proven).count();
                let with_move = entries
                    .iter()
                    .filter(|(_, e)| e.best_move.is_some())
                    .count();
                let sessions = self.sessions.list()?;
                let (hits, nodes) = sessions.iter().fold((0, 0), |(h, n), r| {
                    let (nodes, _, hits) = r.totals();
                    (h + hits, n + nodes)
                });
                Ok(json!({
                    "entries": entries.len(),
                    "attacker_wins": proven,
                    "attacker_does_not_win": entries.len() - proven,
                    "with_best_move": with_move,
                    "boards": boards,
                    "hits": hits,
                    "hit_rate": hits as f64 / nodes.max(1) as f64,
                }))
            }
            Request::RoteExport => Ok(Value::Array(
                self.sessions
                    .rote(None)?
                    .iter()
                    .map(|(k, e)| {
                        json!({
                            "position": k.pos.to_string(),
                            "history": format!("{:016x}", k.history),
                            "attacker": k.attacker.name(),
                            "attacker_wins": e.proven,
                            "best_move": e.best_move.map(|m| m.notation(k.pos.board())),
                        })
                    })
                    .collect(),
            )),
        }
    }

    /// A session's status: its record, its totals and, while it runs, its live progress.
    pub fn status_json(&self, r: &SessionRecord) -> Value {
        let (nodes, seconds, rote_hits) = r.totals();
        let slot = self.workers.slot_of(r.id);
        let active = slot.is_some();
        // What is true now, not only what is stored: a running session nobody solves waits
        // (for the worker, or for a daemon), one told to pause may still be checkpointing.
        let state = match (r.state, active) {
            (State::Running, true) => "running",
            (State::Running, false) if self.has_worker => "queued",
            (State::Running, false) => "waiting",
            (State::Paused, true) => "pausing",
            (State::Stopped, true) => "stopping",
            (s, _) => s.name(),
        };
        let progress = slot
            .and_then(|slot| slot.control.progress.lock().expect("progress lock").clone())
            .filter(|p| p.session == r.id);
        let live: Vec<_> = if let Some(slot) = slot {
            slot.control
                .live
                .lock()
                .expect("live lock")
                .iter()
                .filter(|p| p.session == r.id)
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        json!({
            "id": r.id,
            "name": r.name,
            "root": r.root,
            "state": state,
            "value": r.value,
            "error": r.error,
            "active": active,
            "algo": r.settings.algo,
            "db_dir": r.settings.db_dir,
            "second_level": r.settings.second_level.to_string(),
            "init": r.settings.init,
            "checkpoint_ms": r.settings.checkpoint_ms,
            "checkpoints": r.checkpoints,
            "nodes": nodes,
            "seconds": seconds,
            "rote_hits": rote_hits,
            "rote_hit_rate": rote_hits as f64 / nodes.max(1) as f64,
            "goals": r.goals,
            "progress": progress,
            "live": live,
            "log": crate::session::log::log_path(&self.dir.logs(), r.id),
        })
    }
    /// Holds `prefix` for one certificate writer; `None` while another writes there.
    fn hold_prefix(&self, prefix: &Path) -> Option<Writing<'_>> {
        let mut set = self.writing.lock().expect("writing lock");
        set.insert(prefix.to_path_buf()).then(|| Writing {
            set: &self.writing,
            prefix: prefix.to_path_buf(),
        })
    }

    /// How the daemon writes certificates, on request or once a session is solved: `what`
    /// (which questions, a leaf budget asked for) given up at shutdown, reporting through
    /// `report`, and bounded by the config (one thread: the workers keep theirs).
    fn certificate_options<'a>(
        &'a self,
        what: certificates::Options<'a>,
        report: &'a (dyn Fn(&str) + Sync),
    ) -> certificates::Options<'a> {
        certificates::Options {
            cancel: Some(&self.closing),
            report: Some(report),
            ..what
        }
        .bounded(&self.config, 1)
    }

    /// Where the daemon keeps session `id`'s own certificates (absolute).
    fn own_prefix(&self, id: u64) -> PathBuf {
        let prefix = certificates::prefix(&self.dir.root, id);
        std::path::absolute(&prefix).unwrap_or(prefix)
    }

    /// Records in session `id` how each certificate of its root's questions checked: the
    /// full check of a question's proof is its certificate's.
    fn record_checks(&self, id: u64, made: &[crate::certificate::Made]) {
        let checked = self.sessions.update(id, Vec::new(), |r| {
            for m in made {
                let attacker = m.goal.attacker;
                // A partial certificate holds what it has but not yet the claim: not recorded.
                if let Some(g) = r.goals.iter_mut().find(|g| g.attacker == attacker)
                    && (m.whole() || !m.verified())
                {
                    g.certificate_verified = Some(m.verified());
                }
            }
            Ok(())
        });
        if let Err(e) = checked {
            tracing::error!("session {id}: recording the certificates' check: {e}");
        }
    }

    /// Writes and checks the certificates of a session just solved, into the data
    /// directory's `certificates/`, logging each; the session's result stays either way.
    /// A question the rote store decided at the root is re-solved only with
    /// `resolve_rote_roots` (see `certificates::Options`).
    pub fn write_certificates(
        &self,
        rec: &crate::session::SessionRecord,
        resolve_rote_roots: bool,
    ) -> Result<Vec<crate::certificate::Made>, certificates::CertificateError> {
        let prefix = self.own_prefix(rec.id);
        let Some(_held) = self.hold_prefix(&prefix) else {
            return Err(certificates::CertificateError::Busy { prefix });
        };
        tracing::info!("session {}: writing its certificates", rec.id);
        let mut progress = |goal: &str, w: &crate::certificate::Written| {
            tracing::info!(
                "session {}: certificate of {goal}: {}",
                rec.id,
                w.progress_line()
            )
        };
        let report = |line: &str| tracing::info!("session {}: certificate: {line}", rec.id);
        let opts = self.certificate_options(
            certificates::Options {
                resolve_rote_roots,
                keep_checked: true,
                ..Default::default()
            },
            &report,
        );
        let made = certificates::write(&self.sessions, rec, &prefix, opts, &mut progress)
            .inspect_err(|e| match e {
                certificates::CertificateError::FromStore { .. } => {
                    tracing::info!("session {}: no certificate of its own: {e}", rec.id)
                }
                _ => tracing::error!("session {}: no certificate: {e}", rec.id),
            })?;
        self.record_checks(rec.id, &made);
        for m in &made {
            let w = &m.written;
            match &m.check {
                Ok(_) if !m.whole() => tracing::warn!(
                    "session {}: certificate {} PARTIAL: {} open leaves (listed in {}); the rest verified; close them with `fanorona stitch --solve`",
                    rec.id,
                    m.path.display(),
                    w.open,
                    m.open_list
                        .as_ref()
                        .map_or(String::new(), |p| p.display().to_string())
                ),
                Ok(_) => tracing::info!(
                    "session {}: certificate {} ({} nodes, {} bytes, {} re-solved, {} leaves closed) verified",
                    rec.id,
                    m.path.display(),
                    w.nodes,
                    w.bytes,
                    w.resolved,
                    w.closed
                ),
                Err(e) => tracing::error!(
                    "session {}: certificate {} FAILED verification: {e}",
                    rec.id,
                    m.path.display()
                ),
            }
        }
        Ok(made)
    }
}

/// The entries of `board` in a `RoteExport` answer, as a table players can consult (entries
/// that do not read are left out: the store is only a shortcut).
pub fn rote_from_export(v: &Value, board: crate::Board) -> crate::search::rote::RoteTable {
    use crate::search::rote::{RoteEntry, RoteKey, RoteTable};
    let mut table = RoteTable::new();
    for e in v.as_array().into_iter().flatten() {
        let parsed = (|| {
            let pos: Position = e["position"].as_str()?.parse().ok()?;
            let history = u64::from_str_radix(e["history"].as_str()?, 16).ok()?;
            let attacker = crate::Color::from_name(e["attacker"].as_str()?)?;
            Some((pos, history, attacker, e["attacker_wins"].as_bool()?))
        })();
        let Some((pos, history, attacker, proven)) = parsed else {
            continue;
        };
        if pos.board() != board {
            continue;
        }
        table.insert(
            RoteKey {
                pos,
                history,
                attacker,
            },
            RoteEntry {
                proven,
                best_move: None,
            },
        );
    }
    table
}
