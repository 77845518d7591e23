//! `fanorona worker`: hears the runs masters announce, binds to those whose tables it holds
//! (and tells the others' masters why not, without touching their jobs), takes their jobs
//! one a thread (asked for by one feeder, a run's idle threads' jobs in one request), runs
//! each (bounded df-pn, its table kept warm from job to job), says "in progress" while it
//! works, publishes the answer, then acknowledges the job. On SIGTERM or SIGINT it asks for
//! no new job, gives back those not yet started, finishes those under way, and exits.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind};
use futures_util::StreamExt;
use tokio::sync::{Notify, mpsc};

use super::wire::{self, AnswerMsg, JobMsg, Signature, Tables};
use super::{ClusterError, Reply, RunCard, connect, nats};
use fanorona_rules::geometry::Board;
use fanorona_search::dfpn::DfPn;
use fanorona_search::jobs::run_job;
use fanorona_search::pn::second_level_entries;
use fanorona_search::{Goal, Init, LeafEval, Limits};
use fanorona_tables::Database;

#[derive(Clone)]
pub struct Options {
    pub url: String,
    pub token: Option<String>,
    /// Where the worker's tables are (the same as the master's).
    pub db: Option<PathBuf>,
    pub threads: usize,
    /// How this worker names itself in answers and logs.
    pub name: String,
    /// Bytes of each thread's df-pn table.
    pub table_bytes: u64,
    /// Answers every job at once without searching it: the pipeline's load test
    /// (`cluster bench`), where the server and the master are all that is measured.
    pub echo: bool,
    /// Jobs asked for in one request at most (`FETCH_ALL`: as many as threads are idle; 1:
    /// a request a thread, as workers did before, for the load test's comparison).
    pub fetch: usize,
}

/// `Options::fetch` of a worker: its idle threads' jobs in one request.
pub const FETCH_ALL: usize = usize::MAX;

impl Options {
    /// The tables' directory as messages show it ("DIR" when none was given).
    fn tables_dir(&self) -> String {
        // Absolute: the worker's log is read on another machine or from another directory.
        self.db.as_ref().map_or("DIR".to_string(), |d| {
            std::path::absolute(d)
                .unwrap_or_else(|_| d.clone())
                .display()
                .to_string()
        })
    }
}

/// Bytes of each worker thread's df-pn table unless told otherwise (the simulator's runs
/// use the same): as many entries as the daemon's own second-level table
/// (`pn::DFPN_SECOND_LEVEL_TABLE`), so that a job searches as the daemon would. With half as
/// many, one worker had not decided the 5x9 start's "White wins?" after 103,000 jobs; with
/// these it takes 7,312, as many as the in-process search's iterations.
pub const TABLE_BYTES: u64 = 512 << 20;

/// Tables a thread keeps warm: one for each question of a session. A job of a third kind
/// (another session's board or first numbers) takes the place of the least recently used,
/// so a worker's memory stays threads x `WARM_KINDS` x its table's bytes however many
/// sessions feed it.
pub const WARM_KINDS: usize = 2;

/// The memory a worker of `threads` threads takes for its tables, at most.
pub fn memory_needed(threads: usize, table_bytes: u64) -> u64 {
    (threads.max(1) * WARM_KINDS) as u64 * table_bytes
}

/// Refuses a worker whose tables would not fit in `available` bytes (MemAvailable), naming
/// the threads that would; a worker that swapped would slow its whole machine to a crawl.
pub fn check_memory(threads: usize, table_bytes: u64, available: u64) -> Result<(), ClusterError> {
    let need = memory_needed(threads, table_bytes);
    if need <= available {
        return Ok(());
    }
    let per_thread = memory_needed(1, table_bytes);
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let fits = available / per_thread;
    Err(ClusterError::Refused(format!(
        "a worker of {threads} threads needs {:.1} GiB for its search tables ({WARM_KINDS} x {} MiB a thread), and this machine has {:.1} GiB available: {}",
        gib(need),
        table_bytes >> 20,
        gib(available),
        if fits == 0 {
            "free some memory first".to_string()
        } else {
            format!("run with --threads {fits} or fewer")
        }
    )))
}

