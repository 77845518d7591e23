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
}

impl Nats {
    fn start(store: &Path) -> Nats {
        assert!(
            Path::new(NATS_SERVER).exists(),
            "{NATS_SERVER} is missing: scripts/install-nats.sh installs it (scripts/test.sh runs it)"
        );
        let port = common::browser::free_port();
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
        }
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
        let log = data.tmp.path().join(format!("{name}.log"));
        let child = Command::new(BIN)
            .args(["worker", "--nats", &nats.url, "--name", name, "--config"])
            .arg(&data.config)
            .env("FANORONA_NATS_TOKEN", token)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Worker { child, log }
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
    let workers: Vec<Worker> = ["w1", "w2", "w3"]
        .iter()
        .map(|n| Worker::start(&data, &nats, n, TOKEN))
        .collect();
    for (board, jobs) in [("3x9", "6"), ("3x7", "3")] {
        let o = Command::new(BIN)
            .args([
                "cluster", "solve", board, "--nats", &nats.url, "--jobs", jobs, "--json",
                "--config",
            ])
            .arg(&data.config)
            .env("FANORONA_NATS_TOKEN", TOKEN)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        let cluster: Value = serde_json::from_slice(&o.stdout).unwrap();
        let alone = data.json(&["solve", board, "--no-store", "--json"]);
        assert_eq!(cluster["value"], alone["value"], "{board}: {cluster}");
        for s in cluster["searches"].as_array().unwrap() {
            // Every job was answered once, by one of the workers, but those still in flight
            // when the question was decided.
            assert!(s["jobs"].as_u64().unwrap() > 0, "{s}");
            assert_each_job_answered_once(s);
        }
    }
    drop(workers);
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
