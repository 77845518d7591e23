//! The daemon run as a service for a week: readiness for systemd, its log file, the settings
//! named once in the environment, following a session's log across pauses and restarts,
//! sessions deleted and renamed, and the exit statuses an operator's scripts read.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{BIN, Data, assert_fails, stderr};
use serde_json::Value;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `fanorona ARGS` in `dir` (no config.toml there), with `env` and no FANORONA_* variables
/// of the caller's.
fn run_in(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.current_dir(dir)
        .env_remove("FANORONA_CONFIG")
        .env_remove("FANORONA_DATA_DIR")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn the_environment_names_the_settings_and_a_flag_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let config = cwd.join("service.toml");
    // A relative data_dir is taken from the config file's directory.
    std::fs::write(&config, "data_dir = \"d1\"\nlog_level = \"warn\"\n").unwrap();
    let env = [("FANORONA_CONFIG", config.as_path())];
    let o = run_in(cwd, &env, &["session", "start", "3x3", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(cwd.join("d1/store").is_dir());
    let o = run_in(cwd, &env, &["session", "list"]);
    assert!(stdout(&o).contains("3x3 #1"), "{}", stdout(&o));
    // FANORONA_DATA_DIR over the config's data_dir; --data-dir over both.
    let d2 = cwd.join("d2");
    let both = [
        ("FANORONA_CONFIG", config.as_path()),
        ("FANORONA_DATA_DIR", &d2),
    ];
    assert_fails(
        &run_in(cwd, &both, &["session", "list"]),
        2,
        &["d2", "no such data directory"],
    );
    let d1 = cwd.join("d1");
    let o = run_in(
        cwd,
        &both,
        &["--data-dir", d1.to_str().unwrap(), "session", "list"],
    );
    assert!(stdout(&o).contains("3x3 #1"), "{}", stderr(&o));
    // --config over FANORONA_CONFIG.
    let other = cwd.join("other.toml");
    std::fs::write(&other, "data_dir = \"d3\"\n").unwrap();
    assert_fails(
        &run_in(
            cwd,
            &env,
            &["--config", other.to_str().unwrap(), "session", "list"],
        ),
        2,
        &["d3"],
    );
    // A variable naming a missing file is named as the variable; commands that read no
    // settings do not read it (nor refuse it, as they refuse a flag they would ignore).
    let missing = cwd.join("missing.toml");
    let bad = [("FANORONA_CONFIG", missing.as_path())];
    assert_fails(
        &run_in(cwd, &bad, &["session", "list"]),
        2,
        &["FANORONA_CONFIG", "missing.toml"],
    );
    assert!(run_in(cwd, &bad, &["moves", "3x3"]).status.success());
}

#[test]
fn a_list_where_no_store_is_says_so_and_makes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (dir, says) in [
        (tmp.path().join("typo"), "no such data directory"),
        (empty.clone(), "holds no session store"),
    ] {
        let o = run_in(
            tmp.path(),
            &[],
            &["--data-dir", dir.to_str().unwrap(), "session", "list"],
        );
        assert_fails(&o, 2, &[dir.to_str().unwrap(), says]);
    }
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "nothing made"
    );
    // An empty store is no error: it has no sessions.
    let data = Data::new("log_level = \"warn\"\n");
    let id = data.json(&["session", "start", "3x3", "--json"])["id"].to_string();
    data.json(&["session", "stop", &id, "--json"]);
    data.json(&["session", "delete", &id, "--json"]);
    let o = data.cmd(&["session", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "no sessions");
}

#[test]
fn sessions_are_deleted_and_renamed_and_a_name_is_had_once() {
    let data = Data::new("log_level = \"warn\"\nthreads = 1\n");
    let start = |args: &[&str]| {
        let mut a = vec!["session", "start"];
        a.extend_from_slice(args);
        data.cmd(&a)
    };
    let id = |o: Output| -> u64 {
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["id"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(id(start(&["3x3", "--name", "small", "--json"])), 1);
    assert_fails(
        &start(&["3x5", "--name", " small "]),
        2,
        &["session 1 is already named 'small'"],
    );
    // Unnamed starts of one board are two sessions.
    assert_eq!(id(start(&["3x5", "--json"])), 2);
    assert_eq!(id(start(&["3x5", "--json"])), 3);
    let s = data.json(&["session", "rename", "2", "first 3x5", "--json"]);
    assert_eq!(s["name"], "first 3x5");
    assert_fails(
        &data.cmd(&["session", "rename", "3", "small"]),
        2,
        &["already named 'small'"],
    );
    assert_fails(&data.cmd(&["session", "rename", "3", ""]), 2, &["1 to 200"]);
    // Running (waiting for a daemon) is refused; stopped, it goes whole.
    assert_fails(
        &data.cmd(&["session", "delete", "3"]),
        2,
        &["session 3 is running", "stop it first"],
    );
    data.json(&["session", "stop", "3", "--json"]);
    let o = data.cmd(&["session", "delete", "3"]);
    assert_eq!(
        stdout(&o).trim(),
        "session 3 '3x5 #3' deleted",
        "{}",
        stderr(&o)
    );
    assert_fails(&data.cmd(&["session", "status", "3"]), 2, &["no session 3"]);
    // Its id is not given again.
    assert_eq!(id(start(&["3x3", "--json"])), 4);

    // A solved session under a daemon: its trees, curve and log go; the rote entries it
    // made and its certificates stay. (The others stopped: their rote entries would come
    // and go meanwhile.)
    data.json(&["session", "stop", "2", "--json"]);
    data.json(&["session", "stop", "4", "--json"]);
    let daemon = data.daemon();
    let s = data.wait_for(1, "the solve", |s| s["state"] == "solved");
    assert_eq!(s["value"], "white", "{s}");
    data.wait_for(1, "its certificates", |s| {
        s["goals"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| !g["certificate_verified"].is_null())
    });
    let rote = data.json(&["rote", "stats", "--json"])["entries"].clone();
    let log = data.dir.join("logs/session-1.jsonl");
    assert!(log.is_file());
    let v = data.json(&["session", "delete", "1", "--json"]);
    assert_eq!(v["name"], "small", "{v}");
    assert!(!log.exists());
    let curve = data.dir.join("c.csv");
    assert_fails(
        &data.cmd(&["session", "curve", "1", "--csv", curve.to_str().unwrap()]),
        2,
        &["no session 1"],
    );
    assert_eq!(data.json(&["rote", "stats", "--json"])["entries"], rote);
    assert!(
        data.dir
            .join("certificates/session-1.white-wins.cert.gz")
            .is_file()
    );
    // The name is free again.
    assert_eq!(id(start(&["3x3", "--name", "small", "--json"])), 5);
    drop(daemon);
    let list = data.json(&["session", "list", "--json"]);
    let ids: Vec<u64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [2, 4, 5]);
}

/// A child whose stdout and stderr lines arrive on channels as they are written.
struct Watched {
    child: Child,
    out: mpsc::Receiver<String>,
    err: mpsc::Receiver<String>,
}

impl Watched {
    fn spawn(command: &mut Command) -> Watched {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = |r: Box<dyn Read + Send>| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for l in BufReader::new(r).lines() {
                    if tx.send(l.unwrap()).is_err() {
                        return;
                    }
                }
            });
            rx
        };
        let out = lines(Box::new(child.stdout.take().unwrap()));
        let err = lines(Box::new(child.stderr.take().unwrap()));
        Watched { child, out, err }
    }

    /// Waits (at most 30 s) for a line of `from` that contains `text`; returns it.
    fn expect(from: &mpsc::Receiver<String>, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match from.recv_timeout(left) {
                Ok(l) if l.contains(text) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line with '{text}': {e}"),
            }
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A readable tail line: its time first, as `2026-11-03T12:34:56Z`.
fn stamped(line: &str) -> bool {
    let t = line.split(' ').next().unwrap_or("");
    t.len() == 20 && t.starts_with("20") && t.as_bytes()[10] == b'T' && t.ends_with('Z')
}

#[test]
fn tail_prints_the_last_lines_with_their_times_and_what_a_crash_lost() {
    let data = Data::new("log_level = \"warn\"\n");
    // A log as a daemon killed at iteration 900, checkpointed at 85, leaves it.
    let logs = data.dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let line = |event: &str, it: u64| {
        format!(
            "{{\"time\":1790000000.5,\"event\":\"{event}\",\"session\":9,\"goal\":\"white\",\"iteration\":{it},\"nodes\":{it},\"nodes_per_second\":0.0,\"root_pn\":3,\"root_dpn\":\"inf\",\"first_level\":1,\"rote_hits\":0,\"rote_hit_rate\":0.0,\"db_hits\":0,\"memory_bytes\":0,\"store_bytes\":0,\"seconds\":1.0,\"checkpoints\":1}}\n"
        )
    };
    let mut text = line("start", 0);
    for it in (100..=900).step_by(100) {
        text.push_str(&line("progress", it));
    }
    text.push_str(&line("resume", 85));
    text.push_str(&line("progress", 120));
    std::fs::write(logs.join("session-9.jsonl"), &text).unwrap();
    let o = data.cmd(&["session", "tail", "9", "-n", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(lines.iter().all(|l| stamped(l)), "{shown}");
    assert!(lines[0].starts_with("2026-09-21T"), "{shown}");
    assert!(
        lines[0].contains("resume")
            && lines[0].contains("815 iterations logged after the last checkpoint were lost"),
        "{shown}"
    );
    let o = data.cmd(&["session", "tail", "9", "-n", "all", "--json"]);
    assert_eq!(stdout(&o), text);
    // Twenty by default.
    let o = data.cmd(&["session", "tail", "9"]);
    assert_eq!(stdout(&o).lines().count(), 12);
    assert_fails(
        &data.cmd(&["session", "tail", "9", "-n", "x"]),
        2,
        &["'x' is not a count"],
    );
}

#[test]
fn tail_follow_outlives_a_replaced_log_and_says_no_daemon_runs() {
    let data = Data::new("log_level = \"warn\"\n");
    let id = data.json(&["session", "start", "3x3", "--json"])["id"].to_string();
    let mut tail = Watched::spawn(
        Command::new(BIN)
            .arg("--config")
            .arg(&data.config)
            .arg("--data-dir")
            .arg(&data.dir)
            .args(["session", "tail", &id, "--follow"]),
    );
    Watched::expect(&tail.err, "waiting for its first line");
    Watched::expect(&tail.err, "no daemon is running");
    let log = data.dir.join(format!("logs/session-{id}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let line = |event: &str, it: u64| {
        format!(
            "{{\"time\":1790000000.0,\"event\":\"{event}\",\"session\":{id},\"goal\":\"white\",\"iteration\":{it},\"nodes\":0,\"nodes_per_second\":0.0,\"root_pn\":1,\"root_dpn\":1,\"first_level\":1,\"rote_hits\":0,\"rote_hit_rate\":0.0,\"db_hits\":0,\"memory_bytes\":0,\"store_bytes\":0,\"seconds\":0.0,\"checkpoints\":0}}\n"
        )
    };
    std::fs::write(&log, line("start", 0) + &line("progress", 7)).unwrap();
    assert!(stamped(&Watched::expect(&tail.out, "start")));
    Watched::expect(&tail.out, "it 7 ");
    // Replaced (a new file renamed over it): read again from its start.
    let new = log.with_extension("new");
    std::fs::write(&new, line("resume", 5)).unwrap();
    std::fs::rename(&new, &log).unwrap();
    Watched::expect(&tail.err, "was replaced");
    Watched::expect(&tail.out, "it 5 ");
    assert!(tail.child.try_wait().unwrap().is_none(), "still following");
}

#[test]
fn tail_follow_outlives_a_pause_and_a_daemon_killed_and_ends_at_a_stop() {
    // 5x7 without tables: far from solved in the seconds this takes.
    let data = Data::new("log_level = \"warn\"\nthreads = 1\ncheckpoint_interval = \"200ms\"\n");
    let ids = data.json(&["session", "start", "5x7", "--json"])["id"].to_string();
    let daemon = data.daemon();
    let mut tail = Watched::spawn(
        Command::new(BIN)
            .arg("--config")
            .arg(&data.config)
            .arg("--data-dir")
            .arg(&data.dir)
            .args(["session", "tail", &ids, "--follow"]),
    );
    Watched::expect(&tail.out, "start");
    data.json(&["session", "pause", &ids, "--json"]);
    Watched::expect(&tail.out, "paused");
    Watched::expect(&tail.err, "is paused: following on");
    data.json(&["session", "resume", &ids, "--json"]);
    Watched::expect(&tail.out, "resume");
    daemon.kill9();
    Watched::expect(&tail.err, "no daemon is running");
    let daemon = data.daemon();
    Watched::expect(&tail.out, "resume");
    data.json(&["session", "stop", &ids, "--json"]);
    Watched::expect(&tail.err, "is stopped: nothing more will come");
    let status = tail.child.wait().unwrap();
    assert!(status.success());
    drop(daemon);
}

#[test]
fn ctrl_c_on_a_solve_checkpoints_and_exits_130() {
    let data = Data::new("log_level = \"warn\"\nthreads = 1\ncheckpoint_interval = \"1h\"\n");
    let mut solve = Watched::spawn(
        Command::new(BIN)
            .arg("--config")
            .arg(&data.config)
            .arg("--data-dir")
            .arg(&data.dir)
            .args(["solve", "9x3"]),
    );
    let log = data.dir.join("logs/session-1.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&log).map_or(true, |t| t.is_empty()) {
        assert!(Instant::now() < deadline, "the solve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    common::signal(&solve.child, "INT");
    Watched::expect(&solve.err, "interrupted: session 1 checkpointed");
    assert_eq!(solve.child.wait().unwrap().code(), Some(130));
    let s = data.status(1);
    assert!(s["checkpoints"].as_u64().unwrap() >= 1, "{s}");
}

/// The daemon under a service manager: READY=1 once its socket answers, STOPPING=1 at
/// SIGTERM, and its log in DATA_DIR/daemon.log; under the journal, on stderr alone.
#[test]
fn the_daemon_tells_systemd_when_it_is_ready_and_logs_to_its_file() {
    let data = Data::new("log_level = \"info\"\n");
    let notify = data.tmp.path().join("notify");
    let manager = UnixDatagram::bind(&notify).unwrap();
    manager
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut daemon = Command::new(BIN)
        .arg("--config")
        .arg(&data.config)
        .arg("--data-dir")
        .arg(&data.dir)
        .arg("daemon")
        .env("NOTIFY_SOCKET", &notify)
        .env_remove("JOURNAL_STREAM")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 512];
    let n = manager.recv(&mut buf).unwrap();
    let said = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(said.starts_with("READY=1\n"), "{said}");
    // Ready means listening: a command is answered at once.
    std::os::unix::net::UnixStream::connect(data.dir.join("daemon.sock")).unwrap();
    let pid = daemon.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let n = manager.recv(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"STOPPING=1"));
    assert!(daemon.wait().unwrap().success());
    let log = std::fs::read_to_string(data.dir.join("daemon.log")).unwrap();
    assert!(log.contains(&format!("daemon {pid} on")), "{log}");
    assert!(log.contains("daemon: stopped"), "{log}");

    // Under the journal (stderr is the stream JOURNAL_STREAM names): no file, no time
    // stamps of its own (the journal stamps every line).
    let other = Data::new("log_level = \"info\"\n");
    let err = other.tmp.path().join("journal");
    let file = std::fs::File::create(&err).unwrap();
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().unwrap();
    let mut daemon = Command::new(BIN)
        .arg("--config")
        .arg(&other.config)
        .arg("--data-dir")
        .arg(&other.dir)
        .arg("daemon")
        .env("JOURNAL_STREAM", format!("{}:{}", m.dev(), m.ino()))
        .env_remove("NOTIFY_SOCKET")
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(other.dir.join("daemon.sock")).is_err() {
        assert!(Instant::now() < deadline, "the daemon did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = daemon.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert!(daemon.wait().unwrap().success());
    let journal = std::fs::read_to_string(&err).unwrap();
    assert!(journal.contains("daemon: stopped"), "{journal}");
    assert!(journal.lines().all(|l| !l.starts_with("20")), "{journal}");
    assert!(!other.dir.join("daemon.log").exists());
}