/// How long a request for jobs waits on the server, in all: spread over a worker's runs
/// when there are several.
const POLL: Duration = Duration::from_secs(1);
/// A run not announced for this long is taken for gone (its master killed) and no longer
/// asked for jobs; it is taken again when it is announced again.
const FORGET_AFTER: Duration = Duration::from_secs(60);

/// How often a worker says what it did (when it did anything, or has runs).
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// What the worker's last progress line counted from.
struct Said {
    at: Instant,
    answered: u64,
    busy: u64,
}

impl Said {
    fn now(shared: &Shared<'_>) -> Said {
        Said {
            at: Instant::now(),
            answered: shared.done.load(Ordering::Relaxed),
            busy: shared.busy.load(Ordering::Relaxed),
        }
    }

    /// Says what was done since `self`, if anything was or runs are taken; the new mark.
    fn next(self, shared: &Shared<'_>) -> Said {
        let now = Said::now(shared);
        let runs: Vec<String> = shared
            .runs
            .lock()
            .expect("runs")
            .taken
            .keys()
            .cloned()
            .collect();
        let answered = now.answered - self.answered;
        if answered > 0 || !runs.is_empty() {
            let window = self.at.elapsed().as_secs_f64();
            let threads = shared.options.threads.max(1) as f64;
            let busy = (now.busy - self.busy) as f64 / 1e6;
            (shared.log)(&format!(
                "worker {}: {answered} jobs answered in the last {window:.0} s ({} in all), threads busy {busy:.1} s of {:.1} s ({:.0}%), runs taken: {}",
                shared.options.name,
                now.answered,
                window * threads,
                100.0 * busy / (window * threads),
                if runs.is_empty() {
                    "none".to_string()
                } else {
                    runs.join(", ")
                }
            ));
        }
        now
    }
}

/// A run this worker takes jobs of.
#[derive(Clone)]
struct Taken {
    consumer: JobsConsumer,
    /// How often a job of it under way is said to be in progress.
    progress_every: Duration,
    heard: Instant,
}

/// The runs this worker knows of.
#[derive(Default)]
struct Runs {
    taken: BTreeMap<String, Taken>,
    /// Runs it cannot take, and why (said once a run and reason).
    refused: BTreeMap<String, String>,
    /// Runs their masters closed: what it holds of them is skipped.
    closed: BTreeSet<String>,
}

/// Tables opened, by board: opened once, kept for the worker's life.
type Opened = Mutex<HashMap<Board, Option<&'static Database>>>;

/// What makes two jobs' searches share a table: question, first numbers, tables.
type Kind = (fanorona_rules::position::Color, Init, Option<Board>);

