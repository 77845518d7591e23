//! `fanorona worker` and `fanorona cluster solve`: second-level searches as jobs over NATS
//! JetStream.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};

use crate::cli::help;
use crate::cli::output::{CliResult, Failure, print_json};
use crate::out;
use fanorona::cluster::master::{QuestionOnWorkers, SolvedOnWorkers};
use fanorona::cluster::{self, dispatch, master, simulate, wire};
use fanorona::config::Config;
use fanorona::search::pn::PnTree;
use fanorona::search::{Goal, LeafEval, Outcome};

/// Where the NATS server is and how to prove who we are.
#[derive(Args)]
pub struct Nats {
    /// The NATS server, e.g. nats://10.0.0.5:4222.
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// A file holding the server's token (or FANORONA_NATS_TOKEN; never on the command line,
    /// where every user of the machine reads it).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

impl Nats {
    fn token(&self) -> Result<Option<String>, Failure> {
        cluster::read_token(self.token_file.as_deref()).map_err(|e| {
            let path = self
                .token_file
                .as_deref()
                .unwrap_or(std::path::Path::new(""));
            Failure::input(anyhow!("{}: {e}", path.display()))
        })
    }
}

#[derive(Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: Nats,
    /// The endgame tables (default: db_dir of the config): the same as the master's.
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Jobs run at once, one a thread.
    #[arg(long, default_value = "1", value_parser = crate::cli::args::threads)]
    pub threads: usize,
    /// The worker's name in answers and logs (default: HOST-PID).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Decide a position (both questions) with its second-level searches run by workers.
    ///
    /// The first-level tree stays here; each expansion is a job on the jobs stream, up to
    /// --jobs in flight. Prints the value, the nodes and which worker answered how many.
    #[command(after_long_help = help::CLUSTER_SOLVE)]
    Solve {
        #[command(flatten)]
        target: crate::cli::args::Target,
        #[command(flatten)]
        nats: Nats,
        /// The endgame tables its leaves read (the workers need the same).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// Jobs kept in flight.
        #[arg(long, default_value = "4")]
        jobs: usize,
        /// How long a job may go without word from its worker (a worker says "in progress"
        /// three times in it) before the server gives it to another.
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        ack_wait: std::time::Duration,
        /// How large each job's search may grow: \"tree-size\", a node count, \"tree/D\" or
        /// \"max(N,tree/D)\" (default: second_level of the config).
        #[arg(long, value_name = "BOUND")]
        second_level: Option<fanorona::search::SecondLevel>,
        /// Only this question: whether this side wins (both by default).
        #[arg(long, value_parser = crate::cli::args::color_parser())]
        goal: Option<fanorona::Color>,
        /// Add each job answered to this trace (made if missing), for `cluster simulate` to
        /// replay the same jobs.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        #[command(flatten)]
        out: crate::cli::args::JsonFlag,
    },
    /// Decide one question in virtual time with 1 to 1024 simulated workers: the master's
    /// real code, each job replayed from a trace (or run here once and added to it).
    ///
    /// For each worker count: the virtual time to decide, the speedup and efficiency over
    /// the first count, the extra nodes, the workers' idle fraction and the master's time a
    /// job (measured). A job reaches its worker half a --latency after it is sent and its
    /// answer comes back after the other half. Jobs not in --trace are run on this thread
    /// and added to it, so the next call replays them.
    #[command(after_long_help = help::CLUSTER_SIMULATE)]
    Simulate {
        #[command(flatten)]
        target: crate::cli::args::Target,
        /// The endgame tables its leaves read.
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// The question: does this side win ("white" or "black"; default the side to move).
        #[arg(long, value_parser = crate::cli::args::color_parser())]
        goal: Option<fanorona::Color>,
        /// Worker counts to simulate, the first the one speedups are measured against.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1,2,4,8,16,32,64,128,256,512,1024"
        )]
        workers: Vec<usize>,
        /// How large each job's search may grow: a node count (a bound that grows with the
        /// tree gives the same leaf another budget, so its job is not found in the trace).
        #[arg(long, value_name = "BOUND", default_value = "30000")]
        second_level: fanorona::search::SecondLevel,
        /// A job's round trip between master and worker (scripts/bench-cluster.sh measures
        /// it on one machine).
        #[arg(long, default_value = "0.55ms", value_parser = humantime::parse_duration)]
        latency: std::time::Duration,
        /// The server's processor time a job, in µs, jobs served one at a time in the order
        /// sent (scripts/bench-pipeline.sh measures it; 0 leaves the server out).
        #[arg(long, value_name = "US", default_value_t = 1e6 * simulate::ServerModel::MEASURED.job_seconds)]
        server_us: f64,
        /// The master's own time a job for its messages, in µs (the load test's master
        /// µs/job).
        #[arg(long, value_name = "US", default_value_t = 1e6 * simulate::ServerModel::MEASURED.master_io_seconds)]
        master_io_us: f64,
        /// The trace jobs are replayed from and added to (made if missing).
        #[arg(long, value_name = "FILE")]
        trace: PathBuf,
        /// How a leaf in flight is marked: "excluded" (numbers just below infinity) or
        /// "inflated" (its numbers doubled each time selection reaches it).
        #[arg(long = "virtual", value_name = "HOW", default_value = "inflated")]
        policy: fanorona::search::jobs::Virtual,
        /// Replay the whole sweep this many times and give the medians, with the lowest and
        /// highest (the order answers come back in changes the tree, so replays differ).
        #[arg(long, value_name = "N", default_value = "1", value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Draw the speedup against the workers to this PNG.
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        /// Also draw the runs of this file (an earlier call's --json output), each series
        /// (leaves in flight, jobs' size) a line of its own.
        #[arg(long, value_name = "FILE", requires = "png")]
        also: Vec<PathBuf>,
        #[command(flatten)]
        out: crate::cli::args::JsonFlag,
    },
    /// What the server holds: jobs queued and under way, workers' requests waiting,
    /// redeliveries, answers not yet read. The workers by name, and each session's jobs,
    /// are in `fanorona session status`.
    #[command(after_long_help = help::CLUSTER_STATUS)]
    Status {
        #[command(flatten)]
        nats: MaybeNats,
        #[command(flatten)]
        out: crate::cli::args::JsonFlag,
    },
    /// The pipeline's load test: the real master against echo workers (answers at once, no
    /// search) through one server, for each number of worker connections: jobs a second,
    /// and the processor time a job of the server, the master and the workers.
    ///
    /// Start the server on its own (scripts/bench-pipeline.sh does, file-backed) and give
    /// its process with --server-pid to count its time.
    #[command(after_long_help = help::CLUSTER_BENCH)]
    Bench {
        #[command(flatten)]
        nats: Nats,
        /// Worker connections to try, each an echo worker of --threads threads.
        #[arg(long, value_delimiter = ',', default_value = "1,8,64,256")]
        connections: Vec<usize>,
        /// Threads of each echo worker (a worker asks for all its idle threads' jobs in one
        /// request).
        #[arg(long, default_value = "1", value_parser = crate::cli::args::threads)]
        threads: usize,
        /// Jobs an echo worker asks for in one request at most (1: a request a thread, as
        /// workers did before; default: all its idle threads').
        #[arg(long, default_value_t = cluster::worker::FETCH_ALL, hide_default_value = true)]
        fetch: usize,
        /// Seconds measured for each (after one of warm-up).
        #[arg(long, default_value = "10")]
        seconds: f64,
        /// Jobs the master keeps in flight (default: 4 a worker thread, at least 64).
        #[arg(long)]
        in_flight: Option<usize>,
        /// The server's process, for its processor time.
        #[arg(long, value_name = "PID")]
        server_pid: Option<u32>,
        /// Jobs published before the oldest must be confirmed stored (1: a round trip a
        /// job, as the master did before).
        #[arg(long, default_value_t = dispatch::PUBLISH_WINDOW)]
        window: usize,
        /// Answers fetched in one request at most (1: a request an answer).
        #[arg(long, default_value_t = dispatch::ANSWERS_BATCH)]
        batch: usize,
        #[command(flatten)]
        out: crate::cli::args::JsonFlag,
    },
    /// The load test's workers (`cluster bench` starts them): CONNECTIONS echo workers.
    #[command(hide = true, after_long_help = help::CLUSTER_BENCH_ECHO)]
    BenchEcho {
        #[command(flatten)]
        nats: Nats,
        #[arg(long)]
        connections: usize,
        #[arg(long, default_value = "1")]
        threads: usize,
        #[arg(long, default_value_t = cluster::worker::FETCH_ALL)]
        fetch: usize,
    },
}

