//! One question's jobs sent to the workers through NATS and their answers taken back: the
//! `search::jobs::Dispatch` a session (or `cluster solve`) searches with.

use std::collections::{BTreeMap, HashMap};
use std::future::IntoFuture;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind, consumer::pull};
use futures_util::{FutureExt, StreamExt};

use super::trace::{Header, Trace, TraceError};
use super::wire::{self, AnswerMsg, JobMsg, Tables};
use super::{
    ANNOUNCE_EVERY, ClusterError, PATIENCE, Reply, RunCard, answers_consumer, connect, nats,
    run_consumer,
};
use fanorona_rules::position::Color;
use fanorona_search::Init;
use fanorona_search::jobs::{
    Answer, Dispatch, DispatchError, Dispatcher, Job, JobsView, TablesUsed, WorkerView,
};

/// Where jobs go and how.
#[derive(Clone, Debug)]
pub struct Options {
    pub url: String,
    pub token: Option<String>,
    /// Jobs kept in flight.
    pub width: usize,
    /// How long a job may go without word from its worker before another gets it.
    pub ack_wait: Duration,
    /// Jobs published before the oldest must be confirmed stored, and answers fetched in
    /// one request, at most (`PUBLISH_WINDOW`, `ANSWERS_BATCH`; 1 and 1 wait a round trip
    /// a job and an answer).
    pub window: usize,
    pub batch: usize,
}

/// The daemon's dispatcher: each question of a session gets its run, named
/// `PREFIX-sID-SIDE` (the prefix tells daemons sharing a server apart).
pub struct NatsDispatcher {
    pub options: Options,
    pub prefix: String,
    /// How long a session searches here after a fault before trying the server again.
    pub retry: Duration,
    /// Where each run writes its trace (`RUN.trace`), if it keeps one.
    pub traces: Option<std::path::PathBuf>,
}

impl Dispatcher for NatsDispatcher {
    fn place(&self) -> String {
        self.options.url.clone()
    }

    fn retry(&self) -> Duration {
        self.retry
    }

    fn open(
        &self,
        session: u64,
        attacker: Color,
        init: Init,
        tables: Option<TablesUsed>,
    ) -> Result<Box<dyn Dispatch>, DispatchError> {
        let run = format!("{}-s{session}-{}", self.prefix, attacker.name());
        let tables = tables.map(Tables::from);
        let traces = self.traces.as_ref().map(|d| d.join(format!("{run}.trace")));
        NatsDispatch::open(&self.options, run, attacker, init, tables)
            .map(|d| Box::new(d.tracing_to(traces)) as Box<dyn Dispatch>)
            .map_err(lost)
    }
}

