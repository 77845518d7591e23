//! A question's PN² run with its second-level searches on the workers, without the daemon
//! (`fanorona cluster solve`): the tree in memory, the jobs through a `NatsDispatch`.

use std::collections::BTreeMap;

use fanorona_rules::Position;
use fanorona_search::Outcome;
use serde::{Deserialize, Serialize};

use super::ClusterError;
use super::dispatch::{self, NatsDispatch};
use super::wire::Tables;
use fanorona_search::jobs::{Dispatch, Virtual, solve_by_dispatch};
use fanorona_search::pn::PnTree;

/// What a run did besides deciding its question.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub jobs: u64,
    /// Answers for a leaf not in flight (a job run twice), or of another run or version.
    pub stale: u64,
    /// Answers that did not decode.
    pub garbled: u64,
    /// Jobs still in flight when the question was decided: taken off the stream unrun.
    pub abandoned: u64,
    /// Answers taken from a job's second delivery or later (its first worker went quiet).
    pub redelivered: u64,
    /// Jobs answered by each worker, by name (in name order, as they are printed).
    pub by_worker: BTreeMap<String, u64>,
    /// Wall seconds from the search's start (the connection made) to the decision: what
    /// `cluster simulate` calls a run's seconds. 0 in output from before it was counted.
    #[serde(default)]
    pub seconds: f64,
}

/// `cluster solve --json`: a position's value, and each question's run on the workers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolvedOnWorkers {
    pub position: Position,
    /// "white", "black" (that side wins) or "draw"; "not white" or "not black" when only
    /// that question was asked (`--goal`) and disproven.
    pub value: String,
    pub searches: Vec<QuestionOnWorkers>,
}

/// One question of `cluster solve`: how it came out, its tree, and what the jobs did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionOnWorkers {
    /// "white wins" or "black wins".
    pub goal: String,
    pub outcome: Outcome,
    pub nodes: u64,
    pub iterations: u64,
    #[serde(flatten)]
    pub tally: Tally,
}

/// Decides `tree` with the jobs on the workers as run `run`; `tables` names those the
/// leaves use (the workers must hold the same); each job answered is added to the trace at
/// `trace`, if given (for `cluster simulate` to replay the same jobs).
pub fn solve(
    options: &dispatch::Options,
    run: String,
    tree: &mut PnTree<'_>,
    (tables, trace): (Option<Tables>, Option<std::path::PathBuf>),
    log: fn(&str),
) -> Result<Tally, ClusterError> {
    let (attacker, init) = (tree.goal.attacker, tree.leaf_init());
    let mut d = NatsDispatch::open(options, run, attacker, init, tables)?
        .logging_to(log)
        .tracing_to(trace);
    let start = std::time::Instant::now();
    let abandoned = solve_by_dispatch(tree, &mut d, Virtual::default())
        .map_err(|e| ClusterError::Nats(e.to_string()))?;
    let view = d.view();
    let tally = Tally {
        jobs: view.sent,
        stale: view.stale,
        garbled: view.garbled,
        abandoned,
        redelivered: view.redelivered,
        by_worker: d.by_worker().map(|(w, n)| (w.to_string(), n)).collect(),
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok(tally)
}
