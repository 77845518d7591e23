//! Runs one session: each open question's first-level tree is worked on in memory
//! (`question::QuestionRun`) and checkpointed to the store every `checkpoint_ms`, when the
//! solve stops (pause, stop, a signal) and at the end of each question. A checkpoint writes
//! the changed node chunks, the new curve points, the new rote entries and the session's
//! counters in one batch (`checkpoint`), so the store always holds one whole checkpoint and a
//! resumed run continues exactly where that checkpoint left off.

mod checkpoint;
mod control;
mod question;

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::log::{Progress, ProgressLog, unix_now};
use crate::store::StoreError;
use crate::{GoalRecord, SessionError, SessionRecord, Sessions, State};
use fanorona_rules::position::Position;
use fanorona_search::LeafEval;
use fanorona_search::rote::RoteTable;
use fanorona_tables::Database;
use question::{Flow, QuestionRun};

pub use checkpoint::FOLD_BATCH;
pub use control::Control;

/// Runs session `id` until it is solved, fails, or `control` asks it to stop. Returns its
/// record as last checkpointed.
pub fn run(
    sessions: &Sessions,
    id: u64,
    control: &Control,
    log_dir: &Path,
) -> Result<SessionRecord, SessionError> {
    let rec = sessions.get(id)?;
    if rec.state != State::Running {
        return Ok(rec);
    }
    let mut log = ProgressLog::open(log_dir, id)?;
    let root: Position = match rec.root.parse() {
        Ok(p) => p,
        Err(e) => return fail(sessions, id, &mut log, format!("bad root position: {e}")),
    };
    if !rec.settings.algo.has_first_level() {
        let msg = format!("{} builds no first-level tree to keep", rec.settings.algo);
        return fail(sessions, id, &mut log, msg);
    }
    let db = match &rec.settings.db_dir {
        Some(dir) => match Database::open_whole(dir, root.board()) {
            Ok(db) => {
                db.warm();
                Some(db)
            }
            Err(e) => return fail(sessions, id, &mut log, e.to_string()),
        },
        None => None,
    };
    let model = match rec.settings.model(root.board()) {
        Ok(m) => m,
        Err(e) => return fail(sessions, id, &mut log, e.to_string()),
    };
    let leaf = rec.settings.leaf(db.as_ref(), model.as_ref());
    // With two threads both questions are searched at once: a draw needs both answers, and
    // a win by either side ends the other search.
    if rec.settings.threads >= 2 && rec.goals.len() == 1 && !rec.goals[0].outcome.decided() {
        sessions.update(id, Vec::new(), |r| {
            if r.goals.len() == 1 {
                r.goals
                    .push(GoalRecord::open(r.goals[0].attacker.opponent()));
            }
            Ok(())
        })?;
    }
    // Set when a search decided the value or failed: the other search stops.
    let halt = AtomicBool::new(false);
    let running = &control.searches;
    loop {
        let rec = sessions.get(id)?;
        if rec.state != State::Running || control.stop_requested() {
            return Ok(rec);
        }
        // A search returns only when its goal is decided or it must stop, so each round
        // either ends the session or makes progress.
        let most = match control.max_searches.load(Ordering::SeqCst) {
            0 => usize::MAX,
            n => n,
        };
        let open: Vec<usize> = (0..rec.goals.len())
            .filter(|&g| !rec.goals[g].outcome.decided())
            .take(most)
            .collect();
        control.set_searches(open.len());
        // Read once for the round, before either search starts: a search that read the
        // store itself could find what the other had just decided (a small board's question
        // ends in milliseconds), so its numbers, and whether it searched at all, would
        // depend on which thread started first.
        // Each search has its own copy (it learns as it checkpoints).
        let store = sessions.rote_table(root.board())?;
        let mut copies: Vec<RoteTable> = (1..open.len()).map(|_| store.clone()).collect();
        copies.push(store);
        let solve = |g: usize, rote: RoteTable| -> Result<SessionRecord, SessionError> {
            let rote = RefCell::new(rote);
            let mut log = ProgressLog::open(log_dir, id)?;
            let stop = Stop {
                control,
                halt: &halt,
                running,
            };
            // Set `halt` on an error, and on a panic too (the guard's drop runs while it
            // unwinds), so the other search stops at once.
            let guard = HaltGuard(&halt);
            let r = solve_question(sessions, &rec, g, root, leaf, &rote, stop, &mut log);
            control.search_ended();
            if r.is_ok() {
                std::mem::forget(guard);
            }
            r
        };
        let results: Vec<Result<SessionRecord, SessionError>> = match open.as_slice() {
            [] => {
                let msg = "running, but no question is open (a damaged record)".to_string();
                return fail(sessions, id, &mut log, msg);
            }
            [g] => vec![solve(*g, copies.pop().expect("a copy a search"))],
            gs => std::thread::scope(|s| {
                let handles: Vec<_> = gs
                    .iter()
                    .zip(copies)
                    .map(|(&g, rote)| s.spawn(move || solve(g, rote)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            halt.store(true, Ordering::SeqCst);
                            Err(SessionError::Internal("a search thread panicked".into()))
                        })
                    })
                    .collect()
            }),
        };
        for r in results {
            r?;
        }
        // Next round: the next question, or (solved, stopped) the return above.
    }
}