/// A thread's df-pn tables, one per kind of job, most recently used last, at most
/// `WARM_KINDS`.
#[derive(Default)]
struct Warm(Vec<(Kind, Box<DfPn<'static>>)>);

impl Warm {
    fn take(&mut self, kind: &Kind) -> Option<Box<DfPn<'static>>> {
        let i = self.0.iter().position(|(k, _)| k == kind)?;
        Some(self.0.remove(i).1)
    }

    /// Keeps `dfpn` as the most recently used; the least recently used goes if there are too
    /// many.
    fn keep(&mut self, kind: Kind, dfpn: Box<DfPn<'static>>) {
        if self.0.len() >= WARM_KINDS {
            self.0.remove(0);
        }
        self.0.push((kind, dfpn));
    }
}

/// Runs until stopped; returns the jobs answered.
pub fn run(options: Options, log: &(dyn Fn(&str) + Sync)) -> Result<u64, ClusterError> {
    if let Some(available) = fanorona_rules::machine::meminfo("MemAvailable") {
        check_memory(options.threads, options.table_bytes, available)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(nats)?;
    runtime.block_on(serve(options, log))
}

/// `connections` echo workers of `options.threads` threads each (`Options::echo`), each on a
/// connection of its own, in this process, until stopped: the load test's workers. Returns the jobs they
/// answered.
pub fn run_echo(
    options: Options,
    connections: usize,
    log: &(dyn Fn(&str) + Sync),
) -> Result<u64, ClusterError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(nats)?;
    runtime.block_on(async {
        let each = (0..connections.max(1)).map(|i| {
            serve(
                Options {
                    name: format!("{}-{i}", options.name),
                    threads: options.threads.max(1),
                    echo: true,
                    ..options.clone()
                },
                log,
            )
        });
        let mut answered = 0;
        for r in futures_util::future::join_all(each).await {
            answered += r?;
        }
        Ok(answered)
    })
}

async fn serve(options: Options, log: &(dyn Fn(&str) + Sync)) -> Result<u64, ClusterError> {
    let client = connect(&options.url, options.token.as_deref()).await?;
    let js = jetstream::new(client.clone());
    // Told to stop (SIGTERM, Ctrl-C) even while waiting for a master.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("a SIGTERM handler");
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            stop.store(true, Ordering::Relaxed);
        });
    }
    // Subscribed before the runs open now are listed: a run opened between the two is heard.
    let mut announced = client.subscribe(super::RUNS_SUBJECT).await.map_err(nats)?;
    log(&format!(
        "worker {}: {} threads, taking jobs from {}",
        options.name, options.threads, options.url
    ));
    if !options.db.as_deref().is_some_and(holds_tables) {
        log(&format!(
            "worker {}: no endgame tables under {}: it takes only jobs that need none (runs over tables are refused with the command that builds them)",
            options.name,
            options.tables_dir()
        ));
    }
    let (done, searched, skipped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let busy = AtomicU64::new(0);
    let opened: Opened = Mutex::new(HashMap::new());
    let runs = Mutex::new(Runs::default());
    let shared = Shared {
        options: &options,
        client: &client,
        js: &js,
        stop: &stop,
        done: &done,
        searched: &searched,
        skipped: &skipped,
        busy: &busy,
        opened: &opened,
        runs: &runs,
        log,
        signature: Signature {
            name: options.name.clone(),
            host: super::host_name(),
            threads: options.threads,
        },
    };
    for card in super::open_runs(&js).await? {
        shared.consider(card).await;
    }
    if runs.lock().expect("runs").taken.is_empty() {
        log(&match super::older_jobs(&js).await.into_iter().next() {
            Some((stream, wire, n)) => format!(
                "no run of wire version {} open yet, but {n} jobs of wire version {wire} wait on \
                 {stream}: their master runs another version of fanorona; waiting for a \
                 master of this one",
                wire::VERSION
            ),
            None => "no run this worker can take is open yet: waiting for a master to announce one"
                .into(),
        });
    }
    let listen = async {
        let mut said = Said::now(&shared);
        while !stop.load(Ordering::Relaxed) {
            if said.at.elapsed() >= PROGRESS_EVERY {
                said = said.next(&shared);
            }
            tokio::select! {
                m = announced.next() => match m.map(|m| serde_json::from_slice::<RunCard>(&m.payload)) {
                    Some(Ok(card)) => shared.consider(card).await,
                    Some(Err(_)) => {}
                    None => tokio::time::sleep(Duration::from_secs(1)).await,
                },
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
            runs.lock()
                .expect("runs")
                .taken
                .retain(|_, t| t.heard.elapsed() < FORGET_AFTER);
        }
    };
    let threads = options.threads.max(1);
    let (hand, jobs) = mpsc::channel(threads);
    let jobs = tokio::sync::Mutex::new(jobs);
    let (waiting, wake) = (AtomicUsize::new(0), Notify::new());
    let slots =
        futures_util::future::join_all((0..threads).map(|_| shared.slot(&jobs, &waiting, &wake)));
    futures_util::future::join3(listen, shared.feed(hand, &waiting, &wake), slots).await;
    // Jobs fed but not taken go back to the server at once, for another worker; what was
    // queued for the server (those, the last answers' acknowledgements) is sent before the
    // runtime goes.
    while let Ok(handed) = jobs.lock().await.try_recv() {
        let _ = handed.message.ack_with(AckKind::Nak(None)).await;
    }
    let _ = client.flush().await;
    let n = done.load(Ordering::Relaxed);
    log(&format!(
        "worker {}: stopped after {n} jobs answered ({} searched; {} of closed runs skipped unsearched)",
        options.name,
        searched.load(Ordering::Relaxed),
        skipped.load(Ordering::Relaxed)
    ));
    Ok(n)
}

type JobsConsumer = jetstream::consumer::Consumer<jetstream::consumer::pull::Config>;

/// What the worker's threads share.
struct Shared<'a> {
    options: &'a Options,
    client: &'a async_nats::Client,
    js: &'a jetstream::Context,
    stop: &'a AtomicBool,
    done: &'a AtomicU64,
    /// Jobs searched (answered, or found closed once searched), and jobs skipped unsearched
    /// because their run was closed.
    searched: &'a AtomicU64,
    skipped: &'a AtomicU64,
    /// Microseconds its threads spent searching, all told.
    busy: &'a AtomicU64,
    opened: &'a Opened,
    runs: &'a Mutex<Runs>,
    log: &'a (dyn Fn(&str) + Sync),
    signature: Signature,
}

