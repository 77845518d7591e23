//! Certificates of solved sessions: each decided question's first-level tree is read back
//! from the store and written as a certificate (what PN²'s second level and the rote store
//! did not keep is re-solved), then checked. The daemon writes them when a session is
//! solved, into `DATA_DIR/certificates/`; `session certificate` copies or writes them.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::{SecondLevel, SessionError, SessionRecord, Sessions};
use fanorona_certificate::close::CloseOptions;
use fanorona_certificate::{self as certificate, Made, Solved, WriteError, Written};
use fanorona_rules::position::{Color, Position};
use fanorona_search::learned::Model;
use fanorona_search::pn::PnTree;
use fanorona_search::{Goal, Outcome, Stats, Value};
use fanorona_tables::Database;

#[derive(Debug, Error)]
pub enum CertificateError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("session {id}: its root '{root}' is not a position: {why}")]
    Root { id: u64, root: String, why: String },
    #[error(transparent)]
    Tables(#[from] fanorona_tables::probe::TablesError),
    #[error(transparent)]
    Weights(#[from] fanorona_search::learned::WeightsError),
    #[error(
        "session {id}: {goals} decided by the rote store at the root: the session whose search decided this position holds its certificate (`fanorona session list` finds it; for a position inside another session's root, `fanorona cut CERT --play MOVES` takes it out); `--leaf-budget N` re-solves it here instead, as a partial certificate"
    )]
    FromStore { id: u64, goals: String },
    #[error(
        "a certificate is being written under {} now (its progress is in the daemon's log): ask again once it is done",
        prefix.display()
    )]
    Busy { prefix: PathBuf },
    #[error("session {id}: move {mv}: {why}")]
    Move { id: u64, mv: String, why: String },
    #[error("cannot create {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: WriteError,
    },
}

/// Where the daemon keeps session `id`'s certificates: `DIR/session-ID`, as a prefix.
pub fn prefix(data_dir: &Path, id: u64) -> PathBuf {
    data_dir.join("certificates").join(format!("session-{id}"))
}

/// The decided questions of `rec`: (index, goal, proven).
fn decided(rec: &SessionRecord) -> impl Iterator<Item = (usize, Goal, bool)> + '_ {
    rec.goals.iter().enumerate().filter_map(|(g, gr)| {
        let proves = match gr.outcome {
            Outcome::Proven => true,
            Outcome::Disproven => false,
            Outcome::Unknown => return None,
        };
        Some((g, gr.goal(), proves))
    })
}

/// Whether `goal`'s certificate under `prefix` is there and checks now: whole, rooted at
/// `root`, with the claim `proves`.
fn holds(prefix: &Path, root: Position, goal: Goal, proves: bool, db: Option<&Database>) -> bool {
    let path = certificate::path_for(prefix, goal);
    if !path.is_file() {
        return false;
    }
    let tables = db.map(certificate::Tables::Open);
    match certificate::verify_file(&path, tables, |_| {}, &mut |_| {}, &mut |_, _| {}) {
        Ok(r) => {
            !r.partial
                && r.open_leaves == 0
                && r.position == root.to_string()
                && r.goal == format!("{} wins", goal.attacker.name())
                && r.claim == if proves { "proven" } else { "disproven" }
        }
        Err(_) => false,
    }
}

/// The session's root position.
fn root_of(rec: &SessionRecord) -> Result<Position, CertificateError> {
    rec.root.parse().map_err(|e| CertificateError::Root {
        id: rec.id,
        root: rec.root.clone(),
        why: format!("{e}"),
    })
}

