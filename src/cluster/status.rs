//! What the server holds for the cluster: jobs queued and under way, worker threads
//! waiting for one, answers not yet read (`fanorona cluster status`).

use async_nats::jetstream::{self, consumer::pull};
use futures_util::TryStreamExt;
use serde::Serialize;

use super::{ANSWERS, ClusterError, JOBS, WORKERS, connect, nats};

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
    /// Worker threads asking for a job now (each asks again every second while idle).
    pub idle_threads: u64,
    /// Deliveries beyond a job's first (its worker went quiet).
    pub redelivered: u64,
    /// How long a job may go without word from its worker.
    pub ack_wait_seconds: f64,
    /// Answers not yet read by their master, by run.
    pub answers: Vec<(String, u64)>,
    /// Jobs and answers that did not decode, set aside (kept a week).
    pub dead_letters: u64,
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
        let (Ok(jobs), Ok(answers)) = (js.get_stream(JOBS).await, js.get_stream(ANSWERS).await)
        else {
            return Ok(s);
        };
        s.streams = true;
        if let Ok(mut dead) = js.get_stream(super::DEAD).await {
            s.dead_letters = dead.info().await.map_err(nats)?.state.messages;
        }
        s.queued = by_run(&jobs, "fanorona.jobs.>").await?;
        s.answers = by_run(&answers, "fanorona.answers.>").await?;
        if let Ok(mut c) = jobs.get_consumer::<pull::Config>(WORKERS).await {
            let info = c.info().await.map_err(nats)?;
            s.running = info.num_ack_pending as u64;
            s.idle_threads = info.num_waiting as u64;
            s.redelivered = info.num_redelivered as u64;
            s.ack_wait_seconds = info.config.ack_wait.as_secs_f64();
        }
        Ok(s)
    })
}

/// Messages in `stream` by run (the last token of their subject).
async fn by_run(
    stream: &jetstream::stream::Stream,
    filter: &str,
) -> Result<Vec<(String, u64)>, ClusterError> {
    let mut subjects = stream.info_with_subjects(filter).await.map_err(nats)?;
    let mut out = Vec::new();
    while let Some((subject, n)) = subjects.try_next().await.map_err(nats)? {
        let run = subject.rsplit('.').next().unwrap_or(&subject).to_string();
        out.push((run, n as u64));
    }
    out.sort();
    Ok(out)
}