/// A job the feeder handed to a thread, with how often it says "in progress".
struct Handed {
    message: jetstream::Message,
    progress_every: Duration,
}

/// What a pull request brings: a job, then its end (the jobs asked for that did not come,
/// whether it ended well after its wait, and the error that ended it).
enum Pulled {
    Job(Duration, Box<jetstream::Message>),
    Done {
        run: String,
        undelivered: usize,
        overdue: bool,
        error: Option<String>,
    },
}

/// Run `run`'s pull request of `want` jobs (`batch`, expiring after `wait`) as a stream of
/// what it brings, its end included.
fn pulled(
    run: String,
    progress_every: Duration,
    batch: jetstream::consumer::pull::Batch,
    want: usize,
    wait: Duration,
) -> std::pin::Pin<Box<dyn futures_util::Stream<Item = Pulled> + Send>> {
    let asked = Instant::now();
    Box::pin(futures_util::stream::unfold(
        Some((batch, 0usize)),
        move |state| {
            let run = run.clone();
            async move {
                let (mut batch, got) = state?;
                let done = |error| Pulled::Done {
                    run: run.clone(),
                    undelivered: want - got,
                    overdue: asked.elapsed() > wait + Duration::from_secs(2),
                    error,
                };
                match batch.next().await {
                    Some(Ok(message)) => Some((
                        Pulled::Job(progress_every, Box::new(message)),
                        Some((batch, got + 1)),
                    )),
                    Some(Err(e)) => Some((done(Some(e.to_string())), None)),
                    None => Some((done(None), None)),
                }
            }
        },
    ))
}

/// One thread's tables.
#[derive(Default)]
struct Slot {
    warm: Warm,
}

