//! `fanorona worker`: takes jobs from the jobs stream one a thread, runs each (bounded df-pn,
//! its table kept warm from job to job), says "in progress" while it works, publishes the
//! answer, then acknowledges the job. On SIGTERM or SIGINT it takes no new job, finishes
//! those under way, and exits.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind};

use super::wire::{self, AnswerMsg, JobMsg, Signature};
use super::{ClusterError, connect, nats, next_message, wait_for_jobs};
use fanorona_rules::geometry::Board;
use fanorona_search::dfpn::DfPn;
use fanorona_search::jobs::run_job;
use fanorona_search::pn::second_level_entries;
use fanorona_search::{Goal, Init, LeafEval, Limits};
use fanorona_tables::Database;

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
}

impl Options {
    /// The tables' directory as messages show it ("DIR" when none was given).
    fn tables_dir(&self) -> String {
        self.db
            .as_ref()
            .map_or("DIR".to_string(), |d| d.display().to_string())
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

/// How long a thread that refused a job (other tables) waits before it asks for the next one.
const REFUSED_PAUSE: Duration = Duration::from_secs(10);

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

async fn serve(options: Options, log: &(dyn Fn(&str) + Sync)) -> Result<u64, ClusterError> {
    let client = connect(&options.url, options.token.as_deref()).await?;
    let js = jetstream::new(client);
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
    let Some(mut consumer) = wait_for_jobs(&js, &stop, log).await? else {
        log(&format!("worker {}: stopped after 0 jobs", options.name));
        return Ok(0);
    };
    // "In progress" three times within the wait the master set.
    let progress_every = consumer.info().await.map_err(nats)?.config.ack_wait / 3;
    log(&format!(
        "worker {}: {} threads, taking jobs from {}",
        options.name, options.threads, options.url
    ));
    if !options.db.as_deref().is_some_and(holds_tables) {
        log(&format!(
            "worker {}: no endgame tables under {}: it takes only jobs that need none (a job over tables is refused with the command that builds them)",
            options.name,
            options.tables_dir()
        ));
    }
    let done = AtomicU64::new(0);
    let opened: Opened = Mutex::new(HashMap::new());
    let shared = Shared {
        options: &options,
        js: &js,
        progress_every,
        stop: &stop,
        done: &done,
        opened: &opened,
        log,
        signature: Signature {
            name: options.name.clone(),
            host: super::host_name(),
            threads: options.threads,
        },
    };
    let slots = (0..options.threads.max(1)).map(|_| shared.slot(consumer.clone()));
    futures_util::future::join_all(slots).await;
    let n = done.load(Ordering::Relaxed);
    log(&format!("worker {}: stopped after {n} jobs", options.name));
    Ok(n)
}

type JobsConsumer = jetstream::consumer::Consumer<jetstream::consumer::pull::Config>;

/// What the worker's threads share.
struct Shared<'a> {
    options: &'a Options,
    js: &'a jetstream::Context,
    /// How often a job under way is said to be in progress.
    progress_every: Duration,
    stop: &'a AtomicBool,
    done: &'a AtomicU64,
    opened: &'a Opened,
    log: &'a (dyn Fn(&str) + Sync),
    signature: Signature,
}

/// One thread's tables and what it said.
#[derive(Default)]
struct Slot {
    warm: Warm,
    /// The last refusal said (said once, not at every job).
    said: Option<String>,
}

impl Shared<'_> {
    /// One thread's loop: a job at a time until stopped. The server going away (a restart,
    /// the network) is said once and waited out: the client reconnects, and a job whose
    /// answer could not be sent is handed to a worker again by the server.
    async fn slot(&self, mut consumer: JobsConsumer) {
        let mut slot = Slot::default();
        let mut trouble: Option<String> = None;
        while !self.stop.load(Ordering::Relaxed) {
            match self.take_one(&consumer, &mut slot).await {
                Ok(()) => {
                    if trouble.take().is_some() {
                        (self.log)(&format!(
                            "worker {}: the server answers again",
                            self.options.name
                        ));
                    }
                }
                Err(e) => {
                    let e = e.to_string();
                    if trouble.as_deref() != Some(e.as_str()) {
                        (self.log)(&format!("worker {}: {e}; trying again", self.options.name));
                        trouble = Some(e);
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    // The consumer may have been made again (a master with another wait).
                    if let Ok(Some(c)) = wait_for_jobs(self.js, self.stop, self.log).await {
                        consumer = c;
                    }
                }
            }
        }
    }

    /// Takes one job if one comes within a second, runs it and answers it.
    async fn take_one(&self, consumer: &JobsConsumer, slot: &mut Slot) -> Result<(), ClusterError> {
        let options = self.options;
        let Some(message) = next_message(consumer).await? else {
            return Ok(());
        };
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
        let db = match tables_for(options, &job, self.opened) {
            Ok(db) => db,
            Err(why) => {
                // Handed back for another worker; said once, not at every job.
                if slot.said.as_deref() != Some(why.as_str()) {
                    (self.log)(&format!("worker {}: cannot take {why}", options.name));
                    slot.said = Some(why);
                }
                message
                    .ack_with(AckKind::Nak(Some(Duration::from_secs(1))))
                    .await
                    .map_err(nats)?;
                // Each refusal spends one of the job's deliveries: this thread stands back
                // so that the workers who can run it get it first.
                tokio::time::sleep(REFUSED_PAUSE).await;
                return Ok(());
            }
        };
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
        let started = Instant::now();
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
                _ = tokio::time::sleep(self.progress_every) => {
                    let _ = message.ack_with(AckKind::Progress).await;
                }
            }
        };
        slot.warm.keep(key, dfpn);
        let seconds = started.elapsed().as_secs_f64();
        let delivered = message.info().map_or(1, |i| i.delivered);
        let reply = AnswerMsg::new(&job, &answer, &self.signature, seconds, delivered);
        let body = wire::encode_answer(&reply);
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

/// The tables `job` names, as this worker holds them (`None` when it names none), or why
/// this worker cannot run it.
fn tables_for(
    options: &Options,
    job: &JobMsg,
    opened: &Opened,
) -> Result<Option<&'static Database>, String> {
    let Some(want) = job.tables.as_ref() else {
        return Ok(None);
    };
    let board = job.position.board();
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
            _ => Ok(db),
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