/// A name NATS takes as one token of a subject: letters, digits, `-` and `_`.
pub fn subject_token(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One run's jobs on the server.
pub struct NatsDispatch {
    runtime: tokio::runtime::Runtime,
    client: async_nats::Client,
    js: jetstream::Context,
    answers: jetstream::consumer::Consumer<pull::Config>,
    /// The answers as they come (pull requests kept ahead of them), once the first
    /// `receive` made it.
    flowing: Option<pull::Stream>,
    /// Answers come, not yet taken.
    ready: std::collections::VecDeque<jetstream::Message>,
    /// Jobs published, not yet confirmed stored.
    storing: Storing,
    /// This run's own consumer of the jobs stream.
    jobs: jetstream::consumer::Consumer<pull::Config>,
    /// What workers answer its announcements, and the server's word that a job went to
    /// workers `MAX_DELIVER` times unanswered.
    replies: async_nats::Subscriber,
    given_up: async_nats::Subscriber,
    /// Why each worker that refused its jobs did, by worker.
    refused: BTreeMap<String, String>,
    /// When a worker last said it takes its jobs (its opening, before any did).
    taker_heard: Instant,
    card: RunCard,
    last_announced: Instant,
    /// When its consumer was last asked how its jobs fare.
    watched: Instant,
    /// Whether its jobs and answers were withdrawn from the server.
    closed: bool,
    run: String,
    attacker: Color,
    init: Init,
    tables: Option<Tables>,
    width: usize,
    window: usize,
    batch: usize,
    /// Jobs in flight: their number, and the leaf each expands.
    ids: HashMap<u64, u32>,
    /// When each was sent, and what, to send it again if it is lost.
    sent: HashMap<u64, (Instant, Vec<u8>)>,
    /// A job unanswered this long is taken for lost (the server gave up on it after
    /// `MAX_DELIVER` deliveries, or it was purged) and sent again.
    lost_after: Duration,
    /// When `sent` was last looked through for lost jobs: once a second, not at every
    /// answer (a look costs a clock read a job in flight: 0.1 ms with 4,096 out).
    looked_for_lost: Instant,
    next_id: u64,
    view: JobsView,
    workers: BTreeMap<String, WorkerView>,
    log: fn(&str),
    /// Where answered jobs are traced, and the trace once its first job names the board.
    trace: Option<(std::path::PathBuf, Option<Trace>)>,
}

/// How long a run may go without a worker saying it takes its jobs (workers answer every
/// announcement, `ANNOUNCE_EVERY`) while jobs of it wait, before the run is given up to the
/// master's own search (and tried again after its retry).
pub const NO_TAKER: Duration = Duration::from_secs(20);
/// How often, once no worker takes the run, its consumer is asked whether jobs wait.
const WATCH_EVERY: Duration = Duration::from_secs(2);

fn say(line: &str) {
    tracing::warn!("{line}");
}

impl NatsDispatch {
    /// Connects, makes the streams if they are not there and the run's own jobs consumer,
    /// withdraws what an earlier master of this run left, and announces the run. (A purge
    /// filtered to one run's subject moves only consumers whose filter matches it, on
    /// Debian's nats-server 2.9 too: with one consumer a run, only this run's.)
    pub fn open(
        options: &Options,
        run: String,
        attacker: Color,
        init: Init,
        tables: Option<Tables>,
    ) -> Result<NatsDispatch, ClusterError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(nats)?;
        let card = RunCard {
            run: run.clone(),
            tables: tables.clone(),
            ack_wait_ms: options.ack_wait.as_millis() as u64,
            open: true,
        };
        let (client, js, answers, jobs, replies, given_up) = runtime.block_on(async {
            let client = connect(&options.url, options.token.as_deref()).await?;
            let js = jetstream::new(client.clone());
            let jobs = run_consumer(&js, &card, options.ack_wait).await?;
            super::dead_letters(&js).await?;
            let answers = answers_consumer(&js, &run).await?;
            // What an earlier master of this run left (killed before it closed) is of no use:
            // its answers name jobs this master never sent.
            withdraw_left(&js, &run).await?;
            let replies = client
                .subscribe(super::replies_subject(&run))
                .await
                .map_err(nats)?;
            let given_up = client
                .subscribe(format!(
                    "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{}",
                    super::JOBS,
                    super::jobs_consumer_name(&run)
                ))
                .await
                .map_err(nats)?;
            announce(&client, &card).await?;
            Ok::<_, ClusterError>((client, js, answers, jobs, replies, given_up))
        })?;
        // Numbers from the clock: an answer to a job of an earlier master of this run (still
        // running somewhere when it went) never names a job of this one.
        let next_id = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        Ok(NatsDispatch {
            runtime,
            client,
            js,
            answers,
            jobs,
            replies,
            given_up,
            flowing: None,
            ready: Default::default(),
            storing: Default::default(),
            refused: BTreeMap::new(),
            taker_heard: Instant::now(),
            card,
            last_announced: Instant::now(),
            watched: Instant::now(),
            closed: false,
            view: JobsView {
                goal: attacker.name().to_string(),
                place: options.url.clone(),
                connected: true,
                ..JobsView::default()
            },
            run,
            attacker,
            init,
            tables,
            width: options.width.max(1),
            window: options.window.max(1),
            batch: options.batch.max(1),
            ids: HashMap::new(),
            sent: HashMap::new(),
            lost_after: options.ack_wait * 20,
            looked_for_lost: Instant::now(),
            next_id,
            workers: BTreeMap::new(),
            log: say,
            trace: None,
        })
    }

    /// Says what it sets aside through `log` instead of the daemon's log.
    pub fn logging_to(mut self, log: fn(&str)) -> NatsDispatch {
        self.log = log;
        self
    }

    /// Writes each job answered to the trace at `path` (`cluster::trace`), if given.
    pub fn tracing_to(mut self, path: Option<std::path::PathBuf>) -> NatsDispatch {
        self.trace = path.map(|p| (p, None));
        self
    }

    /// Adds job `id`'s answer `a` to the trace, if one is kept. A trace that cannot be
    /// written is said once and given up: the search does not depend on it.
    fn traced(&mut self, id: u64, a: &AnswerMsg) {
        let Some((path, trace)) = &mut self.trace else {
            return;
        };
        let Some(job) = self
            .sent
            .get(&id)
            .and_then(|(_, body)| wire::decode_job(body).ok())
        else {
            return;
        };
        let written = (|| {
            if trace.is_none() {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| TraceError::Io {
                        path: dir.display().to_string(),
                        message: e.to_string(),
                    })?;
                }
                let header = Header::new(
                    job.position.board().to_string(),
                    self.init,
                    self.tables.clone(),
                );
                *trace = Some(Trace::append(path, &header)?);
            }
            let t = trace.as_mut().expect("opened above");
            t.record(self.attacker, &job.job(), &a.answer(), a.seconds)?;
            t.flush()
        })();
        if let Err(e) = written {
            (self.log)(&format!("run {}: no more trace: {e}", self.run));
            self.trace = None;
        }
    }

    /// Answers taken, by worker.
    pub fn by_worker(&self) -> impl Iterator<Item = (&str, u64)> {
        self.workers.values().map(|w| (w.name.as_str(), w.jobs))
    }
}

