//! Second-level searches as jobs for workers on other machines, over NATS JetStream.
//!
//! The master (a run that owns a first-level tree) publishes each job to a work-queue
//! stream; workers (`fanorona worker`) take them one at a time, run them over their own
//! tables, publish the answer to the answers stream and only then acknowledge the job. A
//! worker that dies before that leaves its job unacknowledged, and the server hands it to
//! another worker once its acknowledgement wait runs out; a worker still busy says so
//! ("in progress") well before. `search::jobs` is the master's bookkeeping: which leaves are
//! in flight, and answers taken once.

pub mod dispatch;
pub mod master;
pub mod simulate;
pub mod status;
pub mod trace;
pub mod wire;
pub mod worker;

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};
use futures_util::StreamExt;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("NATS at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("NATS: {0}")]
    Nats(String),
    #[error("{0}")]
    Refused(String),
}

fn nats<E: std::fmt::Display>(e: E) -> ClusterError {
    ClusterError::Nats(e.to_string())
}

/// The stream jobs wait in, one subject per run: `fanorona.w2.jobs.RUN`. Streams and
/// subjects carry the wire's version (`wire::VERSION`), so a program of another wire never
/// takes these jobs (where it would set them aside as undecodable) and waits for its own.
pub const JOBS: &str = "FANORONA_JOBS_W2";
/// The stream answers wait in until their master reads them: `fanorona.w2.answers.RUN`.
pub const ANSWERS: &str = "FANORONA_ANSWERS_W2";
/// The jobs streams of earlier wires: a worker that finds jobs waiting there says so.
const OLDER_JOBS: &[(&str, u32)] = &[("FANORONA_JOBS", 1)];
pub(crate) const JOBS_SUBJECTS: &str = "fanorona.w2.jobs.>";
pub(crate) const ANSWERS_SUBJECTS: &str = "fanorona.w2.answers.>";
/// The stream messages that do not decode are set aside in, for a person to read: a job on
/// `fanorona.dead.jobs`, an answer on `fanorona.dead.answers.RUN`. Kept a week; shared by
/// every wire (a person reads them, not a program).
pub const DEAD: &str = "FANORONA_DEAD";

/// Run `run`'s subject on the jobs stream.
pub fn jobs_subject(run: &str) -> String {
    format!("{}.{run}", JOBS_SUBJECTS.trim_end_matches(".>"))
}

/// Run `run`'s subject on the answers stream.
pub fn answers_subject(run: &str) -> String {
    format!("{}.{run}", ANSWERS_SUBJECTS.trim_end_matches(".>"))
}

/// The workers' shared durable consumer of the jobs stream.
pub const WORKERS: &str = "workers";
/// How long a job may go unacknowledged (no answer, no "in progress") before the server
/// hands it to another worker, unless the master says otherwise; a busy worker says "in
/// progress" three times in that time.
pub const ACK_WAIT: Duration = Duration::from_secs(30);
/// Deliveries of one job at most: a job that kills every worker it meets does not go round
/// for ever.
pub const MAX_DELIVER: i64 = 10;

/// This machine's name, as workers sign their answers and masters name their runs.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

/// The environment variable a token is read from when no token file is given.
pub const TOKEN_VARIABLE: &str = "FANORONA_NATS_TOKEN";

/// The server's token: the contents of `file` (trimmed) if one is given, else
/// `FANORONA_NATS_TOKEN` if set and not empty, else none. Never the command line, where
/// every user of the machine reads it.
pub fn read_token(file: Option<&std::path::Path>) -> std::io::Result<Option<String>> {
    match file {
        Some(path) => std::fs::read_to_string(path).map(|t| Some(t.trim().to_string())),
        None => Ok(std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty())),
    }
}

/// Connects to `url` with `token` (if any).
pub async fn connect(url: &str, token: Option<&str>) -> Result<async_nats::Client, ClusterError> {
    let mut options = async_nats::ConnectOptions::new()
        .name(format!("fanorona {}", env!("CARGO_PKG_VERSION")))
        .connection_timeout(Duration::from_secs(5));
    if let Some(t) = token {
        options = options.token(t.to_string());
    }
    options
        .connect(url)
        .await
        .map_err(|e| ClusterError::Connect {
            url: url.to_string(),
            reason: e.to_string(),
        })
}

/// The next message for `consumer`, waiting at most a second (`None` then).
pub async fn next_message(
    consumer: &jetstream::consumer::Consumer<pull::Config>,
) -> Result<Option<jetstream::Message>, ClusterError> {
    let mut batch = consumer
        .fetch()
        .max_messages(1)
        .expires(Duration::from_secs(1))
        .messages()
        .await
        .map_err(nats)?;
    batch.next().await.transpose().map_err(nats)
}

/// The work-queue stream `name` over `subjects`, created if it is not there: file-backed,
/// so a server restart loses no message.
async fn work_queue(
    js: &jetstream::Context,
    name: &str,
    subjects: &str,
    max_age: Duration,
) -> Result<jetstream::stream::Stream, ClusterError> {
    let config = stream::Config {
        name: name.into(),
        subjects: vec![subjects.into()],
        retention: stream::RetentionPolicy::WorkQueue,
        storage: stream::StorageType::File,
        max_age,
        ..Default::default()
    };
    match js.get_or_create_stream(config).await {
        Ok(s) => Ok(s),
        // Made meanwhile by another master (a session's two questions open at once): the
        // server refuses a second with the same subjects.
        Err(e) => js.get_stream(name).await.map_err(|_| nats(e)),
    }
}