impl Shared<'_> {
    /// A run its master announced (or its consumer describes): taken if this worker holds
    /// its tables, else its master told why; forgotten once closed.
    async fn consider(&self, card: RunCard) {
        let name = &self.options.name;
        if !card.open {
            let mut runs = self.runs.lock().expect("runs");
            runs.taken.remove(&card.run);
            runs.refused.remove(&card.run);
            runs.closed.insert(card.run);
            return;
        }
        // "In progress" three times in the run's ack wait (a master started again may have
        // another).
        let progress_every = Duration::from_millis(card.ack_wait_ms.max(3)) / 3;
        let known = {
            let mut runs = self.runs.lock().expect("runs");
            runs.closed.remove(&card.run);
            runs.taken.get_mut(&card.run).map(|t| {
                t.heard = Instant::now();
                t.progress_every = progress_every;
            })
        };
        let why = match known {
            Some(()) => None,
            None => match tables_for(self.options, card.tables.as_ref(), self.opened) {
                Ok(_) => {
                    // Not there (closed meanwhile, or the server busy): the next
                    // announcement tries again.
                    let Ok(consumer) = self.jobs_consumer(&card.run).await else {
                        return;
                    };
                    let mut runs = self.runs.lock().expect("runs");
                    runs.refused.remove(&card.run);
                    runs.taken.insert(
                        card.run.clone(),
                        Taken {
                            consumer,
                            progress_every,
                            heard: Instant::now(),
                        },
                    );
                    tracing::info!("worker {name}: taking the jobs of run {}", card.run);
                    None
                }
                Err(why) => {
                    let new = {
                        let mut runs = self.runs.lock().expect("runs");
                        runs.refused.insert(card.run.clone(), why.clone()).as_ref() != Some(&why)
                    };
                    if new {
                        (self.log)(&format!(
                            "worker {name}: cannot take {why} (run {})",
                            card.run
                        ));
                    }
                    Some(why)
                }
            },
        };
        // Said at every announcement: its master knows who takes its jobs (a run no worker
        // takes is searched by its master), and why the others do not.
        let reply = Reply {
            worker: name.clone(),
            why,
        };
        if let Ok(body) = serde_json::to_vec(&reply) {
            let _ = self
                .client
                .publish(super::replies_subject(&card.run), body.into())
                .await;
        }
    }

    /// Run `run`'s jobs consumer, if the server has it.
    async fn jobs_consumer(&self, run: &str) -> Result<JobsConsumer, ClusterError> {
        self.js
            .get_stream(super::JOBS)
            .await
            .map_err(nats)?
            .get_consumer::<jetstream::consumer::pull::Config>(&super::jobs_consumer_name(run))
            .await
            .map_err(nats)
    }

    /// The runs taken, each with its consumer and how often its jobs say "in progress".
    fn taken(&self) -> Vec<(String, JobsConsumer, Duration)> {
        let runs = self.runs.lock().expect("runs");
        runs.taken
            .iter()
            .map(|(run, t)| (run.clone(), t.consumer.clone(), t.progress_every))
            .collect()
    }

    /// Whether run `run` was closed by its master.
    fn closed(&self, run: &str) -> bool {
        self.runs.lock().expect("runs").closed.contains(run)
    }

    /// The process's feeder: asks the server for as many jobs as threads wait for, in one
    /// request a run (a batch: one request for a worker of 64 idle threads, not 64; a run's
    /// next request goes once its last is filled or expired, so requests never split into
    /// one a thread), and hands each job to a waiting thread. Trouble with the server (a
    /// restart, the network) is said once and waited out without holding up the jobs already
    /// coming: the client reconnects, and a job whose answer could not be sent is handed to
    /// a worker again by the server. When stopped, jobs still coming go back at once.
    async fn feed(&self, hand: mpsc::Sender<Handed>, waiting: &AtomicUsize, wake: &Notify) {
        let mut pulls = futures_util::stream::SelectAll::new();
        // Jobs asked for in requests still out: never more than the threads waiting.
        let mut asked = 0usize;
        // Requests out, by run: one at most, unless a request may carry only some of the
        // waiting threads' jobs (`Options::fetch`, the load test's comparison).
        let mut open: HashMap<String, usize> = HashMap::new();
        let most_open = if self.options.fetch == FETCH_ALL {
            1
        } else {
            usize::MAX
        };
        let mut turn = 0usize;
        let mut trouble: Option<String> = None;
        let mut quiet_until = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            let want = waiting.load(Ordering::Acquire).saturating_sub(asked);
            let runs = self.taken();
            let askable: Vec<_> = runs
                .iter()
                .filter(|(run, ..)| open.get(run).copied().unwrap_or(0) < most_open)
                .collect();
            if want > 0 && !askable.is_empty() && Instant::now() >= quiet_until {
                let (run, consumer, progress_every) = askable[turn % askable.len()];
                turn = turn.wrapping_add(1);
                // Each run its share of the waiting threads, so a run gone quiet does not
                // hold them all for a request's wait.
                let want = want.div_ceil(runs.len()).min(self.options.fetch.max(1));
                let wait = (POLL / runs.len() as u32).max(Duration::from_millis(100));
                match consumer
                    .batch()
                    .max_messages(want)
                    .expires(wait)
                    .messages()
                    .await
                {
                    Ok(batch) => {
                        asked += want;
                        *open.entry(run.clone()).or_default() += 1;
                        pulls.push(pulled(run.clone(), *progress_every, batch, want, wait));
                        continue;
                    }
                    Err(e) => {
                        quiet_until = self.troubled(&mut trouble, e.to_string());
                    }
                }
            }
            let event = tokio::select! {
                Some(event) = pulls.next(), if !pulls.is_empty() => event,
                _ = wake.notified() => continue,
                _ = tokio::time::sleep(Duration::from_millis(250)) => continue,
            };
            match event {
                Pulled::Job(progress_every, message) => {
                    asked -= 1;
                    waiting.fetch_sub(1, Ordering::AcqRel);
                    if trouble.take().is_some() {
                        (self.log)(&format!(
                            "worker {}: the server answers again",
                            self.options.name
                        ));
                    }
                    let handed = Handed {
                        message: *message,
                        progress_every,
                    };
                    if hand.send(handed).await.is_err() {
                        return;
                    }
                }
                Pulled::Done {
                    run,
                    undelivered,
                    overdue,
                    error,
                } => {
                    asked -= undelivered;
                    if let Some(n) = open.get_mut(&run) {
                        *n -= 1;
                        if *n == 0 {
                            open.remove(&run);
                        }
                    }
                    match error {
                        // Its master closed it (the announcement may come after): not trouble.
                        Some(e) if e.contains("Consumer Deleted") => {
                            self.runs.lock().expect("runs").taken.remove(&run);
                        }
                        Some(e) => {
                            quiet_until = self.troubled(&mut trouble, e);
                        }
                        // A pull on a consumer that is gone gets no word from the server at
                        // all: a pull that took well over its wait is checked, and its run let
                        // go if so.
                        None if overdue
                            && self.jobs_consumer(&run).await.is_err_and(|e| {
                                e.to_string().to_lowercase().contains("consumer not found")
                            }) =>
                        {
                            self.runs.lock().expect("runs").taken.remove(&run);
                        }
                        None => {}
                    }
                }
            }
        }
        // Stopped: what the requests still out bring goes back to the server at once (each
        // ends within its wait).
        while let Ok(Some(event)) =
            tokio::time::timeout(POLL + Duration::from_secs(1), pulls.next()).await
        {
            if let Pulled::Job(_, message) = event {
                let _ = message.ack_with(AckKind::Nak(None)).await;
            }
        }
    }

    /// Says a trouble with the server once (until it answers again); no new request goes
    /// until the instant returned, a second on.
    fn troubled(&self, trouble: &mut Option<String>, e: String) -> Instant {
        if trouble.as_deref() != Some(e.as_str()) {
            (self.log)(&format!("worker {}: {e}; trying again", self.options.name));
            *trouble = Some(e);
        }
        Instant::now() + Duration::from_secs(1)
    }

    /// One thread's loop: waits for a job from the feeder, runs it and answers it, until
    /// stopped.
    async fn slot(
        &self,
        jobs: &tokio::sync::Mutex<mpsc::Receiver<Handed>>,
        waiting: &AtomicUsize,
        wake: &Notify,
    ) {
        let mut slot = Slot::default();
        let mut trouble: Option<String> = None;
        while !self.stop.load(Ordering::Relaxed) {
            waiting.fetch_add(1, Ordering::AcqRel);
            wake.notify_one();
            let handed = loop {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                let next = {
                    let mut jobs = jobs.lock().await;
                    tokio::time::timeout(Duration::from_millis(250), jobs.recv()).await
                };
                match next {
                    Ok(Some(handed)) => break handed,
                    Ok(None) => return,
                    Err(_) => {}
                }
            };
            match self.take(handed, &mut slot).await {
                Ok(()) => trouble = None,
                Err(e) => {
                    let e = e.to_string();
                    if trouble.as_deref() != Some(e.as_str()) {
                        (self.log)(&format!("worker {}: {e}", self.options.name));
                        trouble = Some(e);
                    }
                }
            }
        }
    }

    /// Runs the job handed and answers it.
    async fn take(&self, handed: Handed, slot: &mut Slot) -> Result<(), ClusterError> {
        let options = self.options;
        let Handed {
            message,
            progress_every,
        } = handed;
        let job: JobMsg = match wire::decode_job(&message.payload) {
            Ok(j) => j,
            Err(e) => {
                // Never to be run by anyone: set aside on the dead-letter stream, terminated,
                // said once.
                let why = e.to_string();
                let fate = super::set_aside(
                    self.js,
                    "fanorona.dead.jobs".into(),
                    message.payload.to_vec(),
                    &why,
                )
                .await;
                (self.log)(&format!(
                    "worker {}: a job that does not decode ({why}), {fate}",
                    options.name
                ));
                message.ack_with(AckKind::Term).await.map_err(nats)?;
                return Ok(());
            }
        };
        if self.closed(&job.run) {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                "worker {}: job {} of closed run {} skipped",
                options.name,
                job.id,
                job.run
            );
            message.ack_with(AckKind::Term).await.map_err(nats)?;
            return Ok(());
        }
        let db = match tables_for(options, job.tables.as_ref(), self.opened) {
            Ok(db) => db,
            Err(why) => {
                // Its run said other tables than this job: nobody else would run it either.
                (self.log)(&format!(
                    "worker {}: job {} of run {} names other tables than its run: {why}; dropped",
                    options.name, job.id, job.run
                ));
                message.ack_with(AckKind::Term).await.map_err(nats)?;
                return Ok(());
            }
        };
        let started = Instant::now();
        if options.echo {
            // The pipeline's load test: an answer at once, no search.
            let answer = fanorona_search::jobs::Answer {
                leaf: job.leaf,
                position: job.position,
                entries: Vec::new(),
                work: Default::default(),
            };
            return self.answer(&job, message, &answer, started).await;
        }
        let key = (job.attacker, job.init, db.map(|_| job.position.board()));
        let mut dfpn = slot.warm.take(&key).unwrap_or_else(|| {
            let leaf = LeafEval::new(db).with_init(job.init);
            Box::new(DfPn::new(
                Goal {
                    attacker: job.attacker,
                },
                leaf,
                Limits::none(),
                second_level_entries(options.table_bytes),
            ))
        });
        let spec = job.job();
        let mut work = tokio::task::spawn_blocking(move || {
            let answer = run_job(&mut dfpn, &spec);
            (dfpn, answer)
        });
        // "In progress" while the search runs, so the server does not hand the job on (one
        // that does not get through is not a reason to drop the search).
        let (dfpn, answer) = loop {
            tokio::select! {
                r = &mut work => break r.map_err(nats)?,
                _ = tokio::time::sleep(progress_every) => {
                    let _ = message.ack_with(AckKind::Progress).await;
                }
            }
        };
        slot.warm.keep(key, dfpn);
        self.searched.fetch_add(1, Ordering::Relaxed);
        self.busy
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        self.answer(&job, message, &answer, started).await
    }

    /// Publishes `answer` to `job` (searched since `started`), then acknowledges the job;
    /// for a run closed meanwhile, only the acknowledgement.
    async fn answer(
        &self,
        job: &JobMsg,
        message: jetstream::Message,
        answer: &fanorona_search::jobs::Answer,
        started: Instant,
    ) -> Result<(), ClusterError> {
        let options = self.options;
        let seconds = started.elapsed().as_secs_f64();
        let delivered = message.info().map_or(1, |i| i.delivered);
        let reply = AnswerMsg::new(job, answer, &self.signature, seconds, delivered);
        let body = wire::encode_answer(&reply);
        if self.closed(&job.run) {
            // Decided meanwhile: nobody reads the answer.
            message.ack().await.map_err(nats)?;
            return Ok(());
        }
        tracing::debug!(
            "worker {}: job {} of run {} answered in {seconds:.2} s",
            options.name,
            job.id,
            job.run
        );
        // The answer is stored before the job is acknowledged: a crash between the two
        // runs the job again, and the master takes only one answer.
        self.js
            .publish(super::answers_subject(&job.run), body.into())
            .await
            .map_err(nats)?
            .await
            .map_err(nats)?;
        message.ack().await.map_err(nats)?;
        self.done.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The tables `want` names, as this worker holds them (`None` when it names none), or why
/// this worker cannot run jobs over them.
fn tables_for(
    options: &Options,
    want: Option<&Tables>,
    opened: &Opened,
) -> Result<Option<&'static Database>, String> {
    let Some(want) = want else {
        return Ok(None);
    };
    let board: Board = want
        .board
        .parse()
        .map_err(|_| format!("jobs over tables of an unknown board {:?}", want.board))?;
    let mut o = opened.lock().expect("tables lock");
    let db = *o.entry(board).or_insert_with(|| {
        let dir = options.db.as_ref()?;
        Database::open_whole(dir, board)
            .ok()
            .map(|db| &*Box::leak(Box::new(db)))
    });
    let have = db.map_or(0, |d| d.max_pieces());
    if have == want.pieces {
        let mine = db.and_then(|d| d.fingerprint(have));
        return match (&want.fingerprint, mine) {
            (Some(theirs), Some(mine)) if *theirs != mine => Err(format!(
                "jobs over other {} tables than this worker's: the master's manifest (SHA256SUMS) has fingerprint {theirs}, this worker's {mine}; copy the master's tables to {}",
                want.board,
                options.tables_dir()
            )),
            (Some(theirs), None) => Err(format!(
                "jobs over {} tables with fingerprint {theirs}: this worker's have no manifest (`fanorona db checksums --board {} --db {}` writes it)",
                want.board,
                want.board,
                options.tables_dir()
            )),
            _ => {
                // Tables this worker will search: read ahead once (`Database::warm`).
                if let Some(db) = db {
                    db.warm();
                }
                Ok(db)
            }
        };
    }
    let dir = options.tables_dir();
    let have = if have == 0 {
        "are missing".to_string()
    } else {
        format!("go to {have} pieces")
    };
    Err(format!(
        "jobs over the {} tables to {} pieces: this worker's {have} ({dir}); copy the master's tables there, or build the same: fanorona db build --board {} --pieces {} --db {dir} --index symmetric (or the master's index)",
        want.board, want.pieces, want.board, want.pieces
    ))
}