fn lost<E: std::fmt::Display>(e: E) -> DispatchError {
    DispatchError(e.to_string())
}

/// The answers that have come on `stream`, at most `up_to`: the first waited for at most a
/// second (none then), the others only if they are here already.
async fn answers_ready(
    stream: &mut pull::Stream,
    up_to: usize,
) -> Result<std::collections::VecDeque<jetstream::Message>, ClusterError> {
    let mut ready = std::collections::VecDeque::new();
    match tokio::time::timeout(Duration::from_secs(1), stream.next()).await {
        Err(_) => return Ok(ready),
        Ok(None) => return Err(ClusterError::Nats("the answers' stream ended".into())),
        Ok(Some(m)) => ready.push_back(m.map_err(nats)?),
    }
    while ready.len() < up_to
        && let Some(Some(m)) = stream.next().now_or_never()
    {
        ready.push_back(m.map_err(nats)?);
    }
    Ok(ready)
}

/// Says `card` on the runs subject, for the workers.
async fn announce(client: &async_nats::Client, card: &RunCard) -> Result<(), ClusterError> {
    let body = serde_json::to_vec(card).map_err(nats)?;
    client
        .publish(super::RUNS_SUBJECT, body.into())
        .await
        .map_err(nats)?;
    // Out before `block_on` returns: nothing drives the connection between two calls, and
    // a run's last announcement ("closed") comes just before its runtime goes.
    client.flush().await.map_err(nats)
}

/// Run `run`'s jobs and answers taken off the server.
async fn withdraw_left(js: &jetstream::Context, run: &str) -> Result<(), ClusterError> {
    for (stream, subject) in [
        (super::JOBS, super::jobs_subject(run)),
        (super::ANSWERS, super::answers_subject(run)),
    ] {
        js.get_stream(stream)
            .await
            .map_err(nats)?
            .purge()
            .filter(subject)
            .await
            .map_err(nats)?;
    }
    Ok(())
}

