//! Second-level searches on workers over a real NATS JetStream server (Debian's
//! `nats-server`, installed by `scripts/install-nats.sh`), started on a free port with a
//! fresh store, and real `fanorona worker` processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, BIN, Data};
use serde_json::Value;

const NATS_SERVER: &str = "/usr/sbin/nats-server";
const TOKEN: &str = "a-test-token-0123456789";

/// A JetStream server of its own, stopped when dropped.
struct Nats {
    child: Child,
    url: String,
    port: u16,
    store: PathBuf,
}

impl Nats {
    fn start(store: &Path) -> Nats {
        Nats::start_on(store, common::browser::free_port())
    }

    /// On `port`, with its streams in `store` (those of a server before it, if any).
    fn start_on(store: &Path, port: u16) -> Nats {
        assert!(
            Path::new(NATS_SERVER).exists(),
            "{NATS_SERVER} is missing: scripts/install-nats.sh installs it (scripts/test.sh runs it)"
        );
        let child = Command::new(NATS_SERVER)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "--auth",
                TOKEN,
                "-sd",
            ])
            .arg(store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nats {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            port,
            store: store.to_path_buf(),
        }
    }

    /// Killed with SIGKILL (its streams stay on file).
    fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A worker process, its log in `log`; killed when dropped.
struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn start(data: &Data, nats: &Nats, name: &str, token: &str) -> Worker {
        Worker::start_with(data, nats, name, token, &[])
    }

    /// A worker with these arguments besides.
    fn start_with(data: &Data, nats: &Nats, name: &str, token: &str, more: &[&str]) -> Worker {
        let log = data.tmp.path().join(format!("{name}.log"));
        let child = Command::new(BIN)
            .args(["worker", "--nats", &nats.url, "--name", name, "--config"])
            .arg(&data.config)
            .args(more)
            .env("FANORONA_NATS_TOKEN", token)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Worker { child, log }
    }

    /// Workers of these names (the environment's token).
    fn all(data: &Data, nats: &Nats, names: &[&str]) -> Vec<Worker> {
        names
            .iter()
            .map(|n| Worker::start(data, nats, n, TOKEN))
            .collect()
    }

    /// A worker over the tables in `db` (the environment's token).
    fn with_db(data: &Data, nats: &Nats, name: &str, db: &Path) -> Worker {
        let log = data.tmp.path().join(format!("{name}.log"));
        let child = Command::new(BIN)
            .args(["worker", "--nats", &nats.url, "--name", name, "--db"])
            .arg(db)
            .env("FANORONA_NATS_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Worker { child, log }
    }

    /// Told to stop (SIGTERM) and waited for: (jobs answered, searched, skipped unsearched)
    /// as its last line says.
    fn stop(mut self) -> (u64, u64, u64) {
        common::signal(&self.child, "TERM");
        self.child.wait().unwrap();
        let log = self.log();
        let line = log
            .lines()
            .find(|l| l.contains("stopped after "))
            .unwrap_or_else(|| panic!("{log}"));
        let n: Vec<u64> = line
            .split("stopped after ")
            .nth(1)
            .unwrap()
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(n.len(), 3, "{line}");
        (n[0], n[1], n[2])
    }

    /// Waits (20 s at most) until the worker's log has `text`.
    fn wait_to_say(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.log().contains(text) {
            assert!(Instant::now() < deadline, "{}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn three_workers_decide_as_the_in_process_solve() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let workers: Vec<Worker> = Worker::all(&data, &nats, &["w1", "w2", "w3"]);
    for (board, jobs) in [("3x9", "6"), ("3x7", "3")] {
        let cluster = cluster_solve_agrees(&data, &nats, board, jobs);
        for s in cluster["searches"].as_array().unwrap() {
            // Every job was answered once, by one of the workers, but those still in flight
            // when the question was decided.
            assert!(s["jobs"].as_u64().unwrap() > 0, "{s}");
            assert_each_job_answered_once(s);
        }
    }
    drop(workers);
}

/// `cluster solve BOARD --jobs JOBS` through `nats`'s workers, its value checked against the
/// in-process solve: its report.
fn cluster_solve_agrees(data: &Data, nats: &Nats, board: &str, jobs: &str) -> Value {
    let o = Command::new(BIN)
        .args([
            "cluster", "solve", board, "--nats", &nats.url, "--jobs", jobs, "--json", "--config",
        ])
        .arg(&data.config)
        .env("FANORONA_NATS_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let cluster: Value = serde_json::from_slice(&o.stdout).unwrap();
    let alone = data.json(&["solve", board, "--no-store", "--json"]);
    assert_eq!(cluster["value"], alone["value"], "{board}: {cluster}");
    cluster
}

#[test]
fn a_job_that_does_not_decode_is_set_aside_and_the_worker_goes_on() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let w = Worker::start(&data, &nats, "w1", TOKEN);
    // A master makes the streams.
    cluster_solve_agrees(&data, &nats, "3x5", "4");
    // A run no program of ours opened, and a job no program wrote on it.
    open_raw_run(&nats, "broken");
    publish_raw(
        &nats,
        None,
        "fanorona.w4.jobs.broken",
        "{\"version\": 3, \"not\": \"a job\"}",
        1,
    );
    w.wait_to_say("does not decode (not a message of this wire");
    assert!(
        w.log().contains("set aside on FANORONA_DEAD"),
        "{}",
        w.log()
    );
    let c = cluster_status(&nats);
    assert_eq!(c["dead_letters"], 1, "{c}");
    // Not queued for ever, and the worker still works.
    assert!(
        c["queued"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q[0] != "broken"),
        "{c}"
    );
    cluster_solve_agrees(&data, &nats, "3x7", "4");
    drop(w);
}

#[test]
fn a_worker_of_four_threads_asks_for_their_jobs_in_one_request() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let w = Worker::start_with(&data, &nats, "w4", TOKEN, &["--threads", "4"]);
    // A master makes the streams; then a run that never has a job is open while the four
    // threads run another master's jobs, freed one at a time.
    cluster_solve_agrees(&data, &nats, "3x5", "4");
    open_raw_run(&nats, "idle");
    let s = cluster_solve_agrees(&data, &nats, "3x7", "8");
    assert!(s["searches"][0]["jobs"].as_u64().unwrap() > 8, "{s}");
    // Idle: one request out on the empty run for the four threads, never one a thread.
    let asking = || {
        let c = cluster_status(&nats);
        c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run"] == "idle")
            .map_or(0, |r| r["asking"].as_u64().unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while asking() == 0 {
        assert!(Instant::now() < deadline, "{}", w.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen: Vec<u64> = (0..20)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            asking()
        })
        .collect();
    assert!(seen.iter().all(|&n| n <= 1), "{seen:?}");
    assert!(seen.contains(&1), "{seen:?}");
    drop(w);
}

#[test]
fn a_worker_of_another_wire_takes_no_job_and_says_why() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    // Jobs of the first wire (JSON, on its own stream) from a master of an older fanorona.
    publish_raw(
        &nats,
        Some(("FANORONA_JOBS", "fanorona.jobs.>")),
        "fanorona.jobs.old-1",
        "{\"version\": 1}",
        2,
    );
    let w = Worker::start(&data, &nats, "w1", TOKEN);
    w.wait_to_say("2 jobs of wire version 1 wait on FANORONA_JOBS");
    let o = Command::new(BIN)
        .args(["cluster", "status", "--nats", &nats.url])
        .env("FANORONA_NATS_TOKEN", TOKEN)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("2 jobs of wire version 1 wait on FANORONA_JOBS"),
        "{said}"
    );
    // Its own wire's jobs it takes.
    cluster_solve_agrees(&data, &nats, "3x5", "4");
    drop(w);
}

/// Publishes `body` `times` to `subject` on `nats`, as no program of ours would, first making
/// the work-queue stream `stream` (name, subjects) if one is given.
fn publish_raw(nats: &Nats, stream: Option<(&str, &str)>, subject: &str, body: &str, times: usize) {
    as_a_stranger(nats, |client| async move {
        let js = async_nats::jetstream::new(client);
        if let Some((name, subjects)) = stream {
            js.create_stream(async_nats::jetstream::stream::Config {
                name: name.into(),
                subjects: vec![subjects.into()],
                retention: async_nats::jetstream::stream::RetentionPolicy::WorkQueue,
                ..Default::default()
            })
            .await
            .unwrap();
        }
        for _ in 0..times {
            js.publish(subject.to_string(), body.to_string().into())
                .await
                .unwrap()
                .await
                .unwrap();
        }
    });
}

/// Runs `work` with a client of `nats` of its own (a program that is none of ours).
fn as_a_stranger<F: std::future::Future<Output = ()>>(
    nats: &Nats,
    work: impl FnOnce(async_nats::Client) -> F,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_nats::ConnectOptions::new()
            .token(TOKEN.into())
            .connect(&nats.url)
            .await
            .unwrap();
        work(client).await;
    });
}

