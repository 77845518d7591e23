//! Runs one session: the first-level tree is worked on in memory and checkpointed to the
//! store every `checkpoint_ms`, when the solve stops (pause, stop, a signal) and at the end of
//! each goal. A checkpoint writes the changed node chunks, the new curve points, the new rote
//! entries and the session's counters in one batch, so the store always holds one whole
//! checkpoint and a resumed run continues exactly where that checkpoint left off.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::checkpoint_failure::{self, CheckpointFailure};
use crate::codec::{self, CHUNK};
use crate::log::{Progress, ProgressLog, resident_bytes, unix_now};
use crate::remote::Remote;
use crate::store::{Table, Write};
use crate::{GoalRecord, SessionError, SessionRecord, Sessions, State};
use fanorona_rules::position::Position;
use fanorona_search::pn::{PnTree, iterate, iterate_pair};
use fanorona_search::proof::check;
use fanorona_search::rote::{RoteEntry, RoteTable};
use fanorona_search::solution::extract_kept;
use fanorona_search::{Algorithm, CurvePoint, Leaf, LeafEval, Outcome, Stats, Value};
use fanorona_tables::Database;

/// How the outside asks a running session to stop, and sees its progress.
#[derive(Default)]
pub struct Control {
    stop: AtomicBool,
    /// The stop is the process exiting (`request_exit`).
    exit: AtomicBool,
    /// The latest progress of the running session.
    pub progress: Mutex<Option<Progress>>,
    /// The latest progress of each of its questions (both run at once on two threads).
    pub live: Mutex<Vec<Progress>>,
    /// Time spent writing periodic checkpoints (the final one of a run not included).
    pub checkpoint_seconds: Mutex<f64>,
    /// The session's questions being searched now (each on a thread of its own).
    pub searches: AtomicUsize,
    /// At most this many questions searched at once (0: as many as are open); a worker
    /// limited to one also never expands two leaves at a time.
    pub max_searches: AtomicUsize,
    /// A question alone expanding two leaves at a time (on two threads).
    pub pairing: AtomicBool,
    /// Entries each second-level df-pn table keeps at most (0: the search's default); the
    /// config's `second_level_table`.
    pub second_level_table: AtomicUsize,
    /// The process's own resident bytes at which the session checkpoints and pauses itself
    /// (0: no bound); the config's `memory_bound`.
    pub memory_bound: AtomicU64,
    /// Set while the session's checkpoints fail; cleared by the first that succeeds.
    pub checkpoint_failure: Mutex<Option<CheckpointFailure>>,
    /// Where second-level searches go instead of this process's threads (the config's
    /// `[cluster]`); `None`: they run here.
    pub dispatcher: Option<std::sync::Arc<dyn fanorona_search::jobs::Dispatcher>>,
    /// Each question's jobs, while they go elsewhere.
    pub jobs: Mutex<Vec<fanorona_search::jobs::JobsView>>,
    /// Told when `searches` or `pairing` change (the daemon's spare worker waits on it).
    watcher: std::sync::OnceLock<crossbeam_channel::Sender<()>>,
}

impl Control {
    /// A control whose searches keep second-level tables of at most `bytes` each.
    pub fn with_table(bytes: u64) -> Control {
        let c = Control::default();
        c.second_level_table.store(
            fanorona_search::pn::second_level_entries(bytes),
            Ordering::Relaxed,
        );
        c
    }
}

impl Control {
    /// From now on, `watcher` is told (one message waiting at most) whenever the searches
    /// running or the pairing change. Set once.
    pub fn watch(&self, watcher: crossbeam_channel::Sender<()>) {
        let _ = self.watcher.set(watcher);
    }

    fn changed(&self) {
        if let Some(w) = self.watcher.get() {
            let _ = w.try_send(());
        }
    }

    /// Sets how many of the session's questions are searched now.
    pub fn set_searches(&self, n: usize) {
        if self.searches.swap(n, Ordering::SeqCst) != n {
            self.changed();
        }
    }

    /// One search of the session has returned.
    fn search_ended(&self) {
        self.searches.fetch_sub(1, Ordering::SeqCst);
        self.changed();
    }

    /// Sets whether a question alone expands two leaves at a time.
    pub fn set_pairing(&self, pairing: bool) {
        if self.pairing.swap(pairing, Ordering::SeqCst) != pairing {
            self.changed();
        }
    }

    /// Asks the solve to checkpoint and return after its current iteration.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Asks the solve to stop because the process exits: a final checkpoint that fails (a
    /// full disk) is then given up after a few tries, where a pause or a handover keeps
    /// trying until it succeeds (the work since the last checkpoint exists only in memory).
    pub fn request_exit(&self) {
        self.exit.store(true, Ordering::SeqCst);
        self.request_stop();
    }

    fn exit_requested(&self) -> bool {
        self.exit.load(Ordering::Relaxed)
    }

    pub fn clear(&self) {
        self.stop.store(false, Ordering::SeqCst);
        self.exit.store(false, Ordering::SeqCst);
        self.searches.store(0, Ordering::SeqCst);
        self.pairing.store(false, Ordering::SeqCst);
        self.live.lock().expect("live lock").clear();
        self.jobs.lock().expect("jobs lock").clear();
        *self.checkpoint_failure.lock().expect("failure lock") = None;
    }

    /// Checkpoints failing: `f`, or none (`None`).
    fn set_failure(&self, f: Option<CheckpointFailure>) {
        *self.checkpoint_failure.lock().expect("failure lock") = f;
    }

