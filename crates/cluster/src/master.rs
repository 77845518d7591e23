//! A question's PN² run with its second-level searches on the workers, without the daemon
//! (`fanorona cluster solve`): the tree in memory, the jobs through a `NatsDispatch`.

use std::collections::HashMap;

use super::ClusterError;
use super::dispatch::{self, NatsDispatch};
use super::wire::Tables;
use fanorona_search::jobs::{Dispatch, Virtual, solve_by_dispatch};
use fanorona_search::pn::PnTree;

/// What a run did besides deciding its question.
#[derive(Clone, Debug, Default)]
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
    pub by_worker: HashMap<String, u64>,
}

/// Decides `tree` with the jobs on the workers as run `run`; `tables` names those the
/// leaves use (the workers must hold the same).
pub fn solve(
    options: &dispatch::Options,
    run: String,
    tree: &mut PnTree<'_>,
    tables: Option<Tables>,
    log: fn(&str),
) -> Result<Tally, ClusterError> {
    let (attacker, init) = (tree.goal.attacker, tree.leaf_init());
    let mut d = NatsDispatch::open(options, run, attacker, init, tables)?.logging_to(log);
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
    };
    Ok(tally)
}
