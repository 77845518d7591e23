//! What the server holds for the cluster: jobs queued and under way, worker threads
//! waiting for one, answers not yet read (`fanorona cluster status`).

use async_nats::jetstream;
use futures_util::TryStreamExt;
use serde::Serialize;
use std::time::Duration;

use super::{ANSWERS, ClusterError, JOBS, RunCard, connect, nats};

#[derive(Clone, Debug, Default, Serialize)]
pub struct ClusterStatus {
    pub url: String,
    pub server_version: String,
    /// Whether a master made the streams yet.
    pub streams: bool,
    /// Jobs in the stream, by run: waiting for a worker or held by one.
    pub queued: Vec<(String, u64)>,
    /// Jobs a worker holds now (delivered, not yet acknowledged).
    pub running: u64,
    /// Workers' requests for jobs waiting now, over all runs (a worker has one out for all
    /// its idle threads).
    pub requests_waiting: u64,
    /// Deliveries beyond a job's first (its worker went quiet).
    pub redelivered: u64,
    /// Each run's own jobs consumer: the runs open here.
    pub runs: Vec<RunStatus>,
    /// Answers not yet read by their master, by run.
    pub answers: Vec<(String, u64)>,
    /// Jobs and answers that did not decode, set aside (kept a week).
    pub dead_letters: u64,
    /// Jobs waiting for workers of an earlier wire (stream, wire, jobs): a master of another
    /// version of fanorona ran here, and this version's workers never take them.
    pub older_jobs: Vec<(String, u32, u64)>,
}

/// One run's jobs consumer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStatus {
    pub run: String,
    /// Whether its master said it is open (a master killed leaves it open until it is back).
    pub open: bool,
    /// Jobs not yet delivered, and delivered but not yet acknowledged.
    pub waiting: u64,
    pub held: u64,
    /// Workers' requests for its jobs waiting now.
    pub asking: u64,
    pub redelivered: u64,
    /// How long a job may go without word from its worker.
    pub ack_wait_seconds: f64,
}

/// The cluster as the server at `url` sees it.
pub fn status(url: &str, token: Option<&str>) -> Result<ClusterStatus, ClusterError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(nats)?;
    runtime.block_on(async {
        let client = connect(url, token).await?;
        let mut s = ClusterStatus {
            url: url.to_string(),
            server_version: client.server_info().version,
            ..ClusterStatus::default()
        };
        let js = jetstream::new(client);
        s.older_jobs = super::older_jobs(&js).await;
        let (Ok(jobs), Ok(answers)) = (js.get_stream(JOBS).await, js.get_stream(ANSWERS).await)
        else {
            return Ok(s);
        };
        s.streams = true;
        if let Ok(mut dead) = js.get_stream(super::DEAD).await {
            s.dead_letters = dead.info().await.map_err(nats)?.state.messages;
        }
        s.queued = by_run(&jobs, super::JOBS_SUBJECTS).await?;
        s.answers = by_run(&answers, super::ANSWERS_SUBJECTS).await?;
        let mut consumers = jobs.consumers();
        while let Some(info) = consumers.try_next().await.map_err(nats)? {
            let card = info
                .config
                .description
                .as_deref()
                .and_then(|d| serde_json::from_str::<RunCard>(d).ok());
            let run = RunStatus {
                run: card.as_ref().map_or(info.name.clone(), |c| c.run.clone()),
                open: card.is_some_and(|c| c.open),
                waiting: info.num_pending,
                held: info.num_ack_pending as u64,
                asking: info.num_waiting as u64,
                redelivered: info.num_redelivered as u64,
                ack_wait_seconds: Duration::as_secs_f64(&info.config.ack_wait),
            };
            s.running += run.held;
            s.requests_waiting += run.asking;
            s.redelivered += run.redelivered;
            s.runs.push(run);
        }
        Ok(s)
    })
}

/// Messages in `stream` by run (the last token of their subject). The server pages its
/// subject list and a page boundary can name a subject twice, so each subject counts once.
async fn by_run(
    stream: &jetstream::stream::Stream,
    filter: &str,
) -> Result<Vec<(String, u64)>, ClusterError> {
    let mut subjects = stream.info_with_subjects(filter).await.map_err(nats)?;
    let mut seen = std::collections::BTreeMap::new();
    while let Some((subject, n)) = subjects.try_next().await.map_err(nats)? {
        seen.insert(subject, n as u64);
    }
    Ok(runs(seen))
}

/// Per-subject counts summed by run, in the order of the runs' names.
fn runs(subjects: std::collections::BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut out = std::collections::BTreeMap::<String, u64>::new();
    for (subject, n) in subjects {
        let run = subject.rsplit('.').next().unwrap_or(&subject).to_string();
        *out.entry(run).or_default() += n;
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_listed_once_with_its_subjects_summed() {
        let subjects = [
            ("fanorona.w3.answers.b-2", 3),
            ("fanorona.w3.answers.a-1", 5),
            ("fanorona.dead.answers.b-2", 1),
        ]
        .into_iter()
        .map(|(s, n)| (s.to_string(), n))
        .collect();
        assert_eq!(
            runs(subjects),
            [("a-1".to_string(), 5), ("b-2".to_string(), 4)]
        );
    }
}