/// Jobs whose storing the server has confirmed, taken off `storing` without waiting (inside
/// the runtime: the acknowledgements' timers are its).
fn stored_so_far(storing: &mut Storing) -> Result<(), ClusterError> {
    while let Some(Some(stored)) = storing.next().now_or_never() {
        stored.map_err(nats)?;
    }
    Ok(())
}

/// Jobs published whose storing the server has not yet confirmed.
type Storing = futures_util::stream::FuturesUnordered<
    <async_nats::jetstream::context::PublishAckFuture as std::future::IntoFuture>::IntoFuture,
>;

/// Answers a pull request asks for at most, unless told otherwise.
pub const ANSWERS_BATCH: usize = 256;

/// Jobs published at most before the master waits for the server to store the oldest: the
/// window that lets a master send many jobs a round trip (unless told otherwise).
pub const PUBLISH_WINDOW: usize = 256;

/// Runs `work` on `runtime`, given up after `PATIENCE`.
fn patiently<T>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = Result<T, ClusterError>>,
) -> Result<T, DispatchError> {
    runtime
        .block_on(async { tokio::time::timeout(PATIENCE, work).await })
        .map_err(|_| {
            DispatchError(format!(
                "no answer from the server in {} s",
                PATIENCE.as_secs()
            ))
        })?
        .map_err(lost)
}

impl NatsDispatch {
    /// An error unless the client is connected (it reconnects by itself; meanwhile the
    /// search goes on without it).
    fn reachable(&self) -> Result<(), DispatchError> {
        match self.client.connection_state() {
            async_nats::connection::State::Connected => Ok(()),
            state => Err(DispatchError(format!(
                "the server does not answer ({state})"
            ))),
        }
    }

    /// Publishes a job (`body`) without waiting for the server to store it: up to
    /// `PUBLISH_WINDOW` wait at once, and those stored are counted off here and at each
    /// `receive`. One the server could not store fails the run (the session searches here
    /// and tries again after its retry).
    fn publish(&mut self, body: Vec<u8>) -> Result<(), DispatchError> {
        let subject = super::jobs_subject(&self.run);
        let (js, storing, window) = (&self.js, &mut self.storing, self.window);
        patiently(&self.runtime, async {
            while storing.len() >= window {
                if let Some(stored) = storing.next().await {
                    stored.map_err(nats)?;
                }
            }
            let ack = js.publish(subject, body.into()).await.map_err(nats)?;
            storing.push(ack.into_future());
            stored_so_far(storing)
        })
    }

    /// The jobs the server stored since last asked, counted off; an error if it refused one.
    fn count_stored(&mut self) -> Result<(), DispatchError> {
        let storing = &mut self.storing;
        if storing.is_empty() {
            return Ok(());
        }
        patiently(&self.runtime, async { stored_so_far(storing) })
    }

    /// What the server and the workers say of this run, heard without waiting: a refusal is
    /// kept, a job given up after `MAX_DELIVER` deliveries, or jobs waiting while no worker
    /// said it takes them for `NO_TAKER`, fail the run (the session searches here and says
    /// why); the run is announced again every `ANNOUNCE_EVERY`.
    fn watch(&mut self) -> Result<(), DispatchError> {
        while let Some(Some(m)) = self.replies.next().now_or_never() {
            match serde_json::from_slice::<Reply>(&m.payload) {
                Ok(Reply { worker, why: None }) => {
                    self.taker_heard = Instant::now();
                    self.refused.remove(&worker);
                }
                Ok(Reply {
                    worker,
                    why: Some(why),
                }) => {
                    self.refused.insert(worker, why);
                }
                Err(_) => {}
            }
        }
        if let Some(Some(_)) = self.given_up.next().now_or_never() {
            return Err(DispatchError(format!(
                "a job went to workers {} times and was never answered (each died or went \
                 quiet in it)",
                super::MAX_DELIVER
            )));
        }
        if self.last_announced.elapsed() >= ANNOUNCE_EVERY {
            self.last_announced = Instant::now();
            let (client, card) = (&self.client, &self.card);
            patiently(&self.runtime, announce(client, card))?;
        }
        // Workers busy with other runs still answer every announcement: only a run no
        // worker takes goes quiet.
        if self.taker_heard.elapsed() < NO_TAKER || self.watched.elapsed() < WATCH_EVERY {
            return Ok(());
        }
        self.watched = Instant::now();
        let jobs = &mut self.jobs;
        let info = patiently(&self.runtime, async { jobs.info().await.map_err(nats) })?;
        let untaken = info.num_pending + info.num_ack_pending as u64;
        if untaken == 0 {
            return Ok(());
        }
        Err(DispatchError(self.untaken(untaken)))
    }

