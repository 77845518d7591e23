//! One question's run ("White wins?" or "Black wins?" of a session): its first-level tree
//! resumed from the last checkpoint or started, stepped an iteration at a time, checkpointed
//! when due, and finished (the final checkpoint, the kept tree checked, the last log line).
//! Every checkpoint of the run, periodic or final, is written by `QuestionRun::write`.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Stop;
use super::checkpoint::{self, Pending, Stored, note_decided, note_iteration};
use crate::checkpoint_failure::{self, CheckpointFailure};
use crate::log::{Progress, ProgressLog, resident_bytes, unix_now};
use crate::remote::Remote;

/// The longest between checkpoints while jobs go to workers: a checkpoint comes at the
/// first step after it is due, so a crash loses at most 30 s of their answers.
pub const REMOTE_CHECKPOINT: Duration = Duration::from_secs(25);
use crate::{SessionError, SessionRecord, Sessions, State};
use fanorona_rules::position::Position;
use fanorona_search::pn::{PnTree, iterate, iterate_pair};
use fanorona_search::proof::check;
use fanorona_search::rote::RoteTable;
use fanorona_search::solution::extract_kept;
use fanorona_search::{Algorithm, CurvePoint, Goal, LeafEval, Outcome, Stats};

/// How often the progress log gets a line.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// How often a running search reads the rote store again for what other sessions proved
/// (at its next checkpoint after this long).
const ROTE_READ_EVERY: Duration = Duration::from_secs(600);

/// Held by a question's search from its final checkpoint to its last log line.
static ENDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether a run goes on after its progress line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    /// The daemon paused the session: its memory passed `memory_bound`.
    Paused,
}

/// Question `g` of a session, being searched.
pub(super) struct QuestionRun<'a> {
    sessions: &'a Sessions,
    rec: &'a SessionRecord,
    g: usize,
    goal: Goal,
    leaf: LeafEval<'a>,
    rote: &'a RefCell<RoteTable>,
    stop: Stop<'a>,
    log: &'a mut ProgressLog,
    tree: PnTree<'a>,
    /// What the next checkpoint writes.
    pending: Pending,
    /// Where second-level searches go with `[cluster]` (and PN² with df-pn).
    remote: Option<Remote>,
    clock: Clock,
    /// Checkpoints the session's record counts.
    checkpoints: u64,
    /// The last periodic checkpoint failed: the next is tried sooner.
    failed_checkpoint: bool,
    /// It failed for want of room: the search waits for the next to succeed, so that what
    /// the checkpoint must write (and the room it asks) does not grow while the disk is full.
    held_for_room: bool,
}

/// When the run last did what it does from time to time.
struct Clock {
    started: Instant,
    /// The question's solving seconds before this run.
    seconds_before: f64,
    checkpoint_every: Duration,
    last_checkpoint: Instant,
    last_log: Instant,
    last_log_nodes: u64,
    last_log_secs: f64,
    last_rote_read: Instant,
}