/// Which certificates to write, and how.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// Only the question of this side's win (both when `None`).
    pub attacker: Option<Color>,
    /// Search nodes re-deciding one node may take before it is left open, in a partial
    /// certificate (unbounded when `None`).
    pub leaf_budget: Option<u64>,
    /// Then solve each open leaf on its own and stitch it in (`certificate::close`); its
    /// second-level bound and first numbers are the session's.
    pub close: Option<CloseOptions<'a>>,
    /// Set from outside to give up (the daemon shutting down).
    pub cancel: Option<&'a certificate::Cancel>,
    /// A line now and then while open leaves are solved.
    pub report: Option<&'a (dyn Fn(&str) + Sync)>,
    /// Re-solve, from nothing, a question the rote store decided at the root. Otherwise
    /// (under `bounded`) it is left to the certificate of the session whose search decided
    /// that position: `CertificateError::FromStore` when nothing else is written.
    pub resolve_rote_roots: bool,
    /// Keep a question's certificate that is already under the prefix and checks now
    /// (the daemon's own prefix: each question's was written when it was decided, before the
    /// session was solved).
    pub keep_checked: bool,
}

impl<'a> Options<'a> {
    fn wants(&self, goal: Goal) -> bool {
        self.attacker.is_none_or(|a| a == goal.attacker)
    }

    /// A whole certificate that cannot stall: unless a leaf budget was asked for (a partial
    /// certificate, to be closed by hand), re-deciding one node takes at most `config`'s
    /// `certificate_leaf_budget` nodes, and each node left open is then solved on its own
    /// (at most `certificate_close_nodes`, on `threads` threads) and stitched in.
    pub fn bounded(mut self, config: &fanorona_search::config::Config, threads: usize) -> Self {
        if self.leaf_budget.is_none() {
            self.leaf_budget = Some(config.certificate_leaf_budget);
            self.close = Some(CloseOptions {
                nodes: config.certificate_close_nodes,
                threads,
                second_level: SecondLevel::TreeSize,
                init: config.init,
                model: None,
            });
        }
        self
    }

    /// The closing search as session `rec` searches, `model` its own weights' (if any).
    fn for_session<'b>(self, rec: &SessionRecord, model: Option<&'b Model>) -> Options<'b>
    where
        'a: 'b,
    {
        let mut o: Options<'b> = self;
        if let Some(c) = &mut o.close {
            c.second_level = rec.settings.second_level;
            c.init = rec.settings.init;
            c.model = model;
        }
        o
    }

    fn terms(&self) -> certificate::Terms<'_> {
        certificate::Terms {
            leaf_budget: self.leaf_budget,
            close: self.close,
            cancel: self.cancel,
            report: self.report,
        }
    }
}

/// Writes and checks the certificates of session `rec` under `prefix`: of every decided
/// question (`write`), or of the position after the decided capture `mv` (`write_move`).
pub fn write_any(
    sessions: &Sessions,
    rec: &SessionRecord,
    mv: Option<&str>,
    prefix: &Path,
    opts: Options<'_>,
    progress: &mut dyn FnMut(&str, &Written),
) -> Result<Vec<Made>, CertificateError> {
    match mv {
        None => write_with(sessions, rec, prefix, opts, progress),
        Some(m) => write_move(sessions, rec, m, prefix, opts, progress),
    }
}

