//! Second-level searches as jobs for workers on other machines, over NATS JetStream.
//!
//! The master (a run that owns a first-level tree) publishes each job to a work-queue
//! stream; workers (`fanorona worker`) take them one a thread (a request for all its idle threads), run them over their own
//! tables, publish the answer to the answers stream and only then acknowledge the job. A
//! worker that dies before that leaves its job unacknowledged, and the server hands it to
//! another worker once its acknowledgement wait runs out; a worker still busy says so
//! ("in progress") well before. `search::jobs` is the master's bookkeeping: which leaves are
//! in flight, and answers taken once.

pub mod bench;
pub mod dispatch;
pub mod master;
pub mod simulate;
pub mod status;
pub mod trace;
pub mod wire;
pub mod worker;

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};
use futures_util::TryStreamExt;
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

/// The stream jobs wait in, one subject per run: `fanorona.w4.jobs.RUN`. Streams and
/// subjects carry the wire's version (`wire::VERSION`), so a program of another wire never
/// takes these jobs (where it would set them aside as undecodable) and waits for its own.
pub const JOBS: &str = "FANORONA_JOBS_W4";
/// The stream answers wait in until their master reads them: `fanorona.w4.answers.RUN`.
pub const ANSWERS: &str = "FANORONA_ANSWERS_W4";
/// The jobs streams of earlier wires: a worker that finds jobs waiting there says so.
const OLDER_JOBS: &[(&str, u32)] = &[
    ("FANORONA_JOBS_W3", 3),
    ("FANORONA_JOBS_W2", 2),
    ("FANORONA_JOBS", 1),
];
pub(crate) const JOBS_SUBJECTS: &str = "fanorona.w4.jobs.>";
pub(crate) const ANSWERS_SUBJECTS: &str = "fanorona.w4.answers.>";
/// Where masters announce their runs (`RunCard`, JSON; core NATS, not stored): when one
/// opens, every `ANNOUNCE_EVERY` while it is open, and when it closes.
pub const RUNS_SUBJECT: &str = "fanorona.w4.runs";
/// How often an open run is announced again (for workers that joined since).
pub const ANNOUNCE_EVERY: Duration = Duration::from_secs(10);
/// The stream messages that do not decode are set aside in, for a person to read: a job on
/// `fanorona.dead.jobs`, an answer on `fanorona.dead.answers.RUN`. Kept a week, 64 MiB and
/// 10,000 messages at most (the oldest go first); shared by every wire (a person reads
/// them, not a program).
pub const DEAD: &str = "FANORONA_DEAD";
/// A job or an answer waiting longer than this is dropped by the server: its master has
/// long sent it again or gone (a master resends what is unanswered for 20 ack waits).
pub const MAX_AGE: Duration = Duration::from_secs(3600);

/// Run `run`'s subject on the jobs stream.
pub fn jobs_subject(run: &str) -> String {
    format!("{}.{run}", JOBS_SUBJECTS.trim_end_matches(".>"))
}

/// Run `run`'s subject on the answers stream.
pub fn answers_subject(run: &str) -> String {
    format!("{}.{run}", ANSWERS_SUBJECTS.trim_end_matches(".>"))
}

/// Where workers answer each announcement of run `run`: taking its jobs, or not and why
/// (`Reply`, JSON; core NATS).
pub fn replies_subject(run: &str) -> String {
    format!("fanorona.w3.replies.{run}")
}

/// The durable consumer run `run`'s jobs are taken through: each run has its own, made by
/// its master with its own ack wait, so masters sharing a server never change or delete
/// another's under its workers.
pub fn jobs_consumer_name(run: &str) -> String {
    format!("jobs-{run}")
}

/// What a master says of its run: on `RUNS_SUBJECT`, and in its jobs consumer's description
/// (for workers that start while it runs).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunCard {
    pub run: String,
    /// The tables its jobs' searches read: a worker takes the run's jobs only if it holds
    /// the same.
    pub tables: Option<wire::Tables>,
    /// How long a job may go without word from its worker (who says "in progress" three
    /// times in it), in milliseconds.
    pub ack_wait_ms: u64,
    /// False once the run is closed (its question decided or its master stopped).
    pub open: bool,
}

/// A worker's answer to a run's announcement: it takes the run's jobs (`why` none), or
/// cannot, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reply {
    pub worker: String,
    pub why: Option<String>,
}

/// How long a job may go unacknowledged (no answer, no "in progress") before the server
/// hands it to another worker, unless the master says otherwise; a busy worker says "in
/// progress" three times in that time.
pub const ACK_WAIT: Duration = Duration::from_secs(30);
/// Deliveries of one job at most: a job that kills every worker it meets does not go round
/// for ever (its master hears the server's advisory and searches it itself).
pub const MAX_DELIVER: i64 = 10;
/// Jobs a run's workers may hold at once: more than 1,024 workers of several threads.
const MAX_ACK_PENDING: i64 = 65_536;
/// Pull requests a run's consumer keeps waiting at once (a worker process has one out a run
/// for all its idle threads).
const MAX_WAITING: i64 = 4_096;

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
        .map_err(|e| {
            let reason = e.to_string();
            // The server says "authorization violation" for both: which it is, we know.
            let reason = if !reason.to_lowercase().contains("authorization") {
                reason
            } else if token.is_none() {
                format!(
                    "{reason}: the server asks for a token and none was given ({TOKEN_VARIABLE} or a token file)"
                )
            } else {
                format!("{reason}: the server refused the token given")
            };
            ClusterError::Connect {
                url: url.to_string(),
                reason,
            }
        })
}