    /// Why its `untaken` jobs were not taken, in words for the session's status.
    fn untaken(&self, untaken: u64) -> String {
        let head = format!(
            "no worker has taken its jobs for {} s ({untaken} waiting)",
            NO_TAKER.as_secs()
        );
        if self.refused.is_empty() {
            return format!("{head}: no connected worker answered its announcements");
        }
        let why: Vec<String> = self
            .refused
            .iter()
            .take(3)
            .map(|(w, why)| format!("{w} cannot take {why}"))
            .collect();
        let more = self.refused.len().saturating_sub(3);
        format!(
            "{head}: {}{}",
            why.join("; "),
            if more > 0 {
                format!("; and {more} workers more")
            } else {
                String::new()
            }
        )
    }

    /// Its jobs and answers taken off the server, its consumers deleted, and the run
    /// announced closed (workers then skip what they hold of it). Done once.
    fn withdraw(&mut self) -> Result<(), ClusterError> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        let (client, js, run) = (&self.client, &self.js, &self.run);
        let card = RunCard {
            open: false,
            ..self.card.clone()
        };
        let work = async {
            // Said first: a worker that finishes a job of the run from now on drops its
            // answer instead of publishing it after the purge, where nothing would read it.
            announce(client, &card).await?;
            withdraw_left(js, run).await?;
            for (stream, consumer) in [
                (super::JOBS, super::jobs_consumer_name(run)),
                (super::ANSWERS, format!("master-{run}")),
            ] {
                js.get_stream(stream)
                    .await
                    .map_err(nats)?
                    .delete_consumer(&consumer)
                    .await
                    .map_err(nats)?;
            }
            Ok(())
        };
        self.runtime
            .block_on(async { tokio::time::timeout(WITHDRAW_PATIENCE, work).await })
            .map_err(|_| {
                ClusterError::Nats(format!(
                    "no answer from the server in {} s",
                    WITHDRAW_PATIENCE.as_secs()
                ))
            })?
    }

    /// Sends again the jobs unanswered for `lost_after`.
    fn resend_lost(&mut self) -> Result<(), DispatchError> {
        if self.looked_for_lost.elapsed() < Duration::from_secs(1) {
            return Ok(());
        }
        self.looked_for_lost = Instant::now();
        let late: Vec<u64> = self
            .sent
            .iter()
            .filter(|(_, (at, _))| at.elapsed() >= self.lost_after)
            .map(|(&id, _)| id)
            .collect();
        for id in late {
            let body = self.sent[&id].1.clone();
            self.publish(body)?;
            self.sent.get_mut(&id).expect("listed above").0 = Instant::now();
            self.view.resent += 1;
            (self.log)(&format!(
                "run {}: job {id} unanswered for {} s, sent again",
                self.run,
                self.lost_after.as_secs()
            ));
        }
        Ok(())
    }
}

impl Dispatch for NatsDispatch {
    fn width(&self) -> usize {
        self.width
    }

    fn send(&mut self, job: &Job) -> Result<(), DispatchError> {
        self.next_id += 1;
        let msg = JobMsg::new(
            &self.run,
            self.next_id,
            job,
            self.attacker,
            self.init,
            self.tables.clone(),
        );
        let body = wire::encode_job(&msg);
        self.reachable()?;
        self.publish(body.clone())?;
        tracing::debug!(
            "run {}: job {} sent (leaf {})",
            self.run,
            self.next_id,
            job.leaf
        );
        self.ids.insert(self.next_id, job.leaf);
        self.sent.insert(self.next_id, (Instant::now(), body));
        self.view.sent += 1;
        Ok(())
    }