/// The server and token of `--nats`/`--token-file`, or else of the config's `[cluster]`.
#[derive(Args)]
pub struct MaybeNats {
    /// The NATS server (default: nats of the config's [cluster]).
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// A file holding the server's token (default: token_file of [cluster], else
    /// FANORONA_NATS_TOKEN).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

impl MaybeNats {
    fn resolve(self, config: &Config) -> Result<Nats, Failure> {
        let cluster = config.cluster.as_ref();
        let nats = self
            .nats
            .or_else(|| cluster.map(|c| c.nats.clone()))
            .ok_or_else(|| {
                Failure::input(anyhow!(
                    "no server: give --nats URL, or nats in the config's [cluster]"
                ))
            })?;
        Ok(Nats {
            nats,
            token_file: self
                .token_file
                .or_else(|| cluster.and_then(|c| c.token_file.clone())),
        })
    }
}

pub fn worker(args: WorkerArgs, config: &Config) -> CliResult {
    // Its per-job lines are at debug level (`log_level = "debug"` in the config).
    crate::cli::session::init_tracing(config);
    let options = cluster::worker::Options {
        url: args.nats.nats.clone(),
        token: args.nats.token()?,
        db: Some(args.db.unwrap_or_else(|| config.db_dir.clone())),
        threads: args.threads,
        name: args
            .name
            .unwrap_or_else(|| format!("{}-{}", cluster::host_name(), std::process::id())),
        table_bytes: cluster::worker::TABLE_BYTES,
        echo: false,
        fetch: cluster::worker::FETCH_ALL,
    };
    cluster::worker::run(options, &|line| eprintln!("{line}")).map_err(Failure::other)?;
    Ok(())
}

pub fn cluster(command: ClusterCommand, config: &Config) -> CliResult {
    match command {
        ClusterCommand::Simulate {
            target,
            db,
            goal,
            workers,
            second_level,
            latency,
            server_us,
            master_io_us,
            trace,
            policy,
            repeat,
            png,
            also,
            out,
        } => {
            if !(server_us.is_finite()
                && server_us >= 0.0
                && master_io_us.is_finite()
                && master_io_us >= 0.0)
            {
                return Err(Failure::input(anyhow!(
                    "--server-us and --master-io-us must be 0 or more"
                )));
            }
            let server = simulate::ServerModel {
                job_seconds: server_us * 1e-6,
                master_io_seconds: master_io_us * 1e-6,
            };
            let (root, tables) = root_and_tables(&target, db.as_deref())?;
            let runs = simulate(
                root,
                tables.as_ref(),
                goal.unwrap_or(root.side_to_move()),
                &workers,
                second_level,
                (latency, server),
                policy,
                &trace,
                repeat as usize,
                config,
                !out.json,
            )?;
            if repeat > 1 && !out.json {
                print_summaries(&simulate::summarise(&runs), repeat);
            }
            if let Some(png) = png {
                let mut drawn = runs.clone();
                for file in &also {
                    let text = std::fs::read_to_string(file)
                        .map_err(|e| Failure::input(anyhow!("{}: {e}", file.display())))?;
                    let earlier: Vec<simulate::Run> = serde_json::from_str(&text).map_err(|e| {
                        Failure::input(anyhow!(
                            "{}: not the --json output of cluster simulate: {e}",
                            file.display()
                        ))
                    })?;
                    drawn.extend(earlier);
                }
                let goal = goal.unwrap_or(root.side_to_move());
                let title = format!(
                    "{} {} wins?: speedup in virtual time",
                    target_name(&target, &root),
                    goal.name(),
                );
                simulate::draw_speedup(&png, &title, &drawn)
                    .map_err(|e| Failure::other(anyhow!(e)))?;
            }
            if out.json {
                print_json(&runs)?;
            }
            Ok(())
        }
        ClusterCommand::Status { nats, out } => server_status(nats, config, out.json),
        ClusterCommand::Bench {
            nats,
            connections,
            threads,
            fetch,
            seconds,
            in_flight,
            server_pid,
            window,
            batch,
            out,
        } => bench(
            &nats,
            (&connections, threads, fetch),
            seconds,
            (in_flight, server_pid),
            (window, batch),
            out.json,
        ),
        ClusterCommand::BenchEcho {
            nats,
            connections,
            threads,
            fetch,
        } => {
            let options = cluster::worker::Options {
                url: nats.nats.clone(),
                token: nats.token()?,
                db: None,
                threads,
                name: format!("echo-{}", std::process::id()),
                table_bytes: 0,
                echo: true,
                fetch,
            };
            cluster::worker::run_echo(options, connections, &|_| {}).map_err(Failure::other)?;
            Ok(())
        }
        ClusterCommand::Solve {
            target,
            nats,
            db,
            jobs,
            ack_wait,
            second_level,
            goal,
            trace,
            out,
        } => solve_on_workers(
            config,
            &target,
            nats,
            db,
            jobs,
            ack_wait,
            second_level,
            (goal, trace),
            out.json,
        ),
    }
}

/// `cluster bench`: for each number of connections, echo workers started in a process of
/// their own, the master here, one row.
fn bench(
    nats: &Nats,
    (connections, threads, fetch): (&[usize], usize, usize),
    seconds: f64,
    (in_flight, server_pid): (Option<usize>, Option<u32>),
    pipeline: (usize, usize),
    json: bool,
) -> CliResult {
    if !seconds.is_finite() || seconds <= 0.0 || connections.contains(&0) {
        return Err(Failure::input(anyhow!(
            "--seconds must be above 0 and every --connections at least 1"
        )));
    }
    let token = nats.token()?;
    let exe = std::env::current_exe().map_err(Failure::other)?;
    let mut rows = Vec::new();
    if !json {
        out!(
            "{:>11} {:>7} {:>9} {:>8} {:>14} {:>14} {:>14}",
            "connections",
            "threads",
            "in flight",
            "jobs/s",
            "server µs/job",
            "master µs/job",
            "workers µs/job"
        );
    }
    for &n in connections {
        let mut echo = std::process::Command::new(&exe);
        echo.args(["cluster", "bench-echo", "--nats", &nats.nats])
            .args(["--connections", &n.to_string()])
            .args(["--threads", &threads.to_string()])
            .args(["--fetch", &fetch.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(t) = &token {
            echo.env(cluster::TOKEN_VARIABLE, t);
        }
        let mut child = echo.spawn().map_err(Failure::other)?;
        // Connected and listening before the first run is announced.
        std::thread::sleep(std::time::Duration::from_millis(1000 + 10 * n as u64));
        let options = dispatch::Options {
            url: nats.nats.clone(),
            token: token.clone(),
            width: in_flight.unwrap_or((4 * n * threads).max(64)),
            ack_wait: cluster::ACK_WAIT,
            window: pipeline.0,
            batch: pipeline.1,
        };
        let row = cluster::bench::measure(
            &options,
            (n, threads),
            seconds,
            server_pid,
            Some(child.id()),
        );
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
        let row = row.map_err(Failure::other)?;
        if !json {
            let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
            out!(
                "{:>11} {:>7} {:>9} {:>8.0} {:>14} {:>14.0} {:>14}",
                row.connections,
                row.threads,
                row.in_flight,
                row.jobs_per_second,
                us(row.server_us_per_job),
                row.master_us_per_job,
                us(row.workers_us_per_job)
            );
        }
        rows.push(row);
    }
    if json {
        return print_json(&rows);
    }
    Ok(())
}

/// `cluster status`: what the server holds of the jobs, answers and workers.
fn server_status(nats: MaybeNats, config: &Config, json: bool) -> CliResult {
    let nats = nats.resolve(config)?;
    let token = nats.token()?;
    let s = cluster::status::status(&nats.nats, token.as_deref()).map_err(Failure::other)?;
    if json {
        return print_json(&s);
    }
    out!("server {} (nats-server {})", s.url, s.server_version);
    for (stream, wire, n) in &s.older_jobs {
        out!(
            "  {n} jobs of wire version {wire} wait on {stream}: their master runs another version of fanorona, whose workers take them (this one speaks {})",
            cluster::wire::VERSION
        );
    }
    if !s.streams {
        out!("  no jobs stream of this version yet: no master of it has run here");
        return Ok(());
    }
    let list = |runs: &[(String, u64)]| {
        if runs.is_empty() {
            "none".to_string()
        } else {
            runs.iter()
                .map(|(r, n)| format!("{n} of {r}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    out!("  jobs queued: {}", list(&s.queued));
    out!(
        "  jobs held by workers: {}; workers' requests waiting: {}; redelivered: {}",
        s.running,
        s.requests_waiting,
        s.redelivered
    );
    for r in &s.runs {
        out!(
            "  run {}{}: {} waiting, {} held, {} requests waiting, ack wait {} s",
            r.run,
            if r.open { "" } else { " (closed)" },
            r.waiting,
            r.held,
            r.asking,
            r.ack_wait_seconds
        );
    }
    out!("  answers not yet read: {}", list(&s.answers));
    out!(
        "  messages that did not decode, set aside on {} (kept a week): {}",
        cluster::DEAD,
        s.dead_letters
    );
    Ok(())
}

/// `cluster solve`: both questions of a position, their second-level searches as jobs for
/// the workers.
#[allow(clippy::too_many_arguments)]
fn solve_on_workers(
    config: &Config,
    target: &crate::cli::args::Target,
    nats: Nats,
    db: Option<PathBuf>,
    jobs: usize,
    ack_wait: std::time::Duration,
    second_level: Option<fanorona::search::SecondLevel>,
    (only, trace): (Option<fanorona::Color>, Option<PathBuf>),
    json: bool,
) -> CliResult {
    let (root, tables) = root_and_tables(target, db.as_deref())?;
    crate::cli::args::builtin_init(config, root.board(), "cluster solve")?;
    let leaf = LeafEval::new(tables.as_ref()).with_init(config.init);
    let needs = tables.as_ref().map(|t| wire_tables(root.board(), t));
    let run = dispatch::subject_token(&format!("{}-{}", cluster::host_name(), std::process::id()));
    let token = nats.token()?;
    let mover = root.side_to_move();
    let mut answers = Vec::new();
    let mut value = "draw".to_string();
    let options = dispatch::Options {
        url: nats.nats.clone(),
        token,
        width: jobs.max(1),
        ack_wait,
        window: dispatch::PUBLISH_WINDOW,
        batch: dispatch::ANSWERS_BATCH,
    };
    let questions = match only {
        Some(c) => vec![c],
        None => vec![mover, mover.opponent()],
    };
    for &attacker in &questions {
        let goal = Goal { attacker };
        // A run a question: answers to one question's jobs never reach the other.
        let mut tree = PnTree::new(root, goal, leaf, Vec::new());
        tree.second_level = second_level.unwrap_or(config.second_level);
        let run = format!("{run}-{}", attacker.name());
        let tally = master::solve(
            &options,
            run,
            &mut tree,
            (needs.clone(), trace.clone()),
            |line| eprintln!("{line}"),
        )
        .map_err(Failure::other)?;
        let outcome = tree.outcome();
        answers.push(QuestionOnWorkers {
            goal: goal.to_string(),
            outcome,
            nodes: tree.stats.nodes,
            iterations: tree.stats.iterations,
            tally,
        });
        if outcome == Outcome::Proven {
            value = attacker.name().to_string();
            break;
        }
        if only.is_some() {
            // One question disproven says who does not win, not the value.
            value = format!("not {}", attacker.name());
        }
    }
    if json {
        print_json(&SolvedOnWorkers {
            position: root,
            value,
            searches: answers,
        })?;
    } else {
        out!(
            "{}: {}",
            root,
            match value.strip_prefix("not ") {
                _ if value == "draw" => "draw".to_string(),
                Some(side) => format!("{side} does not win"),
                None => format!("{value} wins"),
            }
        );
        for a in &answers {
            // The workers as a JSON object, as this line has always shown them.
            let by_worker = serde_json::to_string(&a.tally.by_worker)
                .map_err(|e| Failure::other(anyhow!(e)))?;
            out!(
                "  {}: {}, {} nodes, {} jobs ({} answered twice, {} not needed), by worker {by_worker}",
                a.goal,
                a.outcome.name(),
                a.nodes,
                a.tally.jobs,
                a.tally.stale,
                a.tally.abandoned,
            );
        }
    }
    Ok(())
}

/// How a plot's title names the position: the board's start, else the position itself.
fn target_name(target: &crate::cli::args::Target, root: &fanorona::Position) -> String {
    let start = fanorona::Position::initial(root.board());
    let from_start = target.record.is_none()
        && target
            .position
            .as_deref()
            .is_none_or(|p| p.parse::<fanorona::Board>().is_ok());
    match (from_start, target.play.is_empty()) {
        (true, true) if *root == start => format!("{} start", root.board()),
        // The moves say it in fewer letters than the position (a title must fit a plot).
        (true, false) => format!("{} after {}", root.board(), target.play.join(" ")),
        _ => root.to_string(),
    }
}

/// `cluster simulate`: each worker count's run, printed as it ends when `print`.
#[allow(clippy::too_many_arguments)]
fn simulate(
    root: fanorona::Position,
    tables: Option<&fanorona::egdb::Database>,
    attacker: fanorona::Color,
    workers: &[usize],
    second_level: fanorona::search::SecondLevel,
    (latency, server): (std::time::Duration, simulate::ServerModel),
    policy: fanorona::search::jobs::Virtual,
    trace: &std::path::Path,
    repeat: usize,
    config: &Config,
    print: bool,
) -> Result<Vec<simulate::Run>, Failure> {
    use fanorona::search::dfpn::DfPn;
    use fanorona::search::jobs::run_job;
    use fanorona::search::pn::second_level_entries;
    if workers.is_empty() || workers.contains(&0) {
        return Err(Failure::input(anyhow!(
            "--workers: one or more counts, each at least 1"
        )));
    }
    crate::cli::args::builtin_init(config, root.board(), "cluster simulate")?;
    let leaf = LeafEval::new(tables).with_init(config.init);
    let goal = Goal { attacker };
    let header = cluster::trace::Header::new(
        root.board().to_string(),
        config.init,
        tables.map(|t| wire_tables(root.board(), t)),
    );
    let mut trace = cluster::trace::Trace::open(trace, &header).map_err(Failure::input)?;
    // One worker's df-pn table, kept warm from job to job as a worker keeps it.
    let mut dfpn = DfPn::new(
        goal,
        leaf,
        fanorona::search::Limits::none(),
        second_level_entries(cluster::worker::TABLE_BYTES),
    );
    let mut ran_here = 0u64;
    let mut last_said = std::time::Instant::now();
    let mut run_here = |job: &fanorona::search::jobs::Job| {
        let at = std::time::Instant::now();
        let answer = run_job(&mut dfpn, job);
        ran_here += 1;
        if last_said.elapsed().as_secs() >= 10 {
            eprintln!("  {ran_here} jobs run for the trace so far");
            last_said = std::time::Instant::now();
        }
        (answer, at.elapsed().as_secs_f64())
    };
    let mut runs: Vec<simulate::Run> = Vec::new();
    for replay in 1..=repeat {
        if print {
            out!(
                "{root}: {} wins?, jobs of {second_level} nodes, round trip {:.2} ms, server {:.0} µs and master {:.0} µs a job, leaves in flight {policy:?}; trace of {} jobs{}",
                attacker.name(),
                latency.as_secs_f64() * 1e3,
                server.job_seconds * 1e6,
                server.master_io_seconds * 1e6,
                trace.len(),
                if repeat > 1 {
                    format!("; replay {replay} of {repeat}")
                } else {
                    String::new()
                }
            );
            out!(
                "{:>7} {:>9} {:>11} {:>8} {:>10} {:>8} {:>7} {:>12} {:>7} {:>7} {:>9}",
                "workers",
                "outcome",
                "seconds",
                "speedup",
                "efficiency",
                "jobs",
                "extra",
                "master/job",
                "master",
                "server",
                "idle"
            );
        }
        let first = runs.len();
        for &w in workers {
            let mut tree = PnTree::new(root, goal, leaf, Vec::new());
            tree.second_level = second_level;
            let mut run = simulate::simulate(
                &mut tree,
                &mut trace,
                &mut run_here,
                w,
                (latency, server),
                policy,
            )
            .map_err(Failure::other)?;
            run.replay = replay;
            if print {
                let first = runs.get(first).unwrap_or(&run);
                let speedup = run.speedup_over(first);
                out!(
                    "{:>7} {:>9} {:>11.3} {:>8.2} {:>9.1}% {:>8} {:>6.1}% {:>9.1} us {:>6.2}% {:>6.1}% {:>8.1}%",
                    w,
                    run.outcome,
                    run.seconds,
                    speedup,
                    100.0 * speedup / w as f64,
                    run.jobs,
                    100.0 * (run.nodes as f64 / first.nodes.max(1) as f64 - 1.0),
                    run.master_micros_per_job(),
                    100.0 * run.master_load(),
                    100.0 * run.server_load(),
                    100.0 * run.idle()
                );
            }
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The medians of `repeat` replays, with the lowest and highest where they matter.
fn print_summaries(summaries: &[simulate::Summary], repeat: u32) {
    out!("medians over {repeat} replays (lowest to highest):");
    out!(
        "{:>7} {:>8} {:>22} {:>7} {:>12} {:>7} {:>7} {:>7} {:>9}",
        "workers",
        "speedup",
        "efficiency",
        "extra",
        "master/job",
        "master",
        "server",
        "idle",
        "ran here"
    );
    for s in summaries {
        let e = s.efficiency;
        out!(
            "{:>7} {:>8.2} {:>22} {:>6.1}% {:>9.1} us {:>6.2}% {:>6.1}% {:>6.1}% {:>9}",
            s.workers,
            s.speedup.median,
            format!(
                "{:.1}% ({:.1} to {:.1})",
                100.0 * e.median,
                100.0 * e.low,
                100.0 * e.high
            ),
            100.0 * s.extra_nodes.median,
            s.master_micros_per_job.median,
            100.0 * s.master_load.median,
            100.0 * s.server_load.median,
            100.0 * s.idle.median,
            s.ran
        );
    }
}

/// The position a command's target names, and the tables under `db` for its board (none
/// without `db`).
fn root_and_tables(
    target: &crate::cli::args::Target,
    db: Option<&std::path::Path>,
) -> Result<(fanorona::Position, Option<fanorona::egdb::Database>), Failure> {
    let root = crate::cli::args::resolve_target(target)?;
    let tables = db
        .map(|d| crate::cli::args::open_tables(d, root.board()))
        .transpose()?;
    Ok((root, tables))
}

/// How jobs name `tables` (of `board`): a worker must hold the same.
fn wire_tables(board: fanorona::Board, tables: &fanorona::egdb::Database) -> wire::Tables {
    fanorona::search::jobs::TablesUsed::of(tables, board).into()
}