/// The stream `name` over `subjects` (a work queue, or kept while consumers want them),
/// created if it is not there: file-backed, so a server restart loses no message.
async fn work_queue(
    js: &jetstream::Context,
    name: &str,
    subjects: &str,
    max_age: Duration,
    retention: stream::RetentionPolicy,
) -> Result<jetstream::stream::Stream, ClusterError> {
    let config = stream::Config {
        name: name.into(),
        subjects: vec![subjects.into()],
        retention,
        storage: stream::StorageType::File,
        max_age,
        ..Default::default()
    };
    ensure_stream(js, config).await
}

/// The dead-letter stream (`DEAD`), made if it is not there.
pub async fn dead_letters(js: &jetstream::Context) -> Result<(), ClusterError> {
    let config = stream::Config {
        name: DEAD.into(),
        subjects: vec!["fanorona.dead.>".into()],
        storage: stream::StorageType::File,
        max_age: Duration::from_secs(7 * 86_400),
        max_bytes: 64 << 20,
        max_messages: 10_000,
        discard: stream::DiscardPolicy::Old,
        ..Default::default()
    };
    ensure_stream(js, config).await.map(|_| ())
}

/// Stream `config.name` made, or brought to `config`'s limits if an earlier version made it
/// without them.
async fn ensure_stream(
    js: &jetstream::Context,
    config: stream::Config,
) -> Result<jetstream::stream::Stream, ClusterError> {
    let s = match js.get_or_create_stream(config.clone()).await {
        Ok(s) => s,
        // Made meanwhile by another master (a session's two questions open at once): the
        // server refuses a second with the same subjects.
        Err(e) => js.get_stream(&config.name).await.map_err(|_| nats(e))?,
    };
    // The server says -1 where a config leaves a limit unset (0).
    let limits = |c: &stream::Config| {
        let unset = |n: i64| if n <= 0 { -1 } else { n };
        (c.max_age, unset(c.max_bytes), unset(c.max_messages))
    };
    if limits(&s.cached_info().config) != limits(&config) {
        js.update_stream(config).await.map_err(nats)?;
    }
    Ok(s)
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

/// Run `card.run`'s jobs consumer, made (or brought to this master's `ack_wait`) with the
/// jobs stream if that is not there. Only this run's consumer is touched.
pub async fn run_consumer(
    js: &jetstream::Context,
    card: &RunCard,
    ack_wait: Duration,
) -> Result<jetstream::consumer::Consumer<pull::Config>, ClusterError> {
    let stream = work_queue(
        js,
        JOBS,
        JOBS_SUBJECTS,
        MAX_AGE,
        stream::RetentionPolicy::WorkQueue,
    )
    .await?;
    let description = serde_json::to_string(card).map_err(nats)?;
    // Creating a durable that exists updates it (its ack wait, its description); its filter
    // is the run's subject either way.
    stream
        .create_consumer(pull::Config {
            durable_name: Some(jobs_consumer_name(&card.run)),
            description: Some(description),
            filter_subject: jobs_subject(&card.run),
            ack_wait,
            max_deliver: MAX_DELIVER,
            max_ack_pending: MAX_ACK_PENDING,
            max_waiting: MAX_WAITING,
            ..Default::default()
        })
        .await
        .map_err(nats)
}

/// The runs open on the server, as their jobs consumers describe them (those of another
/// program or not a run's are left out).
pub async fn open_runs(js: &jetstream::Context) -> Result<Vec<RunCard>, ClusterError> {
    let stream = match js.get_stream(JOBS).await {
        Ok(s) => s,
        Err(e)
            if matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(j)
                if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND) =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(nats(e)),
    };
    let mut consumers = stream.consumers();
    let mut cards = Vec::new();
    while let Some(info) = consumers.try_next().await.map_err(nats)? {
        if let Some(card) = info
            .config
            .description
            .as_deref()
            .and_then(|d| serde_json::from_str::<RunCard>(d).ok())
            .filter(|c| c.open && jobs_consumer_name(&c.run) == info.name)
        {
            cards.push(card);
        }
    }
    Ok(cards)
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
    // Kept while their master's consumer wants them: an answer published after its run
    // closed (its consumer deleted) is dropped at once; those of a master gone without
    // closing go after `MAX_AGE`.
    work_queue(
        js,
        ANSWERS,
        ANSWERS_SUBJECTS,
        MAX_AGE,
        stream::RetentionPolicy::Interest,
    )
    .await?
    .get_or_create_consumer(
        &name,
        pull::Config {
            durable_name: Some(name.clone()),
            filter_subject: answers_subject(run),
            ack_wait: ACK_WAIT,
            // The server's default (1,000) would hold back the answers of a wide run.
            max_ack_pending: MAX_ACK_PENDING,
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