    fn failure(&self) -> Option<CheckpointFailure> {
        self.checkpoint_failure
            .lock()
            .expect("failure lock")
            .clone()
    }

    /// A checkpoint of question `g` of session `id` failed with `e` at `iteration`: the
    /// failure so far, one try longer, shown from now on.
    fn note_failure(
        &self,
        sessions: &Sessions,
        id: u64,
        g: usize,
        e: &SessionError,
        iteration: u64,
    ) -> CheckpointFailure {
        let f = checkpoint_failure::note(sessions, id, g, e, iteration, self.failure());
        self.set_failure(Some(f.clone()));
        f
    }

    /// Question `view.goal`'s jobs as they stand.
    fn report_jobs(&self, view: fanorona_search::jobs::JobsView) {
        let mut jobs = self.jobs.lock().expect("jobs lock");
        match jobs.iter_mut().find(|v| v.goal == view.goal) {
            Some(v) => *v = view,
            None => jobs.push(view),
        }
    }

    /// Records a question's latest progress.
    pub fn report(&self, p: Progress) {
        let mut live = self.live.lock().expect("live lock");
        match live.iter_mut().find(|q| q.goal == p.goal) {
            Some(q) => *q = p.clone(),
            None => live.push(p.clone()),
        }
        drop(live);
        *self.progress.lock().expect("progress lock") = Some(p);
    }
}

/// How often a running search reads the rote store again for what other sessions proved
/// (at its next checkpoint after this long).
const ROTE_READ_EVERY: Duration = Duration::from_secs(600);

/// Takes into `tree` what its rote table knows of its undecided nodes (`PnTree::adopt_rote`),
/// marking the changed nodes for the next checkpoint.
fn adopt(id: u64, tree: &mut PnTree<'_>, pending: &mut Pending) {
    let adopted = tree.adopt_rote();
    if !adopted.is_empty() {
        tracing::info!(
            "session {id}: {}: taken from the rote store; {} rote leaves now ({} nodes changed)",
            tree.goal,
            tree.nodes.iter().filter(|n| n.rote).count(),
            adopted.len()
        );
        mark_adopted(tree, adopted, pending);
    }
}

/// Takes into `tree` what its tables decide of its undecided nodes (`PnTree::adopt_tables`):
/// a session moved onto larger tables (`session tune --db`) resumes with every node they
/// now answer as a table leaf, not only those it happens to expand again.
fn adopt_tables(id: u64, tree: &mut PnTree<'_>, pending: &mut Pending) {
    let adopted = tree.adopt_tables();
    if !adopted.is_empty() {
        let root = tree.root();
        tracing::info!(
            "session {id}: {}: taken from the tables; {} nodes changed, root pn {} dn {}",
            tree.goal,
            adopted.len(),
            root.pn,
            root.dn
        );
        mark_adopted(tree, adopted, pending);
    }
}

/// Marks the nodes an adoption changed for the next checkpoint.
fn mark_adopted(tree: &PnTree<'_>, adopted: Vec<usize>, pending: &mut Pending) {
    for i in adopted {
        pending.changed.push(i as u32);
        // An ancestor decided by what was adopted is learned like one decided by search.
        note_decided(tree, i, pending);
    }
}

/// Reads the rote store again (other sessions checkpoint into it too) and adopts from it.
fn adopt_others(
    sessions: &Sessions,
    id: u64,
    tree: &mut PnTree<'_>,
    rote: &RefCell<RoteTable>,
    pending: &mut Pending,
) {
    // The old copy goes first: two whole copies need not be held at once.
    *rote.borrow_mut() = RoteTable::new();
    match sessions.rote_table(tree.root().pos.board()) {
        Ok(table) => {
            *rote.borrow_mut() = table;
            adopt(id, tree, pending);
        }
        Err(e) => tracing::warn!("session {id}: cannot read the rote store again: {e}"),
    }
}

