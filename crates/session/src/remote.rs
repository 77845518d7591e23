//! A question's second-level searches run elsewhere (the config's `[cluster]`): jobs handed
//! out through a `Dispatcher`, many in flight, answers folded in as they come
//! (`search::jobs`, job-level proof-number search).
//!
//! When the jobs cannot go out (the server is unreachable at the start, or goes away), the
//! leaves in flight get their real numbers back, the search goes on in this process, and
//! the dispatcher is tried again after its `retry`: the tree is never lost nor stalled.

use std::sync::Arc;
use std::time::Instant;

use fanorona_rules::position::Color;
use fanorona_search::Init;
use fanorona_search::jobs::{Dispatch, DispatchError, Dispatcher, InFlight, JobsView, TablesUsed};
use fanorona_search::pn::PnTree;

pub struct Remote {
    dispatcher: Arc<dyn Dispatcher>,
    dispatch: Option<Box<dyn Dispatch>>,
    flight: InFlight,
    session: u64,
    attacker: Color,
    init: Init,
    tables: Option<TablesUsed>,
    /// When to try the dispatcher again, while it fails.
    next_try: Instant,
    /// Why jobs do not go out now.
    problem: Option<String>,
    /// What the dispatches before this one saw (they are replaced after a fault).
    before: JobsView,
}

impl Remote {
    pub fn new(
        dispatcher: Arc<dyn Dispatcher>,
        session: u64,
        attacker: Color,
        init: Init,
        tables: Option<TablesUsed>,
    ) -> Remote {
        Remote {
            dispatcher,
            dispatch: None,
            flight: InFlight::default(),
            session,
            attacker,
            init,
            tables,
            next_try: Instant::now(),
            problem: None,
            before: JobsView::default(),
        }
    }

    /// One step of the search with its jobs elsewhere: jobs handed out up to the width in
    /// flight, then at most one answer taken (waiting about a second). Returns the nodes it
    /// changed, or `None` when jobs cannot go out now (the caller searches here instead).
    pub fn step(&mut self, tree: &mut PnTree<'_>) -> Option<Vec<usize>> {
        if self.dispatch.is_none() {
            if Instant::now() < self.next_try {
                return None;
            }
            match self
                .dispatcher
                .open(self.session, self.attacker, self.init, self.tables.clone())
            {
                Ok(d) => {
                    if self.problem.take().is_some() {
                        tracing::info!(
                            "session {}: {}: jobs go to {} again",
                            self.session,
                            self.attacker.name(),
                            self.dispatcher.place()
                        );
                    }
                    self.dispatch = Some(d);
                }
                Err(e) => {
                    self.fault(tree, e);
                    return None;
                }
            }
        }
        let d = self.dispatch.as_mut().expect("opened above");
        let mut changed = Vec::new();
        if let Err(e) = self.flight.step(tree, d.as_mut(), &mut changed) {
            self.fault(tree, e);
        }
        Some(changed)
    }

    /// Jobs cannot go out: the leaves in flight get their numbers back (their work is lost,
    /// never counted), and the search goes on here until the next try.
    fn fault(&mut self, tree: &mut PnTree<'_>, e: DispatchError) {
        self.flight.abandon(tree);
        if let Some(d) = self.dispatch.take() {
            self.before = add(&self.before, &d.view());
        }
        let problem = format!(
            "jobs cannot go to {}: {e}; searching here, trying again every {} s",
            self.dispatcher.place(),
            self.dispatcher.retry().as_secs()
        );
        if self.problem.as_deref() != Some(problem.as_str()) {
            tracing::warn!(
                "session {}: {}: {problem}",
                self.session,
                self.attacker.name()
            );
        }
        self.problem = Some(problem);
        self.next_try = Instant::now() + self.dispatcher.retry();
    }

    /// Runs `f` on the tree as a checkpoint must see it: leaves in flight at their real
    /// numbers.
    pub fn as_stored<R>(&self, tree: &mut PnTree<'_>, f: impl FnOnce(&PnTree<'_>) -> R) -> R {
        self.flight.with_real_numbers(tree, f)
    }

    /// The search ends (decided or stopped): jobs in flight withdrawn, their leaves back at
    /// their real numbers.
    pub fn finish(&mut self, tree: &mut PnTree<'_>) {
        self.flight.abandon(tree);
        if let Some(d) = self.dispatch.as_mut() {
            d.close();
        }
    }

    /// Whether jobs go out now.
    pub fn connected(&self) -> bool {
        self.dispatch.is_some()
    }

    /// What the jobs of this question came to, the dispatches before a fault included.
    pub fn view(&self) -> JobsView {
        let now = match &self.dispatch {
            Some(d) => d.view(),
            None => JobsView {
                goal: self.attacker.name().to_string(),
                place: self.dispatcher.place(),
                ..JobsView::default()
            },
        };
        JobsView {
            connected: self.dispatch.is_some(),
            problem: self.problem.clone(),
            ..add(&self.before, &now)
        }
    }
}

/// `a` and `b`'s counts together, `b`'s words.
fn add(a: &JobsView, b: &JobsView) -> JobsView {
    let mut workers = a.workers.clone();
    for w in &b.workers {
        match workers.iter_mut().find(|v| v.name == w.name) {
            Some(v) => {
                v.jobs += w.jobs;
                v.nodes += w.nodes;
                v.seconds += w.seconds;
                v.last_heard = v.last_heard.max(w.last_heard);
                v.host.clone_from(&w.host);
                v.threads = w.threads;
            }
            None => workers.push(w.clone()),
        }
    }
    JobsView {
        goal: b.goal.clone(),
        place: b.place.clone(),
        connected: b.connected,
        problem: b.problem.clone(),
        in_flight: b.in_flight,
        sent: a.sent + b.sent,
        answered: a.answered + b.answered,
        redelivered: a.redelivered + b.redelivered,
        stale: a.stale + b.stale,
        garbled: a.garbled + b.garbled,
        resent: a.resent + b.resent,
        workers,
    }
}