/// Whether `dir` holds any slice of any board (`DIR/RxC/A-B.wdl`).
fn holds_tables(dir: &std::path::Path) -> bool {
    let Ok(boards) = std::fs::read_dir(dir) else {
        return false;
    };
    boards.flatten().any(|b| {
        std::fs::read_dir(b.path()).is_ok_and(|files| {
            files
                .flatten()
                .any(|f| f.path().extension().is_some_and(|e| e == "wdl"))
        })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_workers_table_holds_as_many_entries_as_the_daemons() {
        assert_eq!(
            fanorona_search::pn::second_level_entries(super::TABLE_BYTES),
            fanorona_search::pn::DFPN_SECOND_LEVEL_TABLE
        );
    }

    #[test]
    fn a_worker_too_big_for_the_memory_is_refused_with_the_threads_that_fit() {
        use super::{TABLE_BYTES, check_memory, memory_needed};
        const GIB: u64 = 1 << 30;
        assert_eq!(memory_needed(8, TABLE_BYTES), 8 * GIB);
        assert!(check_memory(8, TABLE_BYTES, 8 * GIB).is_ok());
        let e = check_memory(8, TABLE_BYTES, 5 * GIB + GIB / 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a worker of 8 threads needs 8.0 GiB for its search tables (2 x 512 MiB a thread), and this machine has 5.5 GiB available: run with --threads 5 or fewer"
        );
        let e = check_memory(1, TABLE_BYTES, GIB / 2).unwrap_err();
        assert!(e.to_string().ends_with("free some memory first"), "{e}");
    }

    #[test]
    fn a_thread_keeps_two_tables_warm_and_drops_the_least_recently_used() {
        use super::{Kind, Warm};
        use fanorona_rules::position::Color;
        use fanorona_search::dfpn::DfPn;
        use fanorona_search::{Goal, Init, LeafEval, Limits};
        let table = |attacker| {
            Box::new(DfPn::new(
                Goal { attacker },
                LeafEval::new(None),
                Limits::none(),
                1024,
            ))
        };
        let (white, black): (Kind, Kind) = (
            (Color::White, Init::Material, None),
            (Color::Black, Init::Material, None),
        );
        let third: Kind = (Color::White, Init::Mobility, None);
        let mut warm = Warm::default();
        warm.keep(white, table(Color::White));
        warm.keep(black, table(Color::Black));
        // White used again: Black is now the least recently used, and goes for a third kind.
        let w = warm.take(&white).expect("white's table kept");
        warm.keep(white, w);
        warm.keep(third, table(Color::White));
        assert!(warm.take(&black).is_none());
        assert!(warm.take(&white).is_some());
        assert!(warm.take(&third).is_some());
    }
}