/// The dead-letter stream (`DEAD`), made if it is not there.
pub async fn dead_letters(js: &jetstream::Context) -> Result<(), ClusterError> {
    let config = stream::Config {
        name: DEAD.into(),
        subjects: vec!["fanorona.dead.>".into()],
        storage: stream::StorageType::File,
        max_age: Duration::from_secs(7 * 86_400),
        ..Default::default()
    };
    match js.get_or_create_stream(config).await {
        Ok(_) => Ok(()),
        Err(e) => js.get_stream(DEAD).await.map(|_| ()).map_err(|_| nats(e)),
    }
}

/// The longest a message to or from the server may take before it is taken for gone.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Sets `payload` aside on the dead-letter `subject`, with why it did not decode in the
/// `Fanorona-Why` header. Returns what became of it, in words for the log: set aside, or
/// dropped and why it could not be kept (no dead-letter stream yet: a master makes it). The
/// caller drops the message from its stream either way.
pub async fn set_aside(
    js: &jetstream::Context,
    subject: String,
    payload: Vec<u8>,
    why: &str,
) -> String {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Fanorona-Why", why.replace(['\r', '\n'], " ").as_str());
    let sent = tokio::time::timeout(PATIENCE, async {
        js.publish_with_headers(subject, headers, payload.into())
            .await
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| e.to_string())
    })
    .await;
    let lost = match sent {
        Ok(Ok(_)) => return format!("set aside on {DEAD}"),
        Ok(Err(e)) => e,
        Err(_) => format!("no answer from the server in {} s", PATIENCE.as_secs()),
    };
    format!("dropped: it could not be set aside ({lost})")
}

/// The jobs stream and the workers' consumer, made by a master with its `ack_wait` (made
/// again if it has another: the jobs stay in the stream and go to the new one).
pub async fn jobs_consumer(
    js: &jetstream::Context,
    ack_wait: Duration,
) -> Result<jetstream::consumer::Consumer<pull::Config>, ClusterError> {
    // Jobs wait as long as it takes for a worker (zero: no limit).
    let stream = work_queue(js, JOBS, JOBS_SUBJECTS, Duration::ZERO).await?;
    if let Ok(c) = stream.get_consumer::<pull::Config>(WORKERS).await {
        if c.cached_info().config.ack_wait == ack_wait {
            return Ok(c);
        }
        stream.delete_consumer(WORKERS).await.map_err(nats)?;
    }
    stream
        .create_consumer(pull::Config {
            durable_name: Some(WORKERS.into()),
            ack_wait,
            max_deliver: MAX_DELIVER,
            ..Default::default()
        })
        .await
        .map_err(nats)
}

/// The workers' consumer as a master made it, waited for (saying so once) until there is one
/// or `stop` is set (`None` then).
pub async fn wait_for_jobs(
    js: &jetstream::Context,
    stop: &std::sync::atomic::AtomicBool,
    log: &(dyn Fn(&str) + Sync),
) -> Result<Option<jetstream::consumer::Consumer<pull::Config>>, ClusterError> {
    let mut said = false;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        if let Ok(stream) = js.get_stream(JOBS).await
            && let Ok(c) = stream.get_consumer::<pull::Config>(WORKERS).await
        {
            return Ok(Some(c));
        }
        if !said {
            log(&match older_jobs(js).await.into_iter().next() {
                Some((stream, wire, n)) => format!(
                    "no jobs of wire version {} yet, but {n} of wire version {wire} wait on \
                     {stream}: their master runs another version of fanorona; waiting for a \
                     master of this one",
                    wire::VERSION
                ),
                None => "no jobs stream yet: waiting for a master to make it".into(),
            });
            said = true;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(None)
}

/// The jobs streams of earlier wires with jobs in them: name, wire, jobs.
pub(crate) async fn older_jobs(js: &jetstream::Context) -> Vec<(String, u32, u64)> {
    let mut found = Vec::new();
    for &(name, wire) in OLDER_JOBS {
        if let Ok(mut stream) = js.get_stream(name).await
            && let Ok(info) = stream.info().await
            && info.state.messages > 0
        {
            found.push((name.to_string(), wire, info.state.messages));
        }
    }
    found
}

/// The answers stream and the consumer of run `run`'s answers.
pub async fn answers_consumer(
    js: &jetstream::Context,
    run: &str,
) -> Result<jetstream::consumer::Consumer<pull::Config>, ClusterError> {
    let name = format!("master-{run}");
    // Answers nobody reads (a decided question's last jobs) go after a day.
    work_queue(js, ANSWERS, ANSWERS_SUBJECTS, Duration::from_secs(86_400))
        .await?
        .get_or_create_consumer(
            &name,
            pull::Config {
                durable_name: Some(name.clone()),
                filter_subject: answers_subject(run),
                ack_wait: ACK_WAIT,
                ..Default::default()
            },
        )
        .await
        .map_err(nats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_subjects_name_the_wire_they_carry() {
        let w = wire::VERSION;
        assert!(JOBS.ends_with(&format!("_W{w}")));
        assert!(ANSWERS.ends_with(&format!("_W{w}")));
        assert_eq!(JOBS_SUBJECTS, format!("fanorona.w{w}.jobs.>"));
        assert_eq!(ANSWERS_SUBJECTS, format!("fanorona.w{w}.answers.>"));
        assert_eq!(jobs_subject("r-1"), format!("fanorona.w{w}.jobs.r-1"));
        assert!(
            OLDER_JOBS
                .iter()
                .all(|&(name, old)| old < w && name != JOBS)
        );
    }
}
