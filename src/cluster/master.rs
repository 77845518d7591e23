//! A question's PN² run with its second-level searches on the workers: jobs published up to
//! a number in flight, answers taken as they come (`search::jobs` keeps the books).

use std::collections::HashMap;

use async_nats::jetstream::{self, AckKind};

use super::wire::{AnswerMsg, JobMsg, Tables, VERSION};
use super::{ClusterError, answers_consumer, connect, jobs_consumer, nats, next_message};
use crate::position::Position;
use crate::search::jobs::{Applied, InFlight};
use crate::search::pn::PnTree;
use crate::search::{Goal, LeafEval};

pub struct Options {
    pub url: String,
    pub token: Option<String>,
    /// Jobs kept in flight.
    pub width: usize,
    /// The run's name: its answers come on `fanorona.answers.RUN`.
    pub run: String,
    /// How long a job may go without word from its worker before another gets it.
    pub ack_wait: std::time::Duration,
    /// How large each job's search may grow.
    pub second_level: crate::search::SecondLevel,
}

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

/// Decides `goal` from `root` with the jobs on the workers; `tables` names those the
/// leaves use (the workers must hold the same).
pub fn solve<'a>(
    options: &Options,
    root: Position,
    goal: Goal,
    leaf: LeafEval<'a>,
    tables: Option<Tables>,
    log: &dyn Fn(&str),
) -> Result<(PnTree<'a>, Tally), ClusterError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(nats)?;
    // The tree stays on this thread; only the messages wait.
    let mut tree = PnTree::new(root, goal, leaf, Vec::new());
    tree.second_level = options.second_level;
    let tally = runtime.block_on(drive(options, &mut tree, tables, log))?;
    Ok((tree, tally))
}

async fn drive(
    options: &Options,
    tree: &mut PnTree<'_>,
    tables: Option<Tables>,
    log: &dyn Fn(&str),
) -> Result<Tally, ClusterError> {
    let client = connect(&options.url, options.token.as_deref()).await?;
    let js = jetstream::new(client);
    jobs_consumer(&js, options.ack_wait).await?;
    let answers = answers_consumer(&js, &options.run).await?;
    let mut flight = InFlight::default();
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut next_id = 0u64;
    let mut tally = Tally::default();
    let init = tree.leaf_init();
    let subject = super::jobs_subject(&options.run);
    while !tree.decided() {
        while flight.len() < options.width.max(1) {
            let Some(job) = flight.next_job(tree) else {
                break;
            };
            next_id += 1;
            let msg = JobMsg::new(
                &options.run,
                next_id,
                &job,
                tree.goal.attacker,
                init,
                tables.clone(),
            );
            js.publish(
                subject.clone(),
                serde_json::to_vec(&msg).expect("jobs serialise").into(),
            )
            .await
            .map_err(nats)?
            .await
            .map_err(nats)?;
            ids.insert(next_id, job.leaf);
            tally.jobs += 1;
        }
        if flight.is_empty() {
            break;
        }
        // One answer at a time: each frees a place in flight, filled before the next wait.
        let Some(message) = next_message(&answers).await? else {
            continue;
        };
        match serde_json::from_slice::<AnswerMsg>(&message.payload) {
            Err(e) => {
                tally.garbled += 1;
                log(&format!("an answer that does not decode, set aside: {e}"));
                message.ack_with(AckKind::Term).await.map_err(nats)?;
                continue;
            }
            Ok(a) => {
                let ours = a.version == VERSION
                    && a.run == options.run
                    && a.attacker == tree.goal.attacker
                    && ids.get(&a.id) == Some(&a.leaf);
                if ours && flight.apply(tree, &a.answer()) == Applied::Taken {
                    ids.remove(&a.id);
                    tally.redelivered += u64::from(a.delivered > 1);
                    *tally.by_worker.entry(a.worker.clone()).or_default() += 1;
                } else {
                    tally.stale += 1;
                }
            }
        }
        message.ack().await.map_err(nats)?;
    }
    // Decided: the jobs still waiting are of no use to anyone, nor are answers to come.
    tally.abandoned = flight.len() as u64;
    for (stream, subject) in [
        (super::JOBS, subject),
        (super::ANSWERS, super::answers_subject(&options.run)),
    ] {
        let s = js.get_stream(stream).await.map_err(nats)?;
        s.purge().filter(subject).await.map_err(nats)?;
    }
    js.get_stream(super::ANSWERS)
        .await
        .map_err(nats)?
        .delete_consumer(&format!("master-{}", options.run))
        .await
        .map_err(nats)?;
    Ok(tally)
}