/// Sets its flag when dropped: on an error or a panic of the search it guards.
struct HaltGuard<'a>(&'a AtomicBool);

impl Drop for HaltGuard<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// When a search must stop: the outside asks, or the other search decided the value or
/// failed.
#[derive(Clone, Copy)]
struct Stop<'a> {
    control: &'a Control,
    halt: &'a AtomicBool,
    /// Searches of this session still running: one alone may use two threads.
    running: &'a AtomicUsize,
}

impl Stop<'_> {
    fn now(&self) -> bool {
        self.control.stop_requested() || self.halt.load(Ordering::Relaxed)
    }
}

/// `run`, with what cannot heal set aside: a panic, a damaged record or an internal error
/// marks the session failed (so the sessions after it run) and is returned as an error.
pub fn run_guarded(
    sessions: &Sessions,
    id: u64,
    control: &Control,
    log_dir: &Path,
) -> Result<SessionRecord, SessionError> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(sessions, id, control, log_dir)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(SessionError::Internal(format!(
            "the search panicked: {what}"
        )))
    });
    if let Err(e) = &result
        && fails_the_session(e, sessions)
    {
        let state = if is_damage(e) {
            State::Damaged
        } else {
            State::Failed
        };
        tracing::error!("session {id}: {e}; marked {state}");
        let message = e.to_string();
        if let Err(e2) = sessions.update(id, Vec::new(), |r| {
            r.state = state;
            r.error = Some(message);
            Ok(())
        }) {
            tracing::error!("session {id}: cannot mark it {state}: {e2}");
        }
    }
    result
}

/// Whether error `e` of a run marks its session failed: damage (a record, a tree, or the
/// store's files failing a read), a bug; not a full disk or a store that failed a write,
/// which the daemon outlasts.
pub fn fails_the_session(e: &SessionError, sessions: &Sessions) -> bool {
    match e {
        SessionError::Decode(_) | SessionError::Damaged(_) | SessionError::Internal(_) => true,
        SessionError::Store(_) => sessions.store().poisoned().is_none(),
        _ => false,
    }
}

/// Whether error `e` of a run is damage met reading the session's records (it is marked
/// `damaged`), rather than a bug (`failed`).
pub fn is_damage(e: &SessionError) -> bool {
    matches!(
        e,
        SessionError::Decode(_)
            | SessionError::Damaged(_)
            | SessionError::Store(StoreError::RecordDamaged { .. } | StoreError::Damaged { .. })
    )
}

/// Marks the session failed with `message`.
fn fail(
    sessions: &Sessions,
    id: u64,
    log: &mut ProgressLog,
    message: String,
) -> Result<SessionRecord, SessionError> {
    tracing::error!("session {id}: {message}");
    log.write(&Progress {
        time: unix_now(),
        event: "error".into(),
        session: id,
        message: Some(message.clone()),
        ..Progress::default()
    });
    sessions.update(id, Vec::new(), |r| {
        r.state = State::Failed;
        r.error = Some(message);
        Ok(())
    })
}

/// Works on question `g` of `rec` until it is decided or stopped; returns the updated record.
#[allow(clippy::too_many_arguments)]
fn solve_question(
    sessions: &Sessions,
    rec: &SessionRecord,
    g: usize,
    root: Position,
    leaf: LeafEval<'_>,
    rote: &RefCell<RoteTable>,
    stop: Stop<'_>,
    log: &mut ProgressLog,
) -> Result<SessionRecord, SessionError> {
    let mut run = QuestionRun::resume(sessions, rec, g, root, leaf, rote, stop, log)?;
    while run.goes_on() {
        // A disk too full for the last checkpoint: nothing more to write until it succeeds.
        if run.held_for_room() {
            run.checkpoint_when_due()?;
            continue;
        }
        run.step();
        if run.report_when_due()? == Flow::Paused {
            break;
        }
        run.checkpoint_when_due()?;
    }
    run.finish()
}
