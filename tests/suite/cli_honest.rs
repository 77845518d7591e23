//! What a new user meets: states and tables reported as they are, one word for one thing,
//! errors that say what to do (one line; exit 2 for the user's input, 1 for the machine's),
//! and nothing lost or half-written to a side effect.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{BIN, Data, assert_fails, stderr};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The 3x5 tables up to 4 pieces under `dir`.
fn build_tables(dir: &Path) {
    let o = run(&[
        "db",
        "build",
        "--board",
        "3x5",
        "--pieces",
        "4",
        "--db",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Flips one bit of a slice file's payload.
fn damage(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_missing_or_damaged_slice_is_named_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (missing, damaged) = (tmp.path().join("missing"), tmp.path().join("damaged"));
    build_tables(&missing);
    build_tables(&damaged);
    std::fs::remove_file(missing.join("3x5/2-2.wdl")).unwrap();
    damage(&damaged.join("3x5/1-2.wdl"));
    let (m, d) = (missing.to_str().unwrap(), damaged.to_str().unwrap());

    // A search refuses: a missing slice is the user's to build (2), a damaged file the
    // machine's failure (1); both named, with the build command for the user's directory.
    let o = run(&["solve", "3x5", "--db", m, "--no-store"]);
    assert_fails(
        &o,
        2,
        &["slice 2-2 missing", &format!("--pieces 4 --db {m}")],
    );
    assert!(stdout(&o).is_empty(), "no search ran: {}", stdout(&o));
    let o = run(&["solve", "3x5", "--db", d, "--no-store"]);
    assert_fails(&o, 1, &["slice 1-2 damaged", "checksum"]);
    let data = Data::new("");
    let o = data.cmd(&["session", "start", "3x5", "--db", m]);
    assert_fails(&o, 2, &["slice 2-2 missing"]);
    let o = run(&["bench", "certificates", "--db", m, "--repeat", "1"]);
    assert_ne!(o.status.code(), Some(0));

    // Verification and counts name every slice up to the largest built.
    let o = run(&["db", "verify", "--board", "3x5", "--db", m]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).contains("3x5 2-2: MISSING"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("no errors in"), "{}", stdout(&o));
    let o = run(&["db", "verify", "--board", "3x5", "--db", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("3x5 1-2: DAMAGED"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("3x5 2-1: not checked: its successors in slice 1-2"),
        "{}",
        stdout(&o)
    );
    let o = run(&["db", "stats", "--board", "3x5", "--db", m]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("2-2 MISSING"), "{}", stdout(&o));
    // With --json, one object: the report with the failure in it.
    for (command, db, code) in [("verify", m, 2), ("stats", m, 2), ("verify", d, 1)] {
        let o = run(&["db", command, "--board", "3x5", "--db", db, "--json"]);
        assert_eq!(o.status.code(), Some(code), "{command} {db}");
        let text = stdout(&o);
        assert_eq!(text.lines().count(), 1, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["exit_code"], code, "{v}");
        assert!(v["error"].is_string() && v["slices"].is_array(), "{v}");
    }
    let o = run(&["db", "probe", "B.B../...../..W.W w", "--db", m]);
    assert_fails(
        &o,
        2,
        &["slice 2-2 of 3x5 is not built", &format!("--db {m}")],
    );
}

#[test]
fn a_failed_session_is_retried_once_its_cause_is_mended() {
    let data = Data::new("log_level = \"warn\"\n");
    let tables = data.tmp.path().join("tables");
    build_tables(&tables);
    let t = tables.to_str().unwrap();
    let id = data.json(&["session", "start", "3x5", "--db", t, "--json"])["id"]
        .as_u64()
        .unwrap();
    // Nobody solves it yet, and the status says so.
    assert_eq!(data.status(id)["state"], "waiting");
    let o = data.cmd(&["session", "status", &id.to_string()]);
    assert!(
        stdout(&o).contains("waiting for a daemon"),
        "{}",
        stdout(&o)
    );
    // A slice lost before it runs: the session fails, naming it.
    std::fs::remove_file(tables.join("3x5/2-2.wdl")).unwrap();
    let daemon = data.daemon();
    let s = data.wait_for(id, "the failure", |s| s["state"] == "failed");
    assert!(
        s["error"].as_str().unwrap().contains("slice 2-2 missing"),
        "{s}"
    );
    // Rebuilt, and retried.
    build_tables(&tables);
    let s = data.json(&["session", "resume", &id.to_string(), "--json"]);
    assert!(s["error"].is_null(), "{s}");
    let s = data.wait_for(id, "the solve", |s| s["state"] == "solved");
    assert_eq!(s["value"], "white", "Table 4: White wins 3x5");
    drop(daemon);
}

#[test]
fn tail_follow_ends_on_a_session_that_will_not_write_more() {
    let data = Data::new("log_level = \"warn\"\n");
    let id = data.json(&["session", "start", "9x3", "--json"])["id"]
        .as_u64()
        .unwrap()
        .to_string();
    // Never run: no log, said at once.
    let o = data.cmd(&["session", "tail", &id]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("has no log yet"), "{}", stdout(&o));
    // Run a little, then stopped: --follow prints what there is and ends, saying why.
    let daemon = data.daemon();
    data.wait_for(id.parse().unwrap(), "a log line", |s| {
        s["live"].as_array().is_some_and(|l| !l.is_empty())
    });
    data.json(&["session", "stop", &id, "--json"]);
    let started = Instant::now();
    let o = data.cmd(&["session", "tail", &id, "--follow"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        stderr(&o).contains("is stopped: nothing more will come"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).lines().count() >= 2, "{}", stdout(&o));
    drop(daemon);
    // A line past tail's bound (3 MiB) is skipped, not held, and the lines after it read.
    let log = data.dir.join("logs").join(format!("session-{id}.jsonl"));
    let before = std::fs::read_to_string(&log).unwrap();
    let last = before.lines().last().unwrap().to_string();
    let mut text = before.clone();
    text.push_str(&"x".repeat(3 << 20));
    text.push('\n');
    text.push_str(&last);
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let o = data.cmd(&["session", "tail", &id, "-n", "all"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        stderr(&o).contains("not a progress line, skipped"),
        "{}",
        stderr(&o)
    );
    assert!(out.len() < 1 << 20, "the long line is not printed");
    assert_eq!(out.lines().count(), before.lines().count() + 1, "{out}");
}

#[test]
fn status_shows_both_questions_live_and_readers_reach_a_running_solve() {
    let data = Data::new("log_level = \"warn\"\nthreads = 2\n");
    let daemon = data.daemon();
    let id = data.json(&["session", "start", "9x3", "--json"])["id"]
        .as_u64()
        .unwrap();
    let s = data.wait_for(id, "both questions live", |s| {
        s["live"].as_array().is_some_and(|l| l.len() == 2)
    });
    assert_eq!(s["state"], "running");
    let o = data.cmd(&["session", "status", &id.to_string()]);
    let text = stdout(&o);
    assert_eq!(text.matches("    now: iteration").count(), 2, "{text}");
    // The paper's bound (the config's default) follows the tree: each line says what an
    // expansion may cost, the first-level size it shows.
    for line in text.lines().filter(|l| l.starts_with("    now:")) {
        let after = |key: &str| {
            let rest =
                &line[line.find(key).unwrap_or_else(|| panic!("{key}: {line}")) + key.len()..];
            rest.split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(after("first level "), after("second level now "), "{line}");
    }
    assert!(text.contains("(at the last checkpoint)"), "{text}");
    data.json(&["session", "stop", &id.to_string(), "--json"]);
    drop(daemon);

    // A solve in this process holds the store; other commands still read it.
    // Killed when the test ends, whatever happens in it.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut solve = Reaped(
        Command::new(BIN)
            .arg("--config")
            .arg(&data.config)
            .arg("--data-dir")
            .arg(&data.dir)
            .args(["solve", "9x5"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let solve_pid = solve.0.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let list = loop {
        let o = data.cmd(&["session", "list", "--json"]);
        if o.status.success() {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            if v.as_array()
                .unwrap()
                .iter()
                .any(|s| s["state"] == "running")
            {
                break v;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} {} (solve: {:?})",
            stdout(&o),
            stderr(&o),
            solve.0.try_wait()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let running = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == "running")
        .unwrap();
    assert_eq!(running["name"], "9x5 #2");
    assert!(
        data.cmd(&["rote", "stats"]).status.success(),
        "rote stats while a solve runs"
    );
    assert!(
        Command::new("kill")
            .args(["-INT", &solve_pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    solve.0.wait().unwrap();
}

#[test]
fn solve_says_the_same_thing_both_ways_and_counts_the_deciding_nodes_apart() {
    let a = Data::new("log_level = \"warn\"\n");
    let b = Data::new("log_level = \"warn\"\n");
    let x = a.json(&["solve", "3x7", "--threads", "2", "--json"]);
    let y = b.json(&["solve", "3x7", "--threads", "2", "--json"]);
    assert_eq!(x["value"], "white");
    assert_eq!(x["deciding_nodes"], y["deciding_nodes"], "{x}\n{y}");
    let deciding: Vec<&Value> = x["searches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["decides"] == true)
        .collect();
    assert_eq!(deciding.len(), 1, "{x}");
    assert_eq!(deciding[0]["goal"], "white wins");
    assert_eq!(deciding[0]["nodes"], x["deciding_nodes"]);
    // A re-run answers from its session instead of adding another.
    let again = a.json(&["solve", "3x7", "--json"]);
    assert_eq!(again["solved_before"], true);
    assert_eq!(
        a.json(&["session", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // In memory and as a session: the same lines and the same JSON keys.
    let session = stdout(&a.cmd(&["solve", "3x7"]));
    let memory = stdout(&run(&["solve", "3x7", "--no-store"]));
    for text in [&session, &memory] {
        assert!(text.contains("value: white wins\n"), "{text}");
        assert!(text.contains("  white wins? proven: "), "{text}");
    }
    let m = a.json(&["solve", "3x7", "--no-store", "--json"]);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&m), keys(&x));
}

#[test]
fn outputs_are_checked_before_the_work_and_nothing_is_half_written() {
    let o = run(&[
        "solve",
        "3x3",
        "--no-store",
        "--curve",
        "/nonexistent/dir/c.csv",
    ]);
    assert_fails(
        &o,
        2,
        &[
            "--curve /nonexistent/dir/c.csv",
            "/nonexistent/dir does not exist",
        ],
    );
    assert!(stdout(&o).is_empty());
    // A session that never ran has no curve: refused, and no file left behind.
    let data = Data::new("");
    let id = data.json(&["session", "start", "3x3", "--json"])["id"].to_string();
    let csv = data.tmp.path().join("c.csv");
    let png = data.tmp.path().join("c.png");
    let o = data.cmd(&[
        "session",
        "curve",
        &id,
        "--csv",
        csv.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
    ]);
    assert_fails(&o, 2, &["no curve points yet", "nothing written"]);
    assert!(!csv.exists() && !png.exists());
    // The curve of a solve comes after its result.
    let csv2 = data.tmp.path().join("solve.csv");
    let o = data.cmd(&["solve", "3x3", "--curve", csv2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv2).unwrap();
    assert!(text.contains(",inf,") || text.contains(",inf\n"), "{text}");
    assert!(!text.contains("9223372036854775807"));
    // A directory that is there but cannot be written is found before the work too (as
    // root, /proc stands for one); a table directory that is a file likewise.
    let o = run(&["solve", "3x3", "--no-store", "--curve", "/proc/c.csv"]);
    assert_fails(&o, 2, &["--curve /proc/c.csv", "cannot be written"]);
    assert!(stdout(&o).is_empty());
    let file = data.tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let o = run(&[
        "db",
        "build",
        "--board",
        "3x3",
        "--pieces",
        "3",
        "--db",
        file.to_str().unwrap(),
    ]);
    assert_fails(&o, 2, &["not a directory"]);
}

#[test]
fn one_word_for_one_thing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    // db build --json, and --db or --dir alike on the db commands.
    let o = run(&[
        "db",
        "build",
        "--board",
        "3x3",
        "--pieces",
        "3",
        "--dir",
        t.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["board"], "3x3");
    for flag in ["--db", "--dir"] {
        let o = run(&["db", "stats", "--board", "3x3", flag, t.to_str().unwrap()]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
    }
    // moves takes --board and --play as show does.
    let o = run(&["moves", "--board", "3x3"]);
    assert!(o.status.success());
    let first = stdout(&o).lines().next().unwrap().to_string();
    let o = run(&["moves", "--board", "3x3", "--play", &first, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["position"].as_str().unwrap().ends_with(" b"), "{v}");
    // --threads on solve.
    let o = run(&["solve", "3x3", "--no-store", "--threads", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A flag the command would ignore is refused.
    assert_fails(
        &run(&["--config", "x.toml", "show"]),
        2,
        &["--config has no effect on `fanorona show`"],
    );
    assert_fails(
        &run(&["--data-dir", "d", "perft", "--depth", "1"]),
        2,
        &["--data-dir has no effect"],
    );
}

#[test]
fn errors_say_what_to_do_once_and_as_json_when_asked() {
    // An OS error's text once.
    let o = run(&["verify", "/nonexistent/x.cert.gz"]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(all.matches("No such file or directory").count(), 1, "{all}");
    // A file as the data directory: the user's input.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "x").unwrap();
    assert_fails(
        &run(&["--data-dir", file.to_str().unwrap(), "session", "list"]),
        2,
        &["is not a directory"],
    );
    // Before and after the command: not the last one silently.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let args = ["--data-dir", a, "solve", "3x3", "--data-dir", b];
    assert_fails(&run(&args), 2, &["--data-dir is given 2 times"]);
    assert!(!Path::new(a).exists() && !Path::new(b).exists());
    // Argument errors point at the subcommand's help.
    assert_fails(
        &run(&["db", "build", "--board", "3x3", "--pieces"]),
        2,
        &["fanorona db build --help"],
    );
    // With --json, an error is a JSON object on stdout.
    let o = run(&["solve", "nonsense", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["exit_code"], 2);
    assert!(v["error"].as_str().unwrap().len() > 5, "{v}");
    // Limits are named in their errors.
    let config = tmp.path().join("c.toml");
    std::fs::write(&config, "store_cache = \"512KiB\"\n").unwrap();
    assert_fails(
        &run(&["--config", config.to_str().unwrap(), "session", "list"]),
        2,
        &["at least 1MiB"],
    );
    std::fs::write(&config, "threads = \"two\"\n").unwrap();
    assert_fails(
        &run(&["--config", config.to_str().unwrap(), "session", "list"]),
        2,
        &["line 1: threads = \"two\": expected a whole number from 1 to 256"],
    );
    assert_fails(
        &run(&["solve", "5x5", "--memory", "512KiB"]),
        2,
        &["smallest limit, 1MiB", "fanorona solve --help"],
    );
    let o = run(&["solve", "9x3", "--algo", "dfpn", "--memory", "1MiB"]);
    assert!(
        stdout(&o).contains("stopped when its tree or table reached --memory 1 MiB"),
        "{}",
        stdout(&o)
    );
    // Hints agree, and keep the user's directory.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let data = Data::new("");
    for o in [
        run(&["solve", "5x5", "--db", e, "--no-store"]),
        data.cmd(&["session", "start", "5x5", "--db", e]),
    ] {
        assert_fails(&o, 2, &[&format!("--board 5x5 --pieces 5 --db {e}")]);
    }
}

#[test]
fn every_argument_has_help() {
    for args in [
        &["show", "--help"][..],
        &["moves", "--help"],
        &["perft", "--help"],
        &["solve", "--help"],
        &["verify", "--help"],
        &["session", "start", "--help"],
        &["session", "status", "--help"],
        &["session", "tail", "--help"],
        &["session", "curve", "--help"],
        &["session", "certificate", "--help"],
        &["rote", "export", "--help"],
        &["db", "build", "--help"],
        &["db", "probe", "--help"],
        &["db", "stats", "--help"],
        &["bench", "--help"],
        &["bench", "solvers", "--help"],
        &["bench", "store", "--help"],
    ] {
        let text = stdout(&run(args));
        let lines: Vec<&str> = text.lines().collect();
        let mut section = "";
        for (i, line) in lines.iter().enumerate() {
            if line.ends_with(':') && !line.starts_with(' ') {
                section = line;
                continue;
            }
            let item = line.trim_start();
            if !matches!(section, "Arguments:" | "Options:")
                || item.starts_with("- ")
                || !(item.starts_with('-') || item.starts_with('<') || item.starts_with('['))
                || !line.starts_with("  ")
                || line.len() - item.len() > 6
            {
                continue;
            }
            // The argument, then its help after two or more spaces, or on the next line
            // (clap's long form).
            let same_line = item
                .split_once("  ")
                .is_some_and(|(_, help)| !help.trim().is_empty());
            let next_line = lines.get(i + 1).is_some_and(|next| {
                let indent = |l: &str| l.len() - l.trim_start().len();
                indent(next) > indent(line) && !next.trim().is_empty()
            });
            assert!(same_line || next_line, "{args:?}: no help for '{item}'");
        }
    }
}

#[test]
fn a_position_the_tables_decide_gets_their_best_move_from_solve() {
    let tmp = tempfile::tempdir().unwrap();
    build_tables(tmp.path());
    let db = tmp.path().to_str().unwrap();
    // White, one against two, loses whatever it plays: solve decides it without a search,
    // and its best move is the tables' (the longest defence, here the last of four).
    let pos = "B...B/..W../..... w";
    let probe = run(&["db", "probe", pos, "--db", db, "--json"]);
    assert!(probe.status.success(), "{}", stderr(&probe));
    let probe: Value = serde_json::from_slice(&probe.stdout).unwrap();
    let best = probe["best_move"].as_str().expect("the tables' best move");
    let o = run(&["solve", pos, "--db", db, "--no-store", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(probe["value"], "loss");
    assert_eq!(v["value"], "black");
    assert_eq!(v["best_move"], best, "{v}");
    assert_eq!(v["nodes"], 0, "{v}");
}

#[test]
fn read_only_commands_do_not_make_a_mistyped_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("typo");
    let dir = missing.to_str().unwrap();
    assert_fails(
        &run(&["--data-dir", dir, "rote", "stats"]),
        2,
        &["typo: no such data directory"],
    );
    assert_fails(
        &run(&["--data-dir", dir, "session", "status", "1"]),
        2,
        &["no such data directory"],
    );
    // Nor is it listed as empty: it holds no store.
    assert_fails(
        &run(&["--data-dir", dir, "session", "list"]),
        2,
        &["typo: no such data directory, so no session store"],
    );
    // Nor has it a rote store to read: players play without one.
    let o = run(&[
        "--data-dir",
        dir,
        "play",
        "3x3",
        "--white",
        "perfect",
        "--black",
        "random",
        "--rote",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rote store: 0 entries"),
        "{}",
        stderr(&o)
    );
    assert!(!missing.exists());
    // perft walks a line a move at a time: a depth no count could reach is refused.
    assert_fails(
        &run(&["perft", "3x3", "--depth", "20000"]),
        2,
        &["20000 is not in 0..=1000"],
    );
}

/// `db verify --json` over damaged tables reads back as its typed report, the failure folded
/// in beside it: every slice up to the largest in its place, the damaged one and those whose
/// successors it holds as unreadable (each saying why), the others checked whole.
#[test]
fn db_verify_json_reads_back_as_its_report() {
    use fanorona::egdb::report::{CheckedRow, TablesChecked};

    let tmp = tempfile::tempdir().unwrap();
    build_tables(tmp.path());
    damage(&tmp.path().join("3x5/1-2.wdl"));
    let d = tmp.path().to_str().unwrap();
    let o = run(&["db", "verify", "--board", "3x5", "--db", d, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: TablesChecked = serde_json::from_slice(&o.stdout).unwrap();
    let failure: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(failure["exit_code"], 1);
    let error = failure["error"].as_str().unwrap();
    assert!(error.contains("slice 1-2 damaged"), "{error}");
    let slices: Vec<String> = report
        .slices
        .iter()
        .map(|r| match r {
            CheckedRow::Checked(c) => c.slice.to_string(),
            CheckedRow::Unreadable(u) => u.slice.to_string(),
        })
        .collect();
    assert_eq!(slices, ["1-1", "2-1", "1-2", "3-1", "2-2", "1-3"]);
    let mut unread = Vec::new();
    for row in &report.slices {
        match row {
            CheckedRow::Unreadable(u) if u.slice.to_string() == "1-2" => {
                assert!(u.error.starts_with("DAMAGED"), "{}", u.error);
                unread.push(u.slice.to_string());
            }
            CheckedRow::Unreadable(u) => {
                assert!(u.error.contains("successors in slice 1-2"), "{}", u.error);
                unread.push(u.slice.to_string());
            }
            CheckedRow::Checked(c) => {
                assert_eq!((c.errors, c.sampled, c.positions), (0, false, c.entries))
            }
        }
    }
    assert_eq!(unread, ["2-1", "1-2", "2-2"]);
    assert_eq!(report.errors, 0);
}

#[test]
fn session_curve_names_every_output_and_refuses_a_plot_under_another_formats_name() {
    let data = Data::new("log_level = \"warn\"\n");
    let o = data.cmd(&["session", "curve", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for flag in ["--csv", "--png", "--svg"] {
        assert!(stderr(&o).contains(flag), "{}", stderr(&o));
    }
    let jpg = data.tmp.path().join("c.jpg");
    let o = data.cmd(&["session", "curve", "1", "--png", jpg.to_str().unwrap()]);
    common::assert_fails(&o, 2, &["c.jpg", "ending in .png"]);
    assert!(!jpg.exists());
}

#[test]
fn tail_follow_on_a_solved_session_says_it_is_solved() {
    let data = Data::new("log_level = \"warn\"\n");
    data.json(&["solve", "3x3", "--json"]);
    let o = data.cmd(&["session", "tail", "1", "--follow"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("value: white"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("session 1 is solved: nothing more will come"),
        "{}",
        stderr(&o)
    );
    // Without --follow, the lines alone.
    let o = data.cmd(&["session", "tail", "1"]);
    assert!(!stderr(&o).contains("nothing more"), "{}", stderr(&o));
}