/// How often the progress log gets a line.
const LOG_EVERY: Duration = Duration::from_secs(1);

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
            Ok(db) => Some(db),
            Err(e) => return fail(sessions, id, &mut log, e.to_string()),
        },
        None => None,
    };
    let leaf = LeafEval::new(db.as_ref()).with_init(rec.settings.init);
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
            let r = solve_goal(sessions, &rec, g, root, leaf, &rote, stop, &mut log);
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
        tracing::error!("session {id}: {e}; marked failed");
        let message = e.to_string();
        if let Err(e2) = sessions.update(id, Vec::new(), |r| {
            r.state = State::Failed;
            r.error = Some(message);
            Ok(())
        }) {
            tracing::error!("session {id}: cannot mark it failed: {e2}");
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

/// What a checkpoint has still to write.
#[derive(Default)]
struct Pending {
    /// Nodes the store holds that changed since (repeats allowed; sorted out when written).
    changed: Vec<u32>,
    points: Vec<CurvePoint>,
    /// Nodes decided by search since the last checkpoint (rote candidates).
    decided: Vec<u32>,
    stored: Stored,
    /// The iteration this run resumed at, until a checkpoint records it.
    resumed_at: Option<u64>,
}

impl Pending {
    /// Sorts out repeats once `changed` outgrows the stored tree (fast PN² on a small tree,
    /// or checkpoints failing on a full disk, would grow it without end).
    fn bound_changed(&mut self) {
        if self.changed.len() > (2 * self.stored.len).max(1 << 20) {
            self.changed.sort_unstable();
            self.changed.dedup();
        }
    }
}

/// How the tree is stored. A checkpoint writes the chunks of the nodes new since the last
/// one, and a patch with what changed in the nodes stored before: a PN² iteration changes
/// the numbers along a path through the whole tree, so rewriting the chunks it touched would
/// rewrite most of a large tree every checkpoint. Once the patches outweigh the tree's
/// chunks, the chunks they touch are written again (stamped with the checkpoint, so that a
/// patch older than its chunk is skipped on load: the fold needs no single batch) and the
/// patches deleted.
#[derive(Default)]
struct Stored {
    /// Nodes the stored chunks hold.
    len: usize,
    /// The last checkpoint written.
    seq: u64,
    /// The checkpoints whose patches are not folded yet.
    patches: Vec<u64>,
    patch_bytes: u64,
    /// The chunks those patches change.
    patched: BTreeSet<u32>,
    /// Patches are folded only once they outweigh the chunks and this many bytes.
    fold_at_least: u64,
    /// Bytes of tree the last checkpoint wrote (its fold included).
    written: u64,
    /// After a failed fold, the patch bytes the next try waits for (a full disk is not
    /// filled again at every checkpoint).
    retry_fold_at: u64,
}

impl Stored {
    /// How `saved` is stored, and its nodes.
    fn of(saved: crate::SavedTree) -> (Stored, Vec<fanorona_search::pn::Node>) {
        let stored = Stored {
            len: saved.nodes.len(),
            seq: saved.seq,
            patches: saved.patches,
            patch_bytes: saved.patch_bytes,
            patched: saved.patched,
            fold_at_least: FOLD_AT_LEAST,
            written: 0,
            retry_fold_at: 0,
        };
        (stored, saved.nodes)
    }

    /// Whether the patches should be folded into the chunks.
    fn fold_due(&self) -> bool {
        let chunk_bytes = self.len as u64 * codec::NODE_BYTES_STORED;
        self.patch_bytes > chunk_bytes.max(self.fold_at_least).max(self.retry_fold_at)
    }
}

/// Patches are folded only once they outweigh the chunks and this many bytes: a resume reads
/// them all (at about 1 GB/s), so a small tree's patches need not be folded often.
const FOLD_AT_LEAST: u64 = 64 << 20;

/// Chunks a fold writes in one batch (`bench store` measures the memory a larger one costs).
pub const FOLD_BATCH: usize = 512;

/// Works on goal `g` of `rec` until it is decided or stopped; returns the updated record.
#[allow(clippy::too_many_arguments)]
fn solve_goal(
    sessions: &Sessions,
    rec: &SessionRecord,
    g: usize,
    root: Position,
    leaf: LeafEval<'_>,
    rote: &RefCell<RoteTable>,
    stop: Stop<'_>,
    log: &mut ProgressLog,
) -> Result<SessionRecord, SessionError> {
    let control = stop.control;
    let id = rec.id;
    let goal = rec.goals[g].goal();
    let (stored, saved) =
        Stored::of(sessions.load_saved(id, g as u8, root.board(), rec.goals[g].first_level)?);
    let gr = &rec.goals[g];
    let resumed = !saved.is_empty();
    let mut tree = if resumed {
        let stats = Stats {
            nodes: gr.nodes,
            iterations: gr.iterations,
            db_hits: gr.db_hits,
            repetitions: gr.repetitions,
            rote_hits: gr.rote_hits,
            seconds: gr.seconds,
        };
        PnTree::from_parts(goal, leaf, Vec::new(), saved, stats, Some(rote))
    } else {
        PnTree::with_rote(root, goal, leaf, Vec::new(), Some(rote))
    };
    tree.second_level = rec.settings.second_level;
    let entries = stop.control.second_level_table.load(Ordering::Relaxed);
    if entries > 0 {
        tree.second_level_table = entries;
    }
    let algorithm = rec.settings.algo;
    let mut pending = Pending {
        stored,
        ..Pending::default()
    };
    if resumed {
        pending.resumed_at = Some(tree.stats.iterations);
        let mended = tree.repair_saturated();
        if !mended.is_empty() {
            tracing::warn!(
                "session {id}: {goal}: {} first-level nodes had numbers that looked decided without being so; mended",
                mended.len()
            );
            pending.changed.extend(mended.iter().map(|&i| i as u32));
        }
        // What the tables decide (they may have grown since the tree was searched), then
        // what other sessions (or this one's other question) proved since: the store is
        // shared, so a position decided under one opening answers it under another.
        adopt_tables(id, &mut tree, &mut pending);
        adopt(id, &mut tree, &mut pending);
    }
    if !resumed {
        note_decided(&tree, 0, &mut pending);
    }
    let seconds_before = gr.seconds;
    let started = Instant::now();
    let interval = Duration::from_millis(rec.settings.checkpoint_ms.max(1));
    let mut last_checkpoint = Instant::now();
    let (mut last_log, mut last_log_nodes, mut last_log_secs) =
        (Instant::now(), tree.stats.nodes, seconds_before);
    let mut checkpoints = rec.checkpoints;
    let mut last_rote_read = Instant::now();
    let event = if resumed { "resume" } else { "start" };
    tracing::info!(
        "session {id}: {event} {goal} at iteration {}, {} first-level nodes",
        tree.stats.iterations,
        tree.nodes.len()
    );
    let progress = |tree: &PnTree<'_>, event: &str, nps: f64, checkpoints: u64| Progress {
        time: unix_now(),
        event: event.into(),
        session: id,
        goal: goal.attacker.name().into(),
        iteration: tree.stats.iterations,
        nodes: tree.stats.nodes,
        nodes_per_second: nps,
        root_pn: tree.root().pn,
        root_dpn: tree.root().dn,
        first_level: tree.nodes.len() as u64,
        rote_hits: tree.stats.rote_hits,
        rote_hit_rate: tree.stats.rote_hits as f64 / tree.stats.nodes.max(1) as f64,
        db_hits: tree.stats.db_hits,
        memory_bytes: resident_bytes(),
        store_bytes: sessions.store().size_on_disk(),
        seconds: tree.stats.seconds,
        checkpoints,
        written_bytes: None,
        message: None,
    };
    tree.stats.seconds = seconds_before;
    let mut first = progress(&tree, event, 0.0, checkpoints);
    if resumed {
        // What a crash (or a kill on a full disk) lost: the log saw it, the store did not.
        let lost = crate::log::lost_after_checkpoint(
            log.dir(),
            id,
            goal.attacker.name(),
            tree.stats.iterations,
        );
        if lost > 0 {
            let note = crate::log::lost_note(lost);
            tracing::warn!("session {id}: {goal}: {note}");
            first.message = Some(note);
        }
    }
    log.write(&first);
    let mut failed_checkpoint = false;
    let mut over_memory = None;
    let mut remote = match &control.dispatcher {
        Some(d) if algorithm == Algorithm::Pn2DfPn => {
            let tables = leaf
                .db
                .map(|db| fanorona_search::jobs::TablesUsed::of(db, root.board()));
            Some(Remote::new(
                d.clone(),
                id,
                goal.attacker,
                tree.leaf_init(),
                tables,
            ))
        }
        Some(d) => {
            // Jobs are df-pn searches: another second level runs here, and says so.
            control.report_jobs(fanorona_search::jobs::JobsView {
                goal: goal.attacker.name().to_string(),
                place: d.place(),
                problem: Some(format!(
                    "{algorithm} searches here: jobs are df-pn second-level searches (start the session with --algo pn2-dfpn)"
                )),
                ..Default::default()
            });
            None
        }
        None => None,
    };
    while !tree.decided() && !stop.now() {
        let before = tree.nodes.len();
        // With `[cluster]`, the jobs go to the workers (and come back here while they cannot).
        let sent = remote.as_mut().and_then(|r| r.step(&mut tree));
        // With two threads and this question alone (the other decided), PN² with df-pn
        // expands two leaves at a time, one a thread.
        let pair = algorithm == Algorithm::Pn2DfPn
            && rec.settings.pairs
            && rec.settings.threads >= 2
            && stop.running.load(Ordering::Relaxed) == 1
            && stop.control.max_searches.load(Ordering::Relaxed) != 1;
        stop.control.set_pairing(pair && sent.is_none());
        let expanded = match sent {
            Some(changed) => changed,
            None if pair => iterate_pair(&mut tree),
            None => vec![iterate(&mut tree, algorithm)],
        };
        tree.stats.seconds = seconds_before + started.elapsed().as_secs_f64();
        note_iteration(&tree, &expanded, before, &mut pending);
        let it = tree.stats.iterations;
        if !expanded.is_empty()
            && (algorithm != Algorithm::Pn
                || it.is_power_of_two()
                || it.is_multiple_of(4096)
                || tree.decided())
        {
            pending.points.push(CurvePoint {
                iteration: it,
                nodes: tree.stats.nodes,
                seconds: tree.stats.seconds,
                pn: tree.root().pn,
                dn: tree.root().dn,
            });
        }
        if last_log.elapsed() >= LOG_EVERY {
            let nps = (tree.stats.nodes - last_log_nodes) as f64
                / (tree.stats.seconds - last_log_secs).max(1e-9);
            let p = progress(&tree, "progress", nps, checkpoints);
            let bound = control.memory_bound.load(Ordering::Relaxed);
            if bound > 0 && p.memory_bytes > bound {
                over_memory = Some((p.memory_bytes, bound));
            }
            log.write(&p);
            control.report(p);
            if let Some(r) = &remote {
                control.report_jobs(r.view());
            }
            (last_log, last_log_nodes, last_log_secs) =
                (Instant::now(), tree.stats.nodes, tree.stats.seconds);
        }
        if let Some((used, bound)) = over_memory {
            // Set aside before the machine runs short: the tree is checkpointed below and
            // freed; the user resumes it once memory allows (or with a larger bound).
            let why = format!(
                "paused by the daemon: its resident memory, {} MiB, passed memory_bound ({} MiB); resume once memory allows",
                used >> 20,
                bound >> 20
            );
            tracing::warn!("session {id}: {why}");
            sessions.update(id, Vec::new(), |r| {
                if r.state == State::Running {
                    r.state = State::Paused;
                    r.error = Some(why);
                }
                Ok(())
            })?;
            stop.halt.store(true, Ordering::SeqCst);
            break;
        }
        // A failing checkpoint is tried again soon: the work since the last is only in memory.
        let due = if failed_checkpoint {
            interval.min(checkpoint_failure::RETRY)
        } else {
            interval
        };
        if last_checkpoint.elapsed() >= due {
            let t = Instant::now();
            let result = as_stored(&remote, &mut tree, |tree| {
                checkpoint(sessions, id, g, tree, &mut pending, rote, None, true)
            });
            *control.checkpoint_seconds.lock().expect("checkpoint time") +=
                t.elapsed().as_secs_f64();
            match result {
                Ok(r) => {
                    checkpoints = r.checkpoints;
                    let mut p = progress(&tree, "checkpoint", 0.0, checkpoints);
                    p.written_bytes = Some(pending.stored.written);
                    if let Some(f) = control.failure() {
                        let back = format!(
                            "checkpoint {checkpoints} written after {} failed tries: the store holds the search again, nothing was lost",
                            f.tries
                        );
                        tracing::info!("session {id}: {back}");
                        p.message = Some(back);
                        control.set_failure(None);
                    }
                    log.write(&p);
                    failed_checkpoint = false;
                    if last_rote_read.elapsed() >= ROTE_READ_EVERY {
                        adopt_others(sessions, id, &mut tree, rote, &mut pending);
                        last_rote_read = Instant::now();
                    }
                }
                Err(e) => {
                    // The store keeps the previous checkpoint; the work stays in memory and
                    // the next checkpoint that succeeds writes it all.
                    let f = control.note_failure(sessions, id, g, &e, tree.stats.iterations);
                    // Said at once, then about once a minute.
                    if f.tries % 12 == 1 {
                        tracing::error!("session {id}: {}", f.describe());
                    }
                    let mut p = progress(&tree, "error", 0.0, f.checkpoints_on_disk);
                    p.message = Some(f.describe());
                    log.write(&p);
                    failed_checkpoint = true;
                    if f.poisoned {
                        return Err(checkpoint_failure::wait_for_room(sessions, &|| stop.now()));
                    }
                }
            }
            last_checkpoint = Instant::now();
        }
    }
    // The goal decided, or the solve asked to stop: the final checkpoint of this run.
    // The result is saved first; its proof is checked after, so a long check loses nothing.
    // Jobs still in flight are withdrawn, their leaves back at their real numbers.
    if let Some(r) = remote.as_mut() {
        r.finish(&mut tree);
        control.report_jobs(r.view());
    }
    // One question's end at a time, from its checkpoint to its log line: the question that
    // ends second finds the session solved and says so last (two questions searched at once
    // wrote "solved", then the other's "goal", now and then).
    let _in_order = ENDS.lock().unwrap_or_else(|e| e.into_inner());
    let mut verdict = tree.decided().then(|| (tree.outcome(), None));
    let mut r = final_checkpoint(
        sessions,
        id,
        g,
        &tree,
        &mut pending,
        rote,
        verdict,
        control,
        log,
    )?;
    if r.state == State::Solved {
        stop.halt.store(true, Ordering::SeqCst);
    }
    let mut second_level_leaves = 0;
    if let Some((outcome, _)) = verdict
        && rec.settings.verify
    {
        // The kept tree, checked at once: nodes the rote store or a second-level search
        // decided stay leaves (taken as given, and counted); re-solving them all is the
        // certificate's work, done when the session is solved.
        let ok;
        let rote_leaves;
        (ok, rote_leaves, second_level_leaves) = extract_kept(&tree, leaf)
            .map(|t| {
                let ok = check(&t, leaf.db).is_ok();
                (ok, t.rote_leaves() as u64, t.second_level_leaves() as u64)
            })
            .unwrap_or((false, 0, 0));
        r = sessions.update(id, Vec::new(), |r| {
            r.goals[g].verified = Some(ok);
            r.goals[g].rote_leaves = rote_leaves;
            r.goals[g].second_level_leaves = second_level_leaves;
            Ok(())
        })?;
        verdict = Some((outcome, Some((ok, rote_leaves))));
    }
    let event = match (r.state, verdict) {
        (State::Solved, _) => "solved",
        (_, Some(_)) => "goal",
        (State::Paused, _) => "paused",
        (State::Stopped, _) => "stopped",
        // Still running: the process is shutting down (a signal); a restart resumes here.
        _ => "interrupted",
    };
    let mut p = progress(&tree, event, 0.0, r.checkpoints);
    if let Some((o, v)) = verdict {
        p.message = Some(format!(
            "{goal}: {}{}",
            if o == Outcome::Proven {
                "proven"
            } else {
                "disproven"
            },
            match v {
                Some((true, 0)) if second_level_leaves == 0 => ", proof verified".to_string(),
                Some((true, n)) => format!(
                    ", kept tree verified ({n} rote and {second_level_leaves} second-level leaves taken as given; the certificate checks them)"
                ),
                Some((false, _)) => ", proof FAILED the check".to_string(),
                None => String::new(),
            }
        ));
    }
    if let Some(v) = r.value {
        p.message = Some(format!("value: {}", v.name()));
    }
    log.write(&p);
    tracing::info!(
        "session {id}: {event} at iteration {}, {} nodes{}",
        tree.stats.iterations,
        tree.stats.nodes,
        p.message
            .as_deref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default()
    );
    control.report(p);
    Ok(r)
}