    fn receive(&mut self) -> Result<Option<Answer>, DispatchError> {
        self.reachable()?;
        self.watch()?;
        self.resend_lost()?;
        self.count_stored()?;
        if self.ready.is_empty() {
            let (answers, flowing, batch) = (&self.answers, &mut self.flowing, self.batch);
            self.ready = patiently(&self.runtime, async {
                // One subscription of pull requests kept ahead of the answers (`batch` a
                // request), made at the first receive, inside the runtime it runs on.
                if flowing.is_none() {
                    *flowing = Some(
                        answers
                            .stream()
                            .max_messages_per_batch(batch)
                            .heartbeat(Duration::from_secs(5))
                            .messages()
                            .await
                            .map_err(nats)?,
                    );
                }
                let stream = flowing.as_mut().expect("made above");
                answers_ready(stream, batch).await
            })?;
        }
        let Some(message) = self.ready.pop_front() else {
            return Ok(None);
        };
        let taken = match wire::decode_answer(&message.payload) {
            Err(e) => {
                self.view.garbled += 1;
                let why = e.to_string();
                let subject = format!("fanorona.dead.answers.{}", self.run);
                let fate = self.runtime.block_on(super::set_aside(
                    &self.js,
                    subject,
                    message.payload.to_vec(),
                    &why,
                ));
                (self.log)(&format!(
                    "run {}: an answer that does not decode ({why}), {fate}",
                    self.run
                ));
                self.runtime
                    .block_on(message.ack_with(AckKind::Term))
                    .map_err(lost)?;
                return Ok(None);
            }
            Ok(a) => {
                tracing::debug!(
                    "run {}: answer to job {} of run {} (leaf {}) from {}",
                    self.run,
                    a.id,
                    a.run,
                    a.leaf,
                    a.worker
                );
                let ours = a.run == self.run
                    && a.attacker == self.attacker
                    && self.ids.get(&a.id) == Some(&a.leaf);
                if ours {
                    self.traced(a.id, &a);
                    self.ids.remove(&a.id);
                    self.sent.remove(&a.id);
                    self.view.answered += 1;
                    self.view.redelivered += u64::from(a.delivered > 1);
                    let w = self.workers.entry(a.worker.clone()).or_default();
                    w.name.clone_from(&a.worker);
                    w.host.clone_from(&a.host);
                    w.threads = a.threads;
                    w.jobs += 1;
                    w.nodes += a.work.nodes;
                    w.seconds += a.seconds;
                    w.last_heard = fanorona_session::log::unix_now() as u64;
                    Some(a.answer())
                } else {
                    self.view.stale += 1;
                    None
                }
            }
        };
        self.runtime.block_on(message.ack()).map_err(lost)?;
        Ok(taken)
    }

    fn stale(&mut self) {
        self.view.stale += 1;
        self.view.answered = self.view.answered.saturating_sub(1);
    }

    fn view(&self) -> JobsView {
        JobsView {
            in_flight: self.ids.len() as u64,
            workers: self.workers.values().cloned().collect(),
            ..self.view.clone()
        }
    }

    fn close(&mut self) {
        // Its jobs still queued are never searched; those a worker holds are skipped.
        if let Err(e) = self.withdraw() {
            (self.log)(&format!(
                "run {}: its jobs could not be withdrawn: {e}",
                self.run
            ));
        }
        self.ids.clear();
        self.sent.clear();
    }
}

/// The longest a run's withdrawal may take (on a server gone, its jobs expire by themselves
/// after `MAX_AGE`).
const WITHDRAW_PATIENCE: Duration = Duration::from_secs(3);

impl Drop for NatsDispatch {
    /// A run dropped without `close` (its session faulted, stopped or failed) is withdrawn
    /// too, if the server is there to hear it.
    fn drop(&mut self) {
        if !self.closed
            && self.client.connection_state() == async_nats::connection::State::Connected
        {
            let _ = self.withdraw();
        }
    }
}