impl<'a> QuestionRun<'a> {
    /// Question `g` of `rec`, resumed from its last checkpoint (what the tables and the rote
    /// store decide since taken in) or started at `root`; the log says which.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resume(
        sessions: &'a Sessions,
        rec: &'a SessionRecord,
        g: usize,
        root: Position,
        leaf: LeafEval<'a>,
        rote: &'a RefCell<RoteTable>,
        stop: Stop<'a>,
        log: &'a mut ProgressLog,
    ) -> Result<QuestionRun<'a>, SessionError> {
        let id = rec.id;
        let gr = &rec.goals[g];
        let goal = gr.goal();
        let (stored, saved) =
            Stored::of(sessions.load_saved(id, g as u8, root.board(), gr.first_level)?);
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
        let now = Instant::now();
        let mut run = QuestionRun {
            sessions,
            rec,
            g,
            goal,
            leaf,
            rote,
            stop,
            log,
            pending: Pending::over(stored),
            remote: None,
            clock: Clock {
                started: now,
                seconds_before: gr.seconds,
                checkpoint_every: Duration::from_millis(rec.settings.checkpoint_ms.max(1)),
                last_checkpoint: now,
                last_log: now,
                last_log_nodes: tree.stats.nodes,
                last_log_secs: gr.seconds,
                last_rote_read: now,
            },
            tree,
            checkpoints: rec.checkpoints,
            failed_checkpoint: false,
            held_for_room: false,
        };
        if resumed {
            run.take_in_what_was_decided();
        } else {
            note_decided(&run.tree, 0, &mut run.pending);
        }
        run.say_started(resumed);
        run.remote = run.connect(root);
        Ok(run)
    }

    /// On a resume: nodes whose saved numbers looked decided mended, then what the tables
    /// decide (they may have grown since the tree was searched), then what other sessions
    /// (or this one's other question) proved since: the store is shared, so a position
    /// decided under one opening answers it under another.
    fn take_in_what_was_decided(&mut self) {
        let (id, goal) = (self.rec.id, self.goal);
        self.pending.resumed_at = Some(self.tree.stats.iterations);
        let mended = self.tree.repair_saturated();
        if !mended.is_empty() {
            tracing::warn!(
                "session {id}: {goal}: {} first-level nodes had numbers that looked decided without being so; mended",
                mended.len()
            );
            self.pending
                .changed
                .extend(mended.iter().map(|&i| i as u32));
        }
        adopt_tables(id, &mut self.tree, &mut self.pending);
        adopt(id, &mut self.tree, &mut self.pending);
    }

    /// The run's first log line, with what a crash lost if it resumes after one.
    fn say_started(&mut self, resumed: bool) {
        let (id, goal) = (self.rec.id, self.goal);
        let event = if resumed { "resume" } else { "start" };
        tracing::info!(
            "session {id}: {event} {goal} at iteration {}, {} first-level nodes",
            self.tree.stats.iterations,
            self.tree.nodes.len()
        );
        self.tree.stats.seconds = self.clock.seconds_before;
        let mut first = self.progress(event, 0.0, self.checkpoints);
        if resumed {
            // What a crash (or a kill on a full disk) lost: the log saw it, the store did not.
            let lost = crate::log::lost_after_checkpoint(
                self.log.dir(),
                id,
                goal.attacker.name(),
                self.tree.stats.iterations,
            );
            if lost > 0 {
                let note = crate::log::lost_note(lost);
                tracing::warn!("session {id}: {goal}: {note}");
                first.message = Some(note);
            }
        }
        self.log.write(&first);
    }

    /// The workers this question's second-level searches go to, with `[cluster]`.
    fn connect(&self, root: Position) -> Option<Remote> {
        let control = self.stop.control;
        let algorithm = self.rec.settings.algo;
        let d = control.dispatcher.as_ref()?;
        if algorithm != Algorithm::Pn2DfPn {
            // Jobs are df-pn searches: another second level runs here, and says so.
            control.report_jobs(fanorona_search::jobs::JobsView {
                goal: self.goal.attacker.name().to_string(),
                place: d.place(),
                problem: Some(format!(
                    "{algorithm} searches here: jobs are df-pn second-level searches (start the session with --algo pn2-dfpn)"
                )),
                ..Default::default()
            });
            return None;
        }
        if let Some(w) = self.rec.settings.own_weights() {
            // A job names its init, not weights: a worker would use its built-in ones.
            control.report_jobs(fanorona_search::jobs::JobsView {
                goal: self.goal.attacker.name().to_string(),
                place: d.place(),
                problem: Some(format!(
                    "searches here: jobs carry no weights, and this session's are its own ({}); workers have the built-in ones",
                    w.file.display()
                )),
                ..Default::default()
            });
            return None;
        }
        let tables = self
            .leaf
            .db
            .map(|db| fanorona_search::jobs::TablesUsed::of(db, root.board()));
        Some(Remote::new(
            d.clone(),
            self.rec.id,
            self.goal.attacker,
            self.tree.leaf_init(),
            tables,
        ))
    }

    /// Whether the search goes on: its question open and no stop asked.
    pub(super) fn goes_on(&self) -> bool {
        !self.tree.decided() && !self.stop.now()
    }

    /// Whether the search waits for room on the store's disk (a checkpoint failed for want
    /// of it); if so, it waits a moment first, so the caller tries the checkpoint again.
    pub(super) fn held_for_room(&self) -> bool {
        if self.held_for_room {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.held_for_room
    }

    /// One iteration of the first level (or, with `[cluster]`, what the workers answered),
    /// noted for the next checkpoint, with its point of the curve.
    pub(super) fn step(&mut self) {
        let (settings, stop) = (&self.rec.settings, self.stop);
        let algorithm = settings.algo;
        let tree = &mut self.tree;
        let before = tree.nodes.len();
        // With `[cluster]`, the jobs go to the workers (and come back here while they cannot).
        let sent = self.remote.as_mut().and_then(|r| r.step(tree));
        // With two threads and this question alone (the other decided), PN² with df-pn
        // expands two leaves at a time, one a thread.
        let pair = algorithm == Algorithm::Pn2DfPn
            && settings.pairs
            && settings.threads >= 2
            && stop.running.load(Ordering::Relaxed) == 1
            && stop.control.max_searches.load(Ordering::Relaxed) != 1;
        stop.control.set_pairing(pair && sent.is_none());
        let expanded = match sent {
            Some(changed) => changed,
            None if pair => iterate_pair(tree),
            None => vec![iterate(tree, algorithm)],
        };
        tree.stats.seconds = self.clock.seconds_before + self.clock.started.elapsed().as_secs_f64();
        note_iteration(tree, &expanded, before, &mut self.pending);
        let it = tree.stats.iterations;
        if !expanded.is_empty()
            && (algorithm != Algorithm::Pn
                || it.is_power_of_two()
                || it.is_multiple_of(4096)
                || tree.decided())
        {
            self.pending.points.push(CurvePoint {
                iteration: it,
                nodes: tree.stats.nodes,
                seconds: tree.stats.seconds,
                pn: tree.root().pn,
                dn: tree.root().dn,
            });
        }
    }

    /// The progress line, once a second; past `memory_bound`, the session paused instead
    /// (the caller ends the run, whose final checkpoint frees nothing but keeps everything).
    pub(super) fn report_when_due(&mut self) -> Result<Flow, SessionError> {
        if self.clock.last_log.elapsed() < LOG_EVERY {
            return Ok(Flow::Continue);
        }
        let control = self.stop.control;
        let c = &mut self.clock;
        let nps = (self.tree.stats.nodes - c.last_log_nodes) as f64
            / (self.tree.stats.seconds - c.last_log_secs).max(1e-9);
        (c.last_log, c.last_log_nodes, c.last_log_secs) = (
            Instant::now(),
            self.tree.stats.nodes,
            self.tree.stats.seconds,
        );
        let p = self.progress("progress", nps, self.checkpoints);
        let bound = control.memory_bound.load(Ordering::Relaxed);
        let over = bound > 0 && p.memory_bytes > bound;
        let used = p.memory_bytes;
        self.log.write(&p);
        control.report(p);
        if let Some(r) = &self.remote {
            control.report_jobs(r.view());
        }
        if !over {
            return Ok(Flow::Continue);
        }
        // Set aside before the machine runs short: the tree is checkpointed and freed; the
        // user resumes it once memory allows (or with a larger bound).
        let id = self.rec.id;
        let why = format!(
            "paused by the daemon: its resident memory, {} MiB, passed memory_bound ({} MiB); resume once memory allows",
            used >> 20,
            bound >> 20
        );
        tracing::warn!("session {id}: {why}");
        self.sessions.update(id, Vec::new(), |r| {
            if r.state == State::Running {
                r.state = State::Paused;
                r.error = Some(why);
            }
            Ok(())
        })?;
        self.stop.halt.store(true, Ordering::SeqCst);
        Ok(Flow::Paused)
    }

    /// A periodic checkpoint, once `checkpoint_ms` passed since the last (sooner after a
    /// failed one: the work since the last is only in memory). A failure is said and kept
    /// for the next; only a poisoned store ends the run.
    pub(super) fn checkpoint_when_due(&mut self) -> Result<(), SessionError> {
        // Workers' answers live only in this tree until a checkpoint: with jobs out, a crash
        // loses at most 30 s of their work whatever the interval set.
        let every = if self.remote.as_ref().is_some_and(Remote::connected) {
            self.clock.checkpoint_every.min(REMOTE_CHECKPOINT)
        } else {
            self.clock.checkpoint_every
        };
        let due = if self.failed_checkpoint {
            every.min(checkpoint_failure::RETRY)
        } else {
            every
        };
        // During a backup the store takes no write: the checkpoint waits, the search goes on.
        if self.clock.last_checkpoint.elapsed() < due || self.sessions.backing_up() {
            return Ok(());
        }
        let control = self.stop.control;
        let t = Instant::now();
        let result = self.write(None, true);
        *control.checkpoint_seconds.lock().expect("checkpoint time") += t.elapsed().as_secs_f64();
        match result {
            Ok(r) => {
                self.checkpoints = r.checkpoints;
                let mut p = self.progress("checkpoint", 0.0, self.checkpoints);
                p.written_bytes = Some(self.pending.stored.written);
                if let Some(f) = control.failure() {
                    let back = format!(
                        "checkpoint {} written after {} failed tries: the store holds the search again, nothing was lost",
                        self.checkpoints, f.tries
                    );
                    tracing::info!("session {}: {back}", self.rec.id);
                    p.message = Some(back);
                    control.set_failure(None);
                }
                self.log.write(&p);
                self.failed_checkpoint = false;
                self.held_for_room = false;
                if self.clock.last_rote_read.elapsed() >= ROTE_READ_EVERY {
                    adopt_others(
                        self.sessions,
                        self.rec.id,
                        &mut self.tree,
                        self.rote,
                        &mut self.pending,
                    );
                    self.clock.last_rote_read = Instant::now();
                }
            }
            Err(e) => {
                // The store keeps the previous checkpoint; the work stays in memory and the
                // next checkpoint that succeeds writes it all.
                let f = self.note_failed(&e, false);
                self.failed_checkpoint = true;
                self.held_for_room = matches!(e, SessionError::DiskFull { .. });
                if f.poisoned {
                    let stop = self.stop;
                    return Err(checkpoint_failure::wait_for_room(self.sessions, &|| {
                        stop.now()
                    }));
                }
            }
        }
        self.clock.last_checkpoint = Instant::now();
        Ok(())
    }

    /// Writes a checkpoint: the tree as the store must see it (leaves whose jobs are in
    /// flight at their real numbers, so a restart hands them out again). With `decided`,
    /// the question's outcome too. With `may_fold`, the patches are folded if due.
    fn write(
        &mut self,
        decided: Option<Outcome>,
        may_fold: bool,
    ) -> Result<SessionRecord, SessionError> {
        let QuestionRun {
            sessions,
            rec,
            g,
            rote,
            tree,
            pending,
            remote,
            ..
        } = self;
        let mut write = |tree: &PnTree<'_>| {
            checkpoint::write(sessions, rec.id, *g, tree, pending, rote, decided, may_fold)
        };
        match remote {
            Some(r) => r.as_stored(tree, write),
            None => write(tree),
        }
    }

    /// A checkpoint failed with `e`: noted for `session status`, said in the log (at once,
    /// then about once a minute for periodic ones).
    fn note_failed(&mut self, e: &SessionError, last: bool) -> CheckpointFailure {
        let (id, control) = (self.rec.id, self.stop.control);
        let f = control.note_failure(self.sessions, id, self.g, e, self.tree.stats.iterations);
        let what = if last {
            format!("final checkpoint: {}", f.describe())
        } else {
            f.describe()
        };
        if last || f.tries % 12 == 1 {
            tracing::error!("session {id}: {what}");
        }
        let mut p = self.progress("error", 0.0, f.checkpoints_on_disk);
        p.message = Some(what);
        self.log.write(&p);
        f
    }

    /// The last checkpoint of the run (no fold: the run is ending, and a fold can take
    /// seconds). The tree exists only in memory, so a full disk is retried every 5 s until it
    /// succeeds, or, once the process is exiting, three more times a second apart.
    fn final_checkpoint(
        &mut self,
        decided: Option<Outcome>,
    ) -> Result<SessionRecord, SessionError> {
        let control = self.stop.control;
        let mut last_tries = 3;
        loop {
            match self.write(decided, false) {
                Ok(r) => {
                    control.set_failure(None);
                    return Ok(r);
                }
                // Only a disk short of room heals (space freed); anything else, a poisoned
                // store included, is returned at once.
                Err(e @ SessionError::DiskFull { .. }) if last_tries > 0 => {
                    self.note_failed(&e, true);
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

    /// The question decided, or the search asked to stop: jobs in flight withdrawn, the final
    /// checkpoint (the result saved before its proof is checked, so a long check loses
    /// nothing), the kept tree checked, the last log line. Returns the updated record.
    pub(super) fn finish(mut self) -> Result<SessionRecord, SessionError> {
        let (id, g, goal, control) = (self.rec.id, self.g, self.goal, self.stop.control);
        if let Some(r) = self.remote.as_mut() {
            r.finish(&mut self.tree);
            control.report_jobs(r.view());
        }
        // One question's end at a time, from its checkpoint to its log line: the question that
        // ends second finds the session solved and says so last (two questions searched at
        // once wrote "solved", then the other's "goal", now and then).
        let _in_order = ENDS.lock().unwrap_or_else(|e| e.into_inner());
        let decided = self.tree.decided().then(|| self.tree.outcome());
        let mut r = self.final_checkpoint(decided)?;
        if r.state == State::Solved {
            self.stop.halt.store(true, Ordering::SeqCst);
        }
        let mut checked = None;
        if decided.is_some() && self.rec.settings.verify {
            let kept = self.check_kept();
            r = self.sessions.update(id, Vec::new(), |r| {
                r.goals[g].verified = Some(kept.ok);
                r.goals[g].rote_leaves = kept.rote_leaves;
                r.goals[g].second_level_leaves = kept.second_level_leaves;
                Ok(())
            })?;
            checked = Some(kept);
        }
        let event = match (r.state, decided) {
            (State::Solved, _) => "solved",
            (_, Some(_)) => "goal",
            (State::Paused, _) => "paused",
            (State::Stopped, _) => "stopped",
            // Still running: the process is shutting down (a signal); a restart resumes here.
            _ => "interrupted",
        };
        let mut p = self.progress(event, 0.0, r.checkpoints);
        if let Some(o) = decided {
            let said = if o == Outcome::Proven {
                "proven"
            } else {
                "disproven"
            };
            let check = checked.map(|c| c.said()).unwrap_or_default();
            p.message = Some(format!("{goal}: {said}{check}"));
        }
        if let Some(v) = r.value {
            p.message = Some(format!("value: {}", v.name()));
        }
        self.log.write(&p);
        tracing::info!(
            "session {id}: {event} at iteration {}, {} nodes{}",
            self.tree.stats.iterations,
            self.tree.stats.nodes,
            p.message
                .as_deref()
                .map(|m| format!(", {m}"))
                .unwrap_or_default()
        );
        control.report(p);
        Ok(r)
    }

    /// The kept tree, checked at once: nodes the rote store or a second-level search decided
    /// stay leaves (taken as given, and counted); re-solving them all is the certificate's
    /// work, done when the session is solved.
    fn check_kept(&self) -> KeptCheck {
        extract_kept(&self.tree, self.leaf)
            .map(|t| KeptCheck {
                ok: check(&t, self.leaf.db).is_ok(),
                rote_leaves: t.rote_leaves() as u64,
                second_level_leaves: t.second_level_leaves() as u64,
            })
            .unwrap_or(KeptCheck {
                ok: false,
                rote_leaves: 0,
                second_level_leaves: 0,
            })
    }

    /// The question's progress now, as the log and `session status` show it.
    fn progress(&self, event: &str, nps: f64, checkpoints: u64) -> Progress {
        let tree = &self.tree;
        Progress {
            time: unix_now(),
            event: event.into(),
            session: self.rec.id,
            goal: self.goal.attacker.name().into(),
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
            store_bytes: self.sessions.store().size_on_disk(),
            seconds: tree.stats.seconds,
            checkpoints,
            written_bytes: None,
            message: None,
        }
    }
}

/// What checking a decided question's kept tree found.
#[derive(Clone, Copy)]
struct KeptCheck {
    ok: bool,
    rote_leaves: u64,
    second_level_leaves: u64,
}

impl KeptCheck {
    /// How the question's last log line says it, after "proven" or "disproven".
    fn said(self) -> String {
        match self {
            KeptCheck {
                ok: true,
                rote_leaves: 0,
                second_level_leaves: 0,
            } => ", proof verified".to_string(),
            KeptCheck {
                ok: true,
                rote_leaves,
                second_level_leaves,
            } => format!(
                ", kept tree verified ({rote_leaves} rote and {second_level_leaves} second-level leaves taken as given; the certificate checks them)"
            ),
            KeptCheck { ok: false, .. } => ", proof FAILED the check".to_string(),
        }
    }
}

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