/// The session's tables (when it has them), opened whole, and the certificates' directory,
/// made if missing.
fn tables_and_dir(
    rec: &SessionRecord,
    root: &Position,
    prefix: &Path,
) -> Result<Option<Database>, CertificateError> {
    let db = rec
        .settings
        .db_dir
        .as_deref()
        .map(|d| Database::open_whole(d, root.board()))
        .transpose()?;
    if let Some(dir) = prefix.parent() {
        std::fs::create_dir_all(dir).map_err(|source| CertificateError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(db)
}

/// Writes and checks the certificate of every decided question of session `rec` under
/// `prefix`. `progress` sees (question, what is written so far) now and then.
pub fn write(
    sessions: &Sessions,
    rec: &SessionRecord,
    prefix: &Path,
    opts: Options<'_>,
    progress: &mut dyn FnMut(&str, &Written),
) -> Result<Vec<Made>, CertificateError> {
    write_with(sessions, rec, prefix, opts, progress)
}

/// `write`, of the questions `opts` wants and within its budget.
fn write_with(
    sessions: &Sessions,
    rec: &SessionRecord,
    prefix: &Path,
    opts: Options<'_>,
    progress: &mut dyn FnMut(&str, &Written),
) -> Result<Vec<Made>, CertificateError> {
    let root = root_of(rec)?;
    let db_dir = rec.settings.db_dir.as_deref();
    let db = tables_and_dir(rec, &root, prefix)?;
    let model = rec.settings.model(root.board())?;
    let opts = opts.for_session(rec, model.as_ref());
    let mut made = Vec::new();
    let mut from_store = Vec::new();
    let mut kept = 0;
    for (g, goal, proves) in decided(rec).filter(|&(_, goal, _)| opts.wants(goal)) {
        let gr = &rec.goals[g];
        // Written already (when the question was decided, before the session was): kept
        // when the file checks now, whole, for this root, question and claim; a checker
        // pass takes seconds where re-solving took up to an hour.
        if opts.keep_checked && holds(prefix, root, goal, proves, db.as_ref()) {
            if let Some(report) = opts.report {
                report(&format!(
                    "\"{goal}?\": {} is there and checks; kept",
                    fanorona_certificate::path_for(prefix, goal).display()
                ));
            }
            kept += 1;
            continue;
        }
        let nodes = sessions.load_tree_now(rec.id, g as u8, root.board())?;
        // Decided by the rote store at the root: another session's search decided this very
        // position, and that session's certificate holds it (`fanorona cut` takes it out).
        // Re-solving it here would redo that search from nothing; only asked-for partial
        // certificates (an explicit leaf budget) still try.
        if opts.close.is_some() && !opts.resolve_rote_roots && nodes.first().is_some_and(|n| n.rote)
        {
            if let Some(report) = opts.report {
                report(&format!(
                    "\"{goal}?\" was decided by the rote store at the root: not re-solved (its certificate is the deciding session's)"
                ));
            }
            from_store.push(format!("\"{goal}?\""));
            continue;
        }
        let leaf = rec.settings.leaf(db.as_ref(), model.as_ref());
        let tree = (!nodes.is_empty())
            .then(|| PnTree::from_parts(goal, leaf, Vec::new(), nodes, Stats::default(), None));
        let search = serde_json::json!({
            "session": rec.id,
            "algorithm": rec.settings.algo,
            "nodes": gr.nodes,
            "iterations": gr.iterations,
            "seconds": gr.seconds,
        });
        made.push(write_one(
            prefix,
            db_dir,
            opts,
            progress,
            search,
            Solved {
                root,
                goal,
                proves,
                db: db.as_ref(),
                tree: tree.as_ref(),
                dfpn: None,
            },
        )?);
    }
    // A win answers the loser's question too; if it was left undecided (halted when the
    // winner's proof came in), its disproof is solved again for the certificate.
    let winner = match rec.value {
        Some(Value::Win(winner)) => Some(winner),
        _ => None,
    };
    if let Some(winner) = winner {
        let goal = Goal {
            attacker: winner.opponent(),
        };
        // (Not when the win itself came from the rote store: re-solving from nothing is
        // what that store spares.)
        if !decided(rec).any(|(_, g, _)| g == goal) && opts.wants(goal) && from_store.is_empty() {
            let search = serde_json::json!({"session": rec.id, "algorithm": "dfpn",
                "note": format!("re-solved for the certificate: {winner} wins")});
            made.push(write_one(
                prefix,
                db_dir,
                opts,
                progress,
                search,
                Solved {
                    root,
                    goal,
                    proves: false,
                    db: db.as_ref(),
                    tree: None,
                    dfpn: None,
                },
            )?);
        }
    }
    if made.is_empty() && kept == 0 && !from_store.is_empty() {
        return Err(CertificateError::FromStore {
            id: rec.id,
            goals: match from_store.as_slice() {
                [one] => format!("{one} was"),
                all => format!("{} were", all.join(" and ")),
            },
        });
    }
    Ok(made)
}

/// Writes and checks, under `prefix`, the certificate of every question of `rec` in which
/// the root's move `mv` is decided, rooted at the position after it: the move's subtree of
/// the question's first-level tree (the question itself may still be open). Only a capture
/// qualifies: what follows it cannot repeat a position before it, so its subtree's value is
/// that of the position alone.
pub fn write_move(
    sessions: &Sessions,
    rec: &SessionRecord,
    mv: &str,
    prefix: &Path,
    opts: Options<'_>,
    progress: &mut dyn FnMut(&str, &Written),
) -> Result<Vec<Made>, CertificateError> {
    let root = root_of(rec)?;
    let refuse = |why: String| CertificateError::Move {
        id: rec.id,
        mv: mv.to_string(),
        why,
    };
    let m = fanorona_rules::moves::legal_moves(&root)
        .into_iter()
        .find(|m| m.notation(root.board()) == mv)
        .ok_or_else(|| refuse(format!("not a legal move of {root}")))?;
    let after = m.apply(&root);
    if after.piece_count() >= root.piece_count() {
        return Err(refuse(
            "not a capture: the position after it could repeat the root, so its value may depend on the game before it".into(),
        ));
    }
    let db_dir = rec.settings.db_dir.as_deref();
    let db = tables_and_dir(rec, &root, prefix)?;
    let model = rec.settings.model(root.board())?;
    let opts = opts.for_session(rec, model.as_ref());
    let mut made = Vec::new();
    for (g, gr) in rec.goals.iter().enumerate() {
        let goal = gr.goal();
        if !opts.wants(goal) {
            continue;
        }
        let nodes = sessions.load_tree_now(rec.id, g as u8, root.board())?;
        let leaf = rec.settings.leaf(db.as_ref(), model.as_ref());
        let tree = PnTree::from_parts(goal, leaf, Vec::new(), nodes, Stats::default(), None);
        let r = &tree.nodes[0];
        let Some(child) = (r.first..r.first + r.count)
            .map(|c| c as usize)
            .find(|&c| tree.nodes[c].pos == after)
        else {
            continue;
        };
        let (pn, dn) = (tree.nodes[child].pn, tree.nodes[child].dn);
        if pn != 0 && dn != 0 {
            continue;
        }
        let sub = PnTree::from_parts(
            goal,
            leaf,
            Vec::new(),
            tree.subtree(child),
            Stats::default(),
            None,
        );
        let search = serde_json::json!({
            "session": rec.id,
            "algorithm": rec.settings.algo,
            "from": format!("the move {mv} of {root}, in the first-level tree of \"{goal}?\""),
        });
        made.push(write_one(
            prefix,
            db_dir,
            opts,
            progress,
            search,
            Solved {
                root: after,
                goal,
                proves: pn == 0,
                db: db.as_ref(),
                tree: Some(&sub),
                dfpn: None,
            },
        )?);
    }
    if made.is_empty() {
        return Err(refuse(
            "no question of the session has decided it yet (see `session moves`)".into(),
        ));
    }
    Ok(made)
}

/// Writes and checks one certificate under `prefix`; `search` describes how it was decided.
fn write_one(
    prefix: &Path,
    db_dir: Option<&Path>,
    opts: Options<'_>,
    progress: &mut dyn FnMut(&str, &Written),
    search: serde_json::Value,
    solved: Solved<'_, '_>,
) -> Result<Made, CertificateError> {
    let goal = solved.goal;
    let name = goal.to_string();
    let extra = certificate::header_extra(search);
    certificate::make(prefix, solved, extra, db_dir, opts.terms(), &mut |n| {
        progress(&name, n)
    })
    .map_err(|source| CertificateError::Write {
        path: certificate::path_for(prefix, goal),
        source,
    })
}