/// Opens run `run` on `nats` as a master would (its jobs consumer, described, and announced)
/// but without one: what its workers take is what the test publishes.
fn open_raw_run(nats: &Nats, run: &str) {
    as_a_stranger(nats, |client| async move {
        let js = async_nats::jetstream::new(client.clone());
        let card =
            format!("{{\"run\":\"{run}\",\"tables\":null,\"ack_wait_ms\":30000,\"open\":true}}");
        js.get_stream("FANORONA_JOBS_W4")
            .await
            .unwrap()
            .create_consumer(async_nats::jetstream::consumer::pull::Config {
                durable_name: Some(format!("jobs-{run}")),
                description: Some(card.clone()),
                filter_subject: format!("fanorona.w4.jobs.{run}"),
                ..Default::default()
            })
            .await
            .unwrap();
        client
            .publish("fanorona.w4.runs", card.into())
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
}

/// A search's jobs were each answered once (none taken twice) but those still in flight when
/// its question was decided.
fn assert_each_job_answered_once(s: &Value) {
    let by: u64 = s["by_worker"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        by + s["abandoned"].as_u64().unwrap(),
        s["jobs"].as_u64().unwrap(),
        "{s}"
    );
    assert_eq!(s["stale"], 0, "{s}");
}

#[test]
fn a_worker_with_a_wrong_token_says_so_and_stops() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let mut w = Worker::start(&data, &nats, "intruder", "not-the-token");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = w.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the worker went on: {}", w.log());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!status.success());
    let log = w.log();
    assert!(log.contains(&nats.url), "{log}");
    assert!(log.to_lowercase().contains("authorization"), "{log}");
}

/// A data directory whose daemon hands its second-level searches to the workers of `nats`
/// (`jobs` in flight a question, each of `second_level` nodes; a job unacknowledged for 3 s
/// goes to another worker; after a fault, the server is tried again after a second; each
/// answered job traced).
fn cluster_data(nats: &Nats, jobs: usize, second_level: &str) -> Data {
    let data = Data::new("");
    std::fs::write(data.tmp.path().join("nats.token"), TOKEN).unwrap();
    std::fs::write(
        &data.config,
        format!(
            "log_level = \"warn\"\nthreads = 2\ncheckpoint_interval = \"100ms\"\nsecond_level = \"{second_level}\"\n\n[cluster]\nnats = \"{}\"\ntoken_file = \"nats.token\"\njobs = {jobs}\nack_wait = \"3s\"\nretry = \"1s\"\ntrace = true\n",
            nats.url
        ),
    )
    .unwrap();
    data
}

#[test]
fn a_session_solved_by_the_daemon_and_three_workers_has_the_in_process_value_and_certificates() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(&tmp.path().join("nats"));
    let data = cluster_data(&nats, 4, "300");

    let workers: Vec<Worker> = Worker::all(&data, &nats, &["w1", "w2", "w3"]);
    let _daemon = data.daemon();
    let id = start_session(&data, "3x9");
    // While it runs, its status shows the jobs and who answers them.
    let running = data.wait_for(id, "jobs answered by a worker", |s| {
        s["state"] == "solved"
            || s["jobs"]
                .as_array()
                .is_some_and(|j| j.iter().any(|v| v["answered"].as_u64() > Some(0)))
    });
    let s = data.wait_for(id, "the solve and its check", common::settled);
    let alone = data.json(&["solve", "3x9", "--no-store", "--json"]);
    assert_eq!(s["value"], alone["value"], "{s}");
    // Solved, its status still says what its jobs came to.
    assert!(all_jobs(&s, "sent") > 0, "{s}");
    assert_eq!(all_jobs(&s, "in_flight"), 0, "{s}");
    // The server's side, with the config's server and token.
    let o = Command::new(BIN)
        .args(["cluster", "status", "--json", "--config"])
        .arg(&data.config)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["streams"], true, "{c}");
    assert_eq!(c["url"], nats.url.as_str(), "{c}");
    assert!(!c["server_version"].as_str().unwrap().is_empty(), "{c}");
    // Decided: its runs withdrawn, nothing of them left on the server.
    for key in ["runs", "queued", "answers"] {
        assert_eq!(c[key], serde_json::json!([]), "{key}: {c}");
    }
    if running["state"] != "solved" {
        let jobs = &running["jobs"][0];
        assert_eq!(jobs["place"], nats.url.as_str(), "{running}");
        assert_eq!(jobs["connected"], true, "{running}");
        let names: Vec<&str> = jobs["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap())
            .collect();
        assert!(
            names.iter().all(|n| ["w1", "w2", "w3"].contains(n)),
            "{running}"
        );
    }
    // The workers ran the jobs: told to stop, each says how many it answered.
    let mut answered = 0;
    for mut w in workers {
        common::signal(&w.child, "TERM");
        w.child.wait().unwrap();
        let log = w.log();
        assert!(!log.contains("cannot take"), "{log}");
        answered += log
            .split("stopped after ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{log}"));
    }
    assert!(answered > 0);
    let prefix = data.tmp.path().join("s");
    let o = data.cmd(&[
        "session",
        "certificate",
        &id.to_string(),
        prefix.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let mut checked = 0;
    for goal in ["white", "black"] {
        let cert = data.tmp.path().join(format!("s.{goal}-wins.cert.gz"));
        if cert.exists() {
            let o = Command::new(BIN).arg("verify").arg(&cert).output().unwrap();
            assert!(o.status.success(), "{goal}: {}", common::stderr(&o));
            checked += 1;
        }
    }
    assert!(checked >= 1);

    // The master traced the jobs it took; the simulator replays them.
    let white = std::fs::read_dir(data.tmp.path().join("data/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with(&format!("-s{id}-white.trace"))
        })
        .expect("a trace of White's question");
    let lines = std::fs::read_to_string(&white).unwrap().lines().count();
    assert!(lines >= 2, "a header and a job at least: {lines}");
    let o = Command::new(BIN)
        .args([
            "cluster",
            "simulate",
            "3x9",
            "--goal",
            "white",
            "--second-level",
            "300",
            "--workers",
            "1,8",
            "--json",
            "--trace",
        ])
        .arg(&white)
        .arg("--config")
        .arg(&data.config)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let runs: Value = serde_json::from_slice(&o.stdout).unwrap();
    let white_outcome = s["goals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["attacker"] == "white")
        .map(|g| g["outcome"].clone())
        .unwrap();
    for r in runs.as_array().unwrap() {
        assert_eq!(r["outcome"], white_outcome, "{r}");
    }
    // The root's job at least is the daemon's.
    assert!(count(&runs[0], "replayed") >= 1, "{runs}");
    assert_eq!(runs[1]["workers"], 8);
}

/// The jobs of the first question still open in `status` (null before any).
fn jobs(status: &Value) -> &Value {
    let open = status["goals"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|g| g["outcome"] == "open")
        .map(|g| g["attacker"].clone());
    status["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|j| open.as_ref().is_none_or(|o| j["goal"] == *o))
        .unwrap_or(&Value::Null)
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

/// A count of the jobs summed over the session's questions.
fn all_jobs(status: &Value, key: &str) -> u64 {
    status["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|j| count(j, key))
        .sum()
}

/// Its nodes searched so far (the live count while it runs).
fn nodes_now(status: &Value) -> u64 {
    status["live"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| count(p, "nodes"))
        .sum::<u64>()
        .max(count(status, "nodes"))
}

#[test]
fn a_killed_server_and_a_killed_daemon_do_not_stop_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(&tmp.path().join("nats"));
    let data = cluster_data(&nats, 2, "100");
    let _workers: Vec<Worker> = Worker::all(&data, &nats, &["w1", "w2"]);
    let daemon = data.daemon();
    // 5x5 is far beyond this test: it runs throughout.
    let long = start_session(&data, "5x5");
    data.wait_for(long, "jobs answered", |s| count(jobs(s), "answered") >= 20);
    // The server killed: the search goes on in the daemon and says why.
    let nats = {
        let mut nats = nats;
        nats.kill_9();
        let down = data.wait_for(long, "the fault seen", |s| jobs(s)["connected"] == false);
        let problem = jobs(&down)["problem"].as_str().unwrap_or("").to_string();
        assert!(problem.contains("searching here"), "{down}");
        let nodes = nodes_now(&down);
        data.wait_for(long, "nodes searched here", |s| nodes_now(s) > nodes);
        Nats::start_on(&nats.store.clone(), nats.port)
    };
    // Started again (its streams on file): the jobs go to the workers again.
    let back = data.wait_for(long, "the jobs sent again", |s| {
        jobs(s)["connected"] == true
    });
    let answered = count(jobs(&back), "answered");
    data.wait_for(long, "answers again", |s| {
        count(jobs(s), "answered") > answered + 10
    });
    data.json(&["session", "stop", &long.to_string(), "--json"]);
    // The daemon killed in the middle of a run: a new one resumes from the checkpoint, and
    // the value is the in-process solve's.
    let id = start_session(&data, "3x9");
    let s = data.wait_for(id, "a checkpoint", |s| {
        s["state"] == "solved" || count(s, "checkpoints") >= 2
    });
    let killed = s["state"] != "solved";
    if killed {
        daemon.kill9();
    }
    let _daemon = killed.then(|| data.daemon());
    let s = data.wait_for(id, "the solve and its check", common::settled);
    let alone = data.json(&["solve", "3x9", "--no-store", "--json"]);
    assert_eq!(s["value"], alone["value"], "{s}");
    for g in s["goals"].as_array().unwrap() {
        assert!(g["outcome"] == "open" || g["verified"] == true, "{s}");
    }
    assert!(
        killed,
        "solved before the first checkpoint: nothing was killed"
    );
    drop(nats);
}

#[test]
fn a_job_whose_worker_is_killed_is_run_again_by_another() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(&tmp.path().join("nats"));
    // One job at a time, each long (a million nodes): the worker is always in one.
    let data = cluster_data(&nats, 1, "1000000");
    let first = Worker::start(&data, &nats, "w1", TOKEN);
    let _daemon = data.daemon();
    let id = start_session(&data, "5x5");
    // Counted over both questions: the one whose job was answered may be decided by it, and
    // the job the worker dies in is then the other's.
    let s = data.wait_for(id, "a job answered", |s| all_jobs(s, "answered") >= 1);
    let before = all_jobs(&s, "answered");
    // Killed while it holds a job (between two jobs there is nothing to run again).
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster_status(&nats)["running"].as_u64() < Some(1) {
        assert!(Instant::now() < deadline, "w1 held no job: {}", first.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(first);
    let _second = Worker::start(&data, &nats, "w2", TOKEN);
    // After the ack wait (3 s) the server hands the job to w2, which answers it.
    let s = data.wait_for(id, "the lost job answered", |s| {
        all_jobs(s, "redelivered") >= 1
    });
    assert!(all_jobs(&s, "answered") > before, "{s}");
    let by_worker: u64 = s["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|j| j["workers"].as_array().unwrap())
        .map(|w| count(w, "jobs"))
        .sum();
    assert_eq!(by_worker, all_jobs(&s, "answered"), "{s}");
    assert_eq!(all_jobs(&s, "stale"), 0, "{s}");
    // The web app's session page shows the jobs and the workers.
    let server = common::browser::Server::start(&data.config, &data.dir, &[]);
    let b = common::browser::Browser::start();
    b.open(&server.url(&format!("#/session/{id}")));
    b.wait_until(
        "the workers on the session page",
        "return [...document.querySelectorAll('.jobs tr.worker td:first-child')].some(td => td.textContent === 'w2')",
        30,
    );
    let jobs = b.text(".jobs");
    assert!(
        jobs.contains(&nats.url) && jobs.contains("redelivered"),
        "{jobs}"
    );
    data.json(&["session", "stop", &id.to_string(), "--json"]);
}

#[test]
fn a_worker_whose_tables_differ_from_the_masters_takes_no_job_and_says_why() {
    let tables = common::tables::built(fanorona::Board::new(3, 9).unwrap(), 4);
    let other = other_tables(tables.path());
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let stranger = Worker::with_db(&data, &nats, "stranger", other.path());
    let empty = tempfile::tempdir().unwrap();
    let bare = Worker::with_db(&data, &nats, "bare", empty.path());
    let _twin = Worker::with_db(&data, &nats, "twin", tables.path());
    let o = Command::new(BIN)
        .args([
            "cluster", "solve", "3x9", "--nats", &nats.url, "--jobs", "2", "--json",
        ])
        .arg("--db")
        .arg(tables.path())
        .args(["--config"])
        .arg(&data.config)
        .env("FANORONA_NATS_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for s in v["searches"].as_array().unwrap() {
        let by = s["by_worker"].as_object().unwrap();
        assert!(
            !by.contains_key("stranger") && !by.contains_key("bare"),
            "{v}"
        );
        assert!(by.contains_key("twin"), "{v}");
    }
    let log = stranger.log();
    assert!(
        log.contains("fingerprint") && log.contains("copy the master's tables"),
        "{log}"
    );
    // A worker without tables says so when it starts, and names the command that builds them.
    let log = bare.log();
    assert!(log.contains("no endgame tables under"), "{log}");
    assert!(
        log.contains(&format!(
            "cannot take jobs over the 3x9 tables to 4 pieces: this worker's are missing ({}); copy the master's tables there, or build the same: fanorona db build --board 3x9 --pieces 4 --db {} --index symmetric",
            empty.path().display(),
            empty.path().display()
        )),
        "{log}"
    );
}

/// A copy of the 3x9 tables under `dir` whose manifest says another file: other tables.
fn other_tables(dir: &Path) -> tempfile::TempDir {
    let board_dir = dir.join("3x9");
    assert!(board_dir.join("SHA256SUMS").is_file());
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("3x9");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&board_dir).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    let sums = std::fs::read_to_string(copy.join("SHA256SUMS")).unwrap();
    let flipped = if sums.starts_with('0') { "1" } else { "0" };
    std::fs::write(copy.join("SHA256SUMS"), format!("{flipped}{}", &sums[1..])).unwrap();
    other
}

#[test]
fn a_run_no_worker_can_take_is_searched_here_with_the_reason_until_one_that_can_joins() {
    let tables = common::tables::built(fanorona::Board::new(3, 9).unwrap(), 4);
    let other = other_tables(tables.path());
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(&tmp.path().join("nats"));
    let data = cluster_data(&nats, 2, "300");
    let config = std::fs::read_to_string(&data.config).unwrap();
    std::fs::write(
        &data.config,
        format!("db_dir = {:?}\n{config}", tables.path()),
    )
    .unwrap();
    let stranger = Worker::with_db(&data, &nats, "stranger", other.path());
    let _daemon = data.daemon();
    let started = Instant::now();
    let id = start_session(&data, "3x9");
    // No worker takes the jobs: within the stated wait (20 s without a worker saying it
    // takes them, watched every 2 s) the session searches here, and its status names the
    // worker and why.
    let why = |s: &Value| -> Option<String> {
        s["jobs"].as_array()?.iter().find_map(|j| {
            let p = j["problem"].as_str()?;
            p.contains("stranger cannot take jobs over other 3x9 tables")
                .then(|| p.to_string())
        })
    };
    let s = data.wait_for(id, "the reason in its status", |s| {
        s["state"] == "solved" || why(s).is_some()
    });
    assert_ne!(
        s["state"], "solved",
        "solved before the jobs were found untaken: {s}"
    );
    assert!(started.elapsed() < Duration::from_secs(40), "{s}");
    assert!(why(&s).unwrap().contains("searching here"), "{s}");
    let nodes = nodes_now(&s);
    data.wait_for(id, "nodes searched here", |s| {
        s["state"] == "solved" || nodes_now(s) > nodes
    });
    // A worker with the master's tables joins: the session is decided within a minute.
    let joined = Instant::now();
    let twin = Worker::with_db(&data, &nats, "twin", tables.path());
    let s = data.wait_for(id, "the solve", |s| s["state"] == "solved");
    assert!(joined.elapsed() < Duration::from_secs(60), "{s}");
    let alone = data.json(&["solve", "3x9", "--no-store", "--json"]);
    assert_eq!(s["value"], alone["value"], "{s}");
    let (_, searched, _) = stranger.stop();
    assert_eq!(searched, 0, "the stranger took a job");
    assert!(twin.log().contains("taking jobs from"), "{}", twin.log());
    let c = cluster_status(&nats);
    assert_eq!(c["queued"], serde_json::json!([]), "{c}");
}

/// Starts a session of `board` searched by PN² with df-pn (its jobs go to the workers):
/// its id.
fn start_session(data: &Data, board: &str) -> u64 {
    data.json(&["session", "start", board, "--algo", "pn2-dfpn", "--json"])["id"]
        .as_u64()
        .unwrap()
}

/// `cluster status --json` of `nats`.
fn cluster_status(nats: &Nats) -> Value {
    let o = Command::new(BIN)
        .args(["cluster", "status", "--json", "--nats", &nats.url])
        .env("FANORONA_NATS_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn two_masters_with_different_ack_waits_share_a_server_and_both_finish() {
    let data = Data::new("log_level = \"warn\"\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let workers: Vec<Worker> = Worker::all(&data, &nats, &["w1", "w2"]);
    let solve = |board: &str, ack_wait: &str| {
        Command::new(BIN)
            .args([
                "cluster",
                "solve",
                board,
                "--nats",
                &nats.url,
                "--jobs",
                "4",
                "--ack-wait",
                ack_wait,
                "--json",
                "--config",
            ])
            .arg(&data.config)
            .env("FANORONA_NATS_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (solve("3x9", "3s"), solve("3x7", "30s"));
    for (child, board) in [(a, "3x9"), (b, "3x7")] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{board}: {}", common::stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let alone = data.json(&["solve", board, "--no-store", "--json"]);
        assert_eq!(v["value"], alone["value"], "{board}: {v}");
        for s in v["searches"].as_array().unwrap() {
            assert_each_job_answered_once(s);
        }
    }
    for w in workers {
        let log = w.log();
        assert!(!log.contains("Consumer Deleted"), "{log}");
        assert!(!log.contains("trying again"), "{log}");
    }
}

#[test]
fn a_decided_questions_queued_jobs_are_withdrawn_unsearched() {
    let data = Data::new("log_level = \"warn\"\nthreads = 1\n");
    let nats = Nats::start(&data.tmp.path().join("nats"));
    let w = Worker::start(&data, &nats, "w1", TOKEN);
    // 32 jobs in flight and one worker thread: when a question is decided, most of its jobs
    // still wait on the server.
    let o = Command::new(BIN)
        .args([
            "cluster", "solve", "3x9", "--nats", &nats.url, "--jobs", "32", "--json", "--config",
        ])
        .arg(&data.config)
        .env("FANORONA_NATS_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (mut sent, mut abandoned) = (0, 0);
    let questions = v["searches"].as_array().unwrap().len() as u64;
    for s in v["searches"].as_array().unwrap() {
        sent += s["jobs"].as_u64().unwrap();
        abandoned += s["abandoned"].as_u64().unwrap();
    }
    assert!(abandoned >= 16, "too few jobs left to withdraw: {v}");
    let c = cluster_status(&nats);
    for key in ["runs", "queued", "answers"] {
        assert_eq!(c[key], serde_json::json!([]), "{key}: {c}");
    }
    // The worker searched what its master took, and at most the one job it held at each
    // decision besides (answered before it heard of the close, or not): none of the jobs
    // withdrawn.
    let (answered, searched, _) = w.stop();
    let taken = sent - abandoned;
    assert!(
        searched >= answered && answered >= taken,
        "{answered} answered: {v}"
    );
    assert!(
        searched <= taken + questions,
        "{searched} searched, {taken} taken: {v}"
    );
}

#[test]
fn a_daemon_killed_while_workers_search_loses_at_most_30_s_of_their_work() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(&tmp.path().join("nats"));
    let data = cluster_data(&nats, 3, "100000");
    let config = std::fs::read_to_string(&data.config).unwrap().replace(
        "checkpoint_interval = \"100ms\"",
        "checkpoint_interval = \"5m\"",
    );
    std::fs::write(&data.config, config).unwrap();
    let _workers: Vec<Worker> = Worker::all(&data, &nats, &["w1", "w2", "w3"]);
    let daemon = data.daemon();
    // 5x5 runs far beyond this test.
    let id = start_session(&data, "5x5");
    data.wait_for(id, "jobs answered", |s| all_jobs(s, "answered") >= 3);
    let mut samples: Vec<(Instant, u64)> = Vec::new();
    let until = Instant::now() + Duration::from_secs(40);
    while Instant::now() < until {
        let s = data.status(id);
        assert_eq!(s["state"], "running", "{s}");
        samples.push((Instant::now(), nodes_now(&s)));
        std::thread::sleep(Duration::from_secs(1));
    }
    let s = data.status(id);
    assert!(count(&s, "checkpoints") >= 1, "no checkpoint in 40 s: {s}");
    let killed = Instant::now();
    daemon.kill9();
    // What it had 30 s before the kill (the daemon's and the workers' together).
    let before = samples
        .iter()
        .rev()
        .find(|(at, _)| killed.duration_since(*at) >= Duration::from_secs(30))
        .unwrap()
        .1;
    assert!(before > 0);
    let _daemon = data.daemon();
    let s = data.wait_for(id, "the session resumed", |s| s["state"] == "running");
    let resumed = nodes_now(&s);
    assert!(
        resumed >= before,
        "resumed at {resumed} nodes, below the {before} of 30 s before the kill: {s}"
    );
}