/// Runs `f` on the tree as the store must see it: leaves whose jobs are in flight at their
/// real numbers (a restart hands them out again).
fn as_stored<R>(
    remote: &Option<Remote>,
    tree: &mut PnTree<'_>,
    f: impl FnOnce(&PnTree<'_>) -> R,
) -> R {
    match remote {
        Some(r) => r.as_stored(tree, f),
        None => f(tree),
    }
}

/// Held by a question's search from its final checkpoint to its last log line.
static ENDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The last checkpoint of a run. The tree exists only in memory, so a failure (a full disk)
/// is retried every 5 s until it succeeds, or, once the process is exiting, three more times
/// a second apart.
#[allow(clippy::too_many_arguments)]
fn final_checkpoint(
    sessions: &Sessions,
    id: u64,
    g: usize,
    tree: &PnTree<'_>,
    pending: &mut Pending,
    rote: &RefCell<RoteTable>,
    verdict: Option<(Outcome, Option<(bool, u64)>)>,
    control: &Control,
    log: &mut ProgressLog,
) -> Result<SessionRecord, SessionError> {
    let mut last_tries = 3;
    loop {
        // No fold: the run is ending (a fold can take seconds; the next run's checkpoints make it).
        match checkpoint(sessions, id, g, tree, pending, rote, verdict, false) {
            Ok(r) => {
                control.set_failure(None);
                return Ok(r);
            }
            // Only a disk short of room heals (space freed); anything else, a poisoned
            // store included, is returned at once.
            Err(e @ SessionError::DiskFull { .. }) if last_tries > 0 => {
                let f = control.note_failure(sessions, id, g, &e, tree.stats.iterations);
                tracing::error!("session {id}: final checkpoint: {}", f.describe());
                log.write(&Progress {
                    time: unix_now(),
                    event: "error".into(),
                    session: id,
                    iteration: tree.stats.iterations,
                    checkpoints: f.checkpoints_on_disk,
                    message: Some(format!("final checkpoint: {}", f.describe())),
                    ..Progress::default()
                });
                let exiting = control.exit_requested();
                if exiting {
                    last_tries -= 1;
                }
                std::thread::sleep(if exiting {
                    Duration::from_secs(1)
                } else {
                    checkpoint_failure::RETRY
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// Marks what an iteration changed: the paths from the leaves it `expanded` to the root, and
/// the new children from `before` on (written with the chunks of new nodes).
fn note_iteration(tree: &PnTree<'_>, expanded: &[usize], before: usize, pending: &mut Pending) {
    for &n in expanded {
        let mut i = n as u32;
        while i != u32::MAX {
            pending.changed.push(i);
            note_decided(tree, i as usize, pending);
            i = tree.nodes[i as usize].parent;
        }
    }
    pending.bound_changed();
    for c in before..tree.nodes.len() {
        note_decided(tree, c, pending);
    }
}

/// Queues node `n` for the rote table if a search (not a leaf rule, a table, a repetition or
/// the rote table itself) decided it.
fn note_decided(tree: &PnTree<'_>, n: usize, pending: &mut Pending) {
    let node = &tree.nodes[n];
    if (node.proven() || node.disproven())
        && node.leaf == Leaf::Open
        && !node.repetition
        && !node.rote
    {
        pending.decided.push(n as u32);
    }
}

/// The move from `n` to its child that decides it for the side to move, if it was expanded.
fn deciding_move(tree: &PnTree<'_>, n: usize) -> Option<fanorona_rules::moves::Move> {
    let node = &tree.nodes[n];
    if !node.expanded {
        return None;
    }
    let or = tree.is_or(n);
    let children = &tree.nodes[node.first as usize..(node.first + node.count) as usize];
    let child = children.iter().find(|c| {
        if or && node.proven() {
            c.proven()
        } else if !or && node.disproven() {
            c.disproven()
        } else {
            false
        }
    })?;
    fanorona_rules::moves::legal_moves(&node.pos)
        .into_iter()
        .find(|m| m.apply(&node.pos) == child.pos)
}

/// Writes what is pending, and the goal's counters, in one batch. With `verdict`, the goal is
/// decided: its outcome is recorded and the next goal (or the value) set up. With `may_fold`,
/// then folds the patches if they are due.
#[allow(clippy::too_many_arguments)]
fn checkpoint(
    sessions: &Sessions,
    id: u64,
    g: usize,
    tree: &PnTree<'_>,
    pending: &mut Pending,
    rote: &RefCell<RoteTable>,
    verdict: Option<(Outcome, Option<(bool, u64)>)>,
    may_fold: bool,
) -> Result<SessionRecord, SessionError> {
    let board = tree.root().pos.board();
    let seq = pending.stored.seq + 1;
    let mut writes = Vec::new();
    // The chunks from the first not wholly stored on, whole; a patch for the nodes before.
    let tail = pending.stored.len / CHUNK;
    for c in tail..tree.nodes.len().div_ceil(CHUNK) {
        writes.push(chunk_write(tree, id, g, c as u32, seq));
    }
    let mut written: u64 = writes.iter().map(Write::value_bytes).sum();
    // Kept in `pending` until the batch is written: a failed checkpoint leaves them for the
    // next.
    pending.changed.sort_unstable();
    pending.changed.dedup();
    let changed: Vec<u32> = pending
        .changed
        .iter()
        .copied()
        .filter(|&i| (i as usize) < tail * CHUNK)
        .collect();
    let mut patch_bytes = 0;
    if !changed.is_empty() {
        let patch = codec::encode_patch(&tree.nodes, &changed);
        patch_bytes = patch.len() as u64;
        written += patch_bytes;
        writes.push(Write::put(
            Table::Patches,
            codec::patch_key(id, g as u8, seq),
            patch,
        ));
    }
    for p in &pending.points {
        writes.push(Write::put(
            Table::Curve,
            codec::curve_key(id, g as u8, p.iteration),
            codec::encode_point(p),
        ));
    }
    let mut learned = Vec::new();
    for &n in &pending.decided {
        let key = tree.rote_key(n as usize);
        if rote.borrow().known(&key).is_some() {
            continue;
        }
        let entry = RoteEntry {
            proven: tree.nodes[n as usize].proven(),
            best_move: deciding_move(tree, n as usize),
        };
        writes.push(Write::put(
            Table::Rote,
            codec::rote_key(&key),
            codec::encode_rote(&entry, board),
        ));
        learned.push((key, entry));
    }
    sessions.check_room(
        writes
            .iter()
            .map(|w| w.value_bytes() + w.key.len() as u64)
            .sum(),
    )?;
    let s = tree.stats;
    let resumed_at = pending.resumed_at;
    let rec = sessions.update(id, writes, |r| {
        let gr = &mut r.goals[g];
        gr.nodes = s.nodes;
        gr.iterations = s.iterations;
        gr.seconds = s.seconds;
        gr.db_hits = s.db_hits;
        gr.rote_hits = s.rote_hits;
        gr.repetitions = s.repetitions;
        gr.first_level = tree.nodes.len() as u64;
        // Once: a run killed before its first checkpoint resumes at the same iteration.
        if let Some(at) = resumed_at
            && gr.resumed_at.last() != Some(&at)
        {
            gr.resumed_at.push(at);
        }
        r.checkpoints += 1;
        if let Some((outcome, verified)) = verdict {
            gr.verified = verified.map(|(ok, _)| ok);
            gr.rote_leaves = verified.map_or(0, |(_, n)| n);
            gr.outcome = outcome;
            // The value: a side proven to win; both sides disproven is a draw; the side to
            // move disproven alone asks next whether the other side wins.
            if r.state != State::Solved {
                if let Some(w) = r.goals.iter().find(|g| g.outcome == Outcome::Proven) {
                    r.value = Some(Value::Win(w.attacker));
                    r.state = State::Solved;
                } else if r.goals.len() == 2
                    && r.goals.iter().all(|g| g.outcome == Outcome::Disproven)
                {
                    r.value = Some(Value::Draw);
                    r.state = State::Solved;
                } else if r.goals.len() == 1 {
                    r.goals
                        .push(GoalRecord::open(r.goals[0].attacker.opponent()));
                }
            }
        }
        Ok(())
    })?;
    // Written: the in-memory rote table learns it, and nothing stays pending.
    pending.resumed_at = None;
    let mut table = rote.borrow_mut();
    for (k, e) in learned {
        table.insert(k, e);
    }
    drop(table);
    let st = &mut pending.stored;
    st.len = tree.nodes.len();
    st.seq = seq;
    st.written = written;
    if !changed.is_empty() {
        st.patches.push(seq);
        st.patch_bytes += patch_bytes;
        st.patched.extend(changed.iter().map(|&i| i / CHUNK as u32));
    }
    pending.changed.clear();
    pending.points.clear();
    pending.decided.clear();
    if may_fold
        && st.fold_due()
        && let Err(e) = fold(sessions, id, g, tree, st)
    {
        // The patches stay; a later checkpoint tries again, once they grew by a quarter.
        st.retry_fold_at = st.patch_bytes + st.patch_bytes / 4;
        tracing::warn!("session {id}: folding the tree's patches into its chunks: {e}");
    }
    Ok(rec)
}

/// The write of chunk `c` of `tree` as checkpoint `seq` has it.
fn chunk_write(tree: &PnTree<'_>, id: u64, g: usize, c: u32, seq: u64) -> Write {
    let lo = c as usize * CHUNK;
    let hi = (lo + CHUNK).min(tree.nodes.len());
    Write::put(
        Table::Nodes,
        codec::chunk_key(id, g as u8, c),
        codec::encode_chunk(&tree.nodes[lo..hi], seq),
    )
}

/// Writes the chunks the patches change as the last checkpoint has them (the tree has not
/// changed since), in batches of `FOLD_BATCH`, makes them durable, then deletes the patches.
/// Stopped anywhere, the store still loads the last checkpoint: a chunk written here is
/// stamped with it, so the older patches skip its nodes.
fn fold(
    sessions: &Sessions,
    id: u64,
    g: usize,
    tree: &PnTree<'_>,
    st: &mut Stored,
) -> Result<(), SessionError> {
    let t = Instant::now();
    let chunks: Vec<u32> = st.patched.iter().copied().collect();
    sessions.check_room(chunks.len() as u64 * (CHUNK as u64 * codec::NODE_BYTES_STORED))?;
    for batch in chunks.chunks(FOLD_BATCH) {
        let writes: Vec<Write> = batch
            .iter()
            .map(|&c| chunk_write(tree, id, g, c, st.seq))
            .collect();
        st.written += writes.iter().map(Write::value_bytes).sum::<u64>();
        sessions.commit_locked(&writes)?;
    }
    sessions.store().sync()?;
    let deletes: Vec<Write> = st
        .patches
        .iter()
        .map(|&seq| Write {
            table: Table::Patches,
            key: codec::patch_key(id, g as u8, seq),
            value: None,
        })
        .collect();
    sessions.commit_locked(&deletes)?;
    sessions.store().sync()?;
    tracing::info!(
        "session {id}: folded {} patches ({} MB) into {} chunks in {:.1} s",
        st.patches.len(),
        st.patch_bytes >> 20,
        chunks.len(),
        t.elapsed().as_secs_f64()
    );
    st.patches.clear();
    st.patch_bytes = 0;
    st.patched.clear();
    st.retry_fold_at = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemStore;
    use crate::{SecondLevel, Settings};
    use fanorona_rules::Color;
    use fanorona_search::pn::Node;
    use fanorona_search::{Goal, Init};
    use std::sync::Arc;

    fn fields(n: &Node) -> impl PartialEq + std::fmt::Debug {
        (
            n.pos,
            n.pn,
            n.dn,
            n.parent,
            n.first,
            n.count,
            n.expanded,
            n.leaf,
            n.repetition,
            n.rote,
            n.since,
        )
    }

    /// After every checkpoint the store loads the tree exactly as it is in memory: new
    /// nodes' chunks, patches for the old ones, after a fold, and after a fold stopped half
    /// way (its chunks written, its patches not yet deleted) and checkpointed over.
    #[test]
    fn patches_and_folds_keep_the_stored_tree_exact() {
        let mem = Arc::new(MemStore::new());
        let sessions = Sessions::open(mem.clone(), false).unwrap();
        let root = Position::initial("3x9".parse().unwrap());
        let settings = Settings {
            algo: Algorithm::Pn2,
            db_dir: None,
            second_level: SecondLevel::Fixed(2000),
            init: Init::Mobility,
            checkpoint_ms: 1,
            verify: false,
            threads: 1,
            pairs: false,
        };
        let id = sessions.create(&root, None, settings).unwrap().id;
        let rote = RefCell::new(RoteTable::new());
        let goal = Goal {
            attacker: Color::White,
        };
        let mut tree =
            PnTree::with_rote(root, goal, LeafEval::rules_only(), Vec::new(), Some(&rote));
        tree.second_level = SecondLevel::Fixed(2000);
        let mut pending = Pending::default();
        let (mut patched, mut folded, mut half) = (0, 0, false);
        for round in 0..24 {
            for _ in 0..40 {
                let before = tree.nodes.len();
                let n = iterate(&mut tree, Algorithm::Pn2);
                note_iteration(&tree, &[n], before, &mut pending);
            }
            assert!(!tree.decided(), "the test needs a longer solve");
            if round == 12 {
                // A full disk: the next checkpoint writes what this one could not.
                mem.fail_writes.store(true, Ordering::SeqCst);
                assert!(
                    checkpoint(&sessions, id, 0, &tree, &mut pending, &rote, None, true).is_err()
                );
                mem.fail_writes.store(false, Ordering::SeqCst);
                continue;
            }
            checkpoint(&sessions, id, 0, &tree, &mut pending, &rote, None, true).unwrap();
            let st = &mut pending.stored;
            if !st.patches.is_empty() {
                patched += 1;
            }
            if round == 9 {
                // A fold stopped after its chunks: the patches stay beside them.
                let half_of: Vec<u32> = st.patched.iter().copied().step_by(2).collect();
                let writes: Vec<Write> = half_of
                    .iter()
                    .map(|&c| chunk_write(&tree, id, 0, c, st.seq))
                    .collect();
                sessions.commit_locked(&writes).unwrap();
                half = !writes.is_empty();
            }
            if round % 8 == 7 {
                fold(&sessions, id, 0, &tree, st).unwrap();
                folded += 1;
                let mut left = 0;
                sessions
                    .store()
                    .scan(Table::Patches, &[], &mut |_, _| left += 1)
                    .unwrap();
                assert_eq!(left, 0, "a fold deletes the patches");
            }
            let first_level = sessions.get(id).unwrap().goals[0].first_level;
            assert_eq!(first_level, tree.nodes.len() as u64);
            let saved = sessions
                .load_saved(id, 0, root.board(), first_level)
                .unwrap();
            assert_eq!(saved.seq, pending.stored.seq);
            assert_eq!(saved.patches, pending.stored.patches);
            assert_eq!(saved.nodes.len(), tree.nodes.len());
            for (i, (a, b)) in saved.nodes.iter().zip(&tree.nodes).enumerate() {
                assert_eq!(fields(a), fields(b), "round {round}, node {i}");
            }
        }
        assert!(tree.nodes.len() > 3 * CHUNK, "{} nodes", tree.nodes.len());
        assert!(
            patched > 10 && folded == 3 && half,
            "{patched} {folded} {half}"
        );
    }

    #[test]
    fn repeats_of_changed_nodes_are_sorted_out_once_they_outgrow_the_tree() {
        let mut p = Pending::default();
        p.stored.len = 10;
        p.changed = (0..(1u32 << 20)).map(|i| i % 7).collect();
        p.bound_changed();
        assert_eq!(p.changed.len(), 1 << 20, "up to the floor, as it came");
        p.changed.push(3);
        p.bound_changed();
        assert_eq!(p.changed, (0..7).collect::<Vec<u32>>());
    }

    #[test]
    fn patches_fold_once_they_outweigh_the_chunks() {
        let mut st = Stored {
            len: 10_000_000,
            patch_bytes: 500 << 20,
            fold_at_least: FOLD_AT_LEAST,
            ..Stored::default()
        };
        assert!(!st.fold_due(), "half the chunks' bytes");
        st.patch_bytes = 600 << 20;
        assert!(st.fold_due());
        st.len = 1000;
        st.patch_bytes = 60 << 20;
        assert!(!st.fold_due(), "a small tree's patches wait for the floor");
        st.patch_bytes = 80 << 20;
        assert!(st.fold_due());
        st.retry_fold_at = 100 << 20;
        assert!(!st.fold_due(), "after a failed fold, until they grew");
    }
}
