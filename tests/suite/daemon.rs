//! The solve-session daemon as a user drives it: start, status, pause, resume, stop, kill -9
//! and restart, SIGTERM, and the faults it must refuse cleanly.

use crate::common;

use std::path::Path;

use common::{Data, settled, stderr};
use serde_json::Value;

fn checkpoints(s: &Value) -> u64 {
    s["checkpoints"].as_u64().unwrap()
}

/// Checks the curve file: iterations 1, 2, 3, ... per goal with no gap or repeat, nodes and
/// seconds never going back, and the last point decided.
fn assert_continuous(csv: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("iteration,nodes,seconds,root_pn,root_dpn,goal")
    );
    let mut last: Option<(u64, u64, f64, String)> = None;
    let mut final_numbers = (1, 1);
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let (it, nodes, secs): (u64, u64, f64) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        match &last {
            Some((pit, pn, ps, g)) if *g == f[5] => {
                assert_eq!(it, pit + 1, "iterations continue: {l}");
                assert!(nodes >= *pn && secs >= *ps, "work never goes back: {l}");
            }
            _ => assert_eq!(it, 1, "each goal's curve starts at iteration 1: {l}"),
        }
        // Numbers or "inf" (never the sentinel's digits).
        let number = |t: &str| {
            if t == "inf" {
                u64::MAX
            } else {
                t.parse::<u64>().unwrap()
            }
        };
        assert!(!l.contains("9223372036854775807"), "{l}");
        final_numbers = (number(f[3]), number(f[4]));
        last = Some((it, nodes, secs, f[5].to_string()));
    }
    assert!(last.is_some(), "the curve has points");
    assert!(
        final_numbers == (0, u64::MAX) || final_numbers == (u64::MAX, 0),
        "the curve ends decided: {final_numbers:?}"
    );
}

/// The kill-and-resume drill: SIGKILL after several checkpoints, restart, and the same value
/// as an uninterrupted solve, with a continuous curve.
#[test]
fn kill_9_at_several_points_then_resume_to_the_same_value() {
    let data = Data::new(
        "second_level = \"3000\"\ncheckpoint_interval = \"40ms\"\nlog_level = \"warn\"\nthreads = 2\n",
    );
    let reference = data.json(&["solve", "3x9", "--no-store", "--algo", "pn2", "--json"]);
    let daemon = data.daemon();
    let id = data.json(&["session", "start", "3x9", "--json"])["id"]
        .as_u64()
        .unwrap();
    let mut daemon = Some(daemon);
    let mut kills = 0;
    for kill_after in [2, 5, 9] {
        let s = data.wait_for(id, "a checkpoint", |s| {
            checkpoints(s) >= kill_after || s["state"] == "solved"
        });
        if s["state"] == "solved" {
            break;
        }
        daemon.take().unwrap().kill9();
        kills += 1;
        // Killed: nothing solves it until a daemon starts again.
        let after = data.status(id);
        assert_eq!(after["state"], "waiting", "{after}");
        assert!(checkpoints(&after) >= kill_after);
        daemon = Some(data.daemon());
    }
    assert!(kills >= 1, "the solve ended before the first kill");
    let s = data.wait_for(id, "the solve and its check", settled);
    assert_eq!(s["value"], reference["value"], "{s}");
    assert_eq!(s["goals"][0]["verified"], true, "{s}");
    let csv = data.dir.join("curve.csv");
    let png = data.dir.join("curve.png");
    data.json(&[
        "session",
        "curve",
        &id.to_string(),
        "--csv",
        csv.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
        "--json",
    ]);
    assert_continuous(&csv);
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    // For a paper: SVG alone (no CSV needed), of a given size, against nodes.
    let svg = data.dir.join("curve.svg");
    data.json(&[
        "session",
        "curve",
        &id.to_string(),
        "--svg",
        svg.to_str().unwrap(),
        "--size",
        "800x300",
        "--x",
        "nodes",
        "--json",
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let questions = s["goals"].as_array().unwrap().len();
    assert!(
        text.starts_with(&format!(
            "<svg width=\"800\" height=\"{}\"",
            300 * questions
        )),
        "{}",
        &text[..100]
    );
    assert!(
        text.contains("<polyline") || text.contains("<path"),
        "no line drawn"
    );
    // Thinned for publishing: at most about 10 points a question, the ends kept.
    let thin = data.dir.join("thin.csv");
    let all = data.json(&[
        "session",
        "curve",
        &id.to_string(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ])["points"]
        .as_u64()
        .unwrap();
    let few = data.json(&[
        "session",
        "curve",
        &id.to_string(),
        "--csv",
        thin.to_str().unwrap(),
        "--points",
        "10",
        "--json",
    ])["points"]
        .as_u64()
        .unwrap();
    assert!(few < all && few <= 2 * 11, "{few} of {all}");
    let (full, thinned) = (
        std::fs::read_to_string(&csv).unwrap(),
        std::fs::read_to_string(&thin).unwrap(),
    );
    assert_eq!(full.lines().last(), thinned.lines().last());
    assert_eq!(full.lines().nth(1), thinned.lines().nth(1));
    // An earlier run beside the session's own: its lines too, and its name in the legend.
    let both = data.dir.join("both.svg");
    data.json(&[
        "session",
        "curve",
        &id.to_string(),
        "--svg",
        both.to_str().unwrap(),
        "--x",
        "nodes",
        "--beside",
        thin.to_str().unwrap(),
        "--beside-label",
        "earlier",
        "--json",
    ]);
    let lines = |t: &str| t.matches("<polyline").count() + t.matches("<path").count();
    let beside = std::fs::read_to_string(&both).unwrap();
    assert!(
        lines(&beside) >= lines(&text) + 2 * questions,
        "no earlier lines"
    );
    assert!(
        beside.contains("proof, earlier"),
        "no legend for the earlier run"
    );
    // A file that is not a curve: named in one line, nothing written.
    let other = data.dir.join("other.svg");
    let o = data.cmd(&[
        "session",
        "curve",
        &id.to_string(),
        "--svg",
        other.to_str().unwrap(),
        "--beside",
        png.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("curve.png"), "{err}");
    assert!(!other.exists());
    // The log tells the story: resumed (each open question) after every kill, solved at the end.
    let log = std::fs::read_to_string(data.dir.join(format!("logs/session-{id}.jsonl"))).unwrap();
    let events: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let resumes = events.iter().filter(|e| *e == "resume").count();
    assert!((kills..=2 * kills).contains(&resumes), "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("solved"));
    // The record keeps where each question resumed, as the log saw it, for the curve to mark.
    let logged: std::collections::BTreeSet<(String, u64)> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "resume")
        .map(|l| {
            (
                l["goal"].as_str().unwrap().to_string(),
                l["iteration"].as_u64().unwrap(),
            )
        })
        .collect();
    let recorded: std::collections::BTreeSet<(String, u64)> = s["goals"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            let attacker = g["attacker"].as_str().unwrap().to_string();
            g["resumed_at"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |i| (attacker.clone(), i.as_u64().unwrap()))
        })
        .collect();
    assert_eq!(recorded, logged, "{s}");
    // The SVG marks them (orange lines, a legend entry) and names the search.
    assert!(text.contains("resumed"), "no resume marked");
    assert!(text.contains("search: pn2"), "the search is not named");
    drop(daemon);
}

/// SIGTERM: the daemon checkpoints the running session before it exits, even with a
/// checkpoint interval far longer than the run.
#[test]
fn sigterm_writes_a_final_checkpoint() {
    let data = Data::new("checkpoint_interval = \"1h\"\nlog_level = \"warn\"\nthreads = 2\n");
    let daemon = data.daemon();
    let id = data.json(&["session", "start", "9x3", "--json"])["id"]
        .as_u64()
        .unwrap();
    data.wait_for(id, "progress", |s| {
        s["progress"]["iteration"].as_u64().unwrap_or(0) > 0
    });
    assert_eq!(checkpoints(&data.status(id)), 0);
    assert!(daemon.sigterm().success());
    // Without the daemon the command reads the store itself: one final checkpoint for each
    // of the two questions being searched.
    let s = data.status(id);
    let goals = s["goals"].as_array().unwrap().clone();
    assert_eq!(goals.len(), 2, "{s}");
    assert_eq!(checkpoints(&s), 2, "{s}");
    assert_eq!(s["state"], "waiting", "a restart resumes it: {s}");
    let log = std::fs::read_to_string(data.dir.join(format!("logs/session-{id}.jsonl"))).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for g in &goals {
        let iterations = g["iterations"].as_u64().unwrap();
        assert!(iterations > 0);
        let last = lines
            .iter()
            .rev()
            .find(|l| l["goal"] == g["attacker"])
            .unwrap();
        assert_eq!(last["event"], "interrupted");
        assert_eq!(last["iteration"].as_u64(), Some(iterations), "nothing lost");
    }
    let iterations = goals[0]["iterations"]
        .as_u64()
        .unwrap()
        .max(goals[1]["iterations"].as_u64().unwrap());
    // What a killed certificate writer leaves (a file not renamed into place) is cleared
    // when the daemon starts again; finished certificates stay.
    let certs = data.dir.join("certificates").join("5x9");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::write(certs.join("x.white-wins.partial.cert.gz.tmp"), "half").unwrap();
    std::fs::write(certs.join("x.white-wins.open.jsonl.tmp"), "half").unwrap();
    std::fs::write(certs.join("y.black-wins.cert.gz"), "kept").unwrap();
    // A list whose partial certificate is gone is stale; one beside its certificate stays.
    std::fs::write(certs.join("z.white-wins.open.jsonl"), "stale").unwrap();
    std::fs::write(certs.join("w.white-wins.open.jsonl"), "kept").unwrap();
    std::fs::write(certs.join("w.white-wins.partial.cert.gz"), "kept").unwrap();
    // The restarted daemon resumes from there.
    let daemon = data.daemon();
    data.wait_for(id, "more iterations", |s| {
        s["progress"]["iteration"].as_u64().unwrap_or(0) > iterations
    });
    let mut left: Vec<_> = std::fs::read_dir(&certs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "w.white-wins.open.jsonl",
            "w.white-wins.partial.cert.gz",
            "y.black-wins.cert.gz"
        ]
    );
    drop(daemon);
}

#[test]
fn pause_resume_stop_and_the_faults_a_user_meets() {
    // One thread: the second session waits (with two, the spare worker could take it).
    let data = Data::new("log_level = \"warn\"\nthreads = 1\n");
    let daemon = data.daemon();
    // A second daemon on the same data directory names the holder.
    let o = data.cmd(&["daemon"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&daemon.child.id().to_string()),
        "{}",
        stderr(&o)
    );

    let id = data.json(&["session", "start", "9x3", "--name", "long one", "--json"])["id"]
        .as_u64()
        .unwrap();
    data.wait_for(id, "solving", |s| s["active"] == true);
    // A second session waits its turn, and says so.
    let queued = data.json(&["session", "start", "9x3", "--json"])["id"]
        .as_u64()
        .unwrap();
    assert_eq!(data.status(queued)["state"], "queued");
    data.json(&["session", "stop", &queued.to_string(), "--json"]);
    // Pause returns once the worker has checkpointed and let go.
    let s = data.json(&["session", "pause", &id.to_string(), "--json"]);
    assert_eq!(s["state"], "paused", "{s}");
    assert_eq!(s["active"], false, "{s}");
    assert!(checkpoints(&s) >= 1, "pausing checkpoints: {s}");
    let s = data.json(&["session", "resume", &id.to_string(), "--json"]);
    assert!(s["state"] == "queued" || s["state"] == "running", "{s}");
    data.wait_for(id, "solving again", |s| s["active"] == true);
    let s = data.json(&["session", "stop", &id.to_string(), "--json"]);
    assert_eq!(s["state"], "stopped");
    let list = data.json(&["session", "list", "--json"]);
    assert_eq!(list[0]["name"], "long one");
    // A stopped session takes a new second-level bound for its next resume; a running one
    // must be paused first.
    assert_eq!(list[0]["second_level"], "tree-size");
    let s = data.json(&[
        "session",
        "tune",
        &id.to_string(),
        "--second-level",
        "max(5000,tree/100)",
        "--json",
    ]);
    assert_eq!(
        (&s["state"], &s["second_level"]),
        (&"stopped".into(), &"max(5000,tree/100)".into())
    );
    // Its leaves' first numbers (new sessions take the config's, material by default).
    assert_eq!(s["init"], "material", "{s}");
    let s = data.json(&[
        "session",
        "tune",
        &id.to_string(),
        "--init",
        "mobility",
        "--json",
    ]);
    assert_eq!(
        (&s["init"], &s["second_level"]),
        (&"mobility".into(), &"max(5000,tree/100)".into())
    );
    let o = data.cmd(&["session", "tune", &id.to_string(), "--init", "eval"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // And other tables, if they are whole and decide all the old ones did.
    let tables = tempfile::tempdir().unwrap();
    let t = tables.path().to_str().unwrap();
    let o = data.cmd(&["session", "tune", &id.to_string(), "--db", t]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("db build"), "{}", stderr(&o));
    let build = |pieces: &str, dir: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fanorona"))
            .args([
                "db", "build", "--board", "9x3", "--pieces", pieces, "--db", dir,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    for pieces in ["3", "4"] {
        build(pieces, t);
        let s = data.json(&["session", "tune", &id.to_string(), "--db", t, "--json"]);
        assert_eq!(s["db_dir"], t, "{s}");
    }
    let fewer = tempfile::tempdir().unwrap();
    let f = fewer.path().to_str().unwrap();
    build("3", f);
    let o = data.cmd(&["session", "tune", &id.to_string(), "--db", f]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fewer than the session's 4"),
        "{}",
        stderr(&o)
    );
    assert_eq!(data.status(id)["db_dir"], t);
    let busy = data.json(&["session", "start", "9x3", "--second-level", "700", "--json"])["id"]
        .as_u64()
        .unwrap();
    assert_eq!(data.status(busy)["second_level"], "700");
    data.wait_for(busy, "solving", |s| s["active"] == true);
    let o = data.cmd(&["session", "tune", &busy.to_string(), "--second-level", "9"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("pause it first"), "{}", stderr(&o));
    data.json(&["session", "stop", &busy.to_string(), "--json"]);

    // Unknown sessions, bad targets, pausing a stopped session: bad input, exit 2.
    for (args, msg) in [
        (vec!["session", "status", "99"], "no session 99"),
        (vec!["session", "start", "4x4"], "unsupported board"),
        (vec!["session", "start", "BBB/.../... w"], "already decided"),
        (vec!["session", "pause", &id.to_string()], "is stopped"),
    ] {
        let o = data.cmd(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
    drop(daemon);

    // A malformed config key is named with its line.
    let bad = Data::new("log_level = \"info\"\ncheckpoint_interval = \"soon\"\n");
    let o = bad.cmd(&["session", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("checkpoint_interval") && stderr(&o).contains("line 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn damaged_and_foreign_stores_are_refused_and_left_alone() {
    let data = Data::new("log_level = \"warn\"\n");
    // Bad input writes nothing: no data directory appears.
    let o = data.cmd(&["solve", "5x5", "--db", "/nonexistent-tables"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!data.dir.exists());
    let v = data.json(&["solve", "3x5", "--json"]);
    assert_eq!(v["value"], "white");
    // Replace the store's data file: refused, and the file is not rewritten.
    let db = data.dir.join("store/db");
    std::fs::write(&db, vec![0xA5; 100_000]).unwrap();
    let o = data.cmd(&["session", "list"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("damaged"), "{}", stderr(&o));

    // A sled store of another program.
    let other = Data::new("");
    {
        let store =
            fanorona::session::store::SledStore::open(&other.dir.join("store"), 1 << 20).unwrap();
        use fanorona::session::store::{Store, Table, Write};
        store
            .apply(&[Write::put(Table::Sessions, b"x".to_vec(), b"y".to_vec())])
            .unwrap();
    }
    let o = other.cmd(&["session", "list"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("not a fanorona session store"),
        "{}",
        stderr(&o)
    );
}

/// Rote learning: another solve of the same board (by another algorithm, so another
/// session) is answered from the rote store; the same solve again reports its session.
#[test]
fn a_second_solve_is_answered_by_the_rote_store() {
    let data = Data::new("log_level = \"warn\"\n");
    let first = data.json(&["solve", "7x3", "--json"]);
    let again = data.json(&["solve", "7x3", "--json"]);
    assert_eq!(again["solved_before"], true);
    assert_eq!(again["session"], first["session"]);
    assert_eq!(again["nodes"], first["nodes"]);
    assert_eq!(
        data.json(&["session", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let second = data.json(&["solve", "7x3", "--algo", "pn", "--json"]);
    assert_eq!(second["solved_before"], false);
    assert_ne!(second["session"], first["session"]);
    assert_eq!(first["value"], second["value"]);
    assert_eq!(first["best_move"], second["best_move"]);
    assert!(first["nodes"].as_u64().unwrap() > 10_000);
    assert!(second["nodes"].as_u64().unwrap() < first["nodes"].as_u64().unwrap() / 100);
    assert!(second["rote_hits"].as_u64().unwrap() >= 1);
    assert_eq!(second["verified"], true);
    let stats = data.json(&["rote", "stats", "--json"]);
    assert!(stats["entries"].as_u64().unwrap() > 0);
    assert!(stats["hits"].as_u64().unwrap() >= 1);
    let out = data.dir.join("rote.jsonl");
    data.json(&["rote", "export", out.to_str().unwrap(), "--json"]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.lines().count() as u64,
        stats["entries"].as_u64().unwrap()
    );
    let s = data.status(second["session"].as_u64().unwrap());
    assert!(s["rote_hits"].as_u64().unwrap() >= 1, "{s}");
    // The progress log: `tail --follow` ends at the result; the plain form is readable.
    let id = first["session"].as_u64().unwrap().to_string();
    let o = data.cmd(&["session", "tail", &id, "-n", "all", "--follow", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["event"], "start");
    assert_eq!(lines.last().unwrap()["event"], "solved");
    let o = data.cmd(&["session", "tail", &id]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("solved"));
    let o = data.cmd(&["session", "tail", "77"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Its proof is the rote entry itself, taken as given rather than re-solved.
    assert_eq!(s["goals"][0]["rote_leaves"], 1, "{s}");
}

#[test]
fn the_spare_worker_solves_the_next_session_on_the_idle_thread() {
    // Two sessions made with one thread ask one question at a time; a daemon with two threads
    // runs the first on its worker and, since that searches one question alone, the second on
    // the spare worker; when the first needs both threads again, the spare hands its back.
    let data = Data::new("log_level = \"warn\"\nthreads = 1\ncheckpoint_interval = \"1h\"\n");
    let a = data.json(&["session", "start", "5x9", "--name", "first", "--json"])["id"]
        .as_u64()
        .unwrap();
    let b = data.json(&["session", "start", "5x9", "--name", "second", "--json"])["id"]
        .as_u64()
        .unwrap();
    std::fs::write(
        &data.config,
        "log_level = \"warn\"\nthreads = 2\ncheckpoint_interval = \"1h\"\n",
    )
    .unwrap();
    let daemon = data.daemon();
    data.wait_for(a, "the first on the worker", |s| s["state"] == "running");
    let s = data.wait_for(b, "the second on the spare", |s| {
        s["state"] == "running" && s["live"].as_array().is_some_and(|l| !l.is_empty())
    });
    assert_eq!(
        s["live"].as_array().unwrap().len(),
        1,
        "one question at a time: {s}"
    );
    // Both solve at once: each one's nodes grow.
    let nodes = |id: u64| -> u64 { data.status(id)["live"][0]["nodes"].as_u64().unwrap_or(0) };
    let (na, nb) = (nodes(a), nodes(b));
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(nodes(a) > na && nodes(b) > nb, "both must progress");
    // Sessions keep their age order: with the first paused, the worker takes the second back
    // from the spare (checkpointed there, resumed here), and the spare takes a third, one
    // question at a time although it was made to ask both at once.
    let c = data.json(&["session", "start", "5x9", "--name", "third", "--json"])["id"]
        .as_u64()
        .unwrap();
    data.json(&["session", "pause", &a.to_string(), "--json"]);
    let s = data.wait_for(c, "the third on the spare", |s| {
        s["state"] == "running" && s["live"].as_array().is_some_and(|l| l.len() == 1)
    });
    assert_eq!(s["goals"].as_array().unwrap().len(), 2, "{s}");
    let s = data.wait_for(b, "the second on the worker", |s| s["state"] == "running");
    assert!(checkpoints(&s) >= 1, "handing over checkpoints: {s}");
    // With the second paused too, the worker wants the third and both threads for it.
    data.json(&["session", "pause", &b.to_string(), "--json"]);
    data.wait_for(c, "the third on both threads", |s| {
        s["state"] == "running" && s["live"].as_array().is_some_and(|l| l.len() == 2)
    });
    // Shutdown checkpoints whatever runs.
    assert!(daemon.sigterm().success());
}

#[test]
fn session_moves_shows_where_each_question_stands_below_the_root() {
    // 3x5 is a White win (the paper's Table 4), solved here as a session without a daemon.
    let data = Data::new("log_level = \"warn\"\nthreads = 1\n");
    let v = data.json(&["solve", "3x5", "--json"]);
    assert_eq!(v["value"], "white");
    let v = data.json(&["session", "moves", "1", "--json"]);
    let questions = v["questions"].as_array().unwrap();
    let white = &questions[0];
    assert_eq!(white["attacker"], "white");
    assert_eq!(white["outcome"], "proven");
    let moves = white["moves"].as_array().unwrap();
    // Every legal move of the 3x5 start, in notation, and the subtrees fill the tree.
    let legal = std::process::Command::new(common::data::BIN)
        .args(["moves", "--board", "3x5"])
        .output()
        .unwrap();
    let legal = String::from_utf8_lossy(&legal.stdout).to_string();
    assert_eq!(moves.len(), legal.lines().count());
    for m in moves {
        assert!(legal.lines().any(|l| l == m["move"]), "{m}");
    }
    let below: u64 = moves.iter().map(|m| m["nodes"].as_u64().unwrap()).sum();
    assert_eq!(below + 1, white["first_level"].as_u64().unwrap());
    // The proof goes through the best move the solve reported.
    let best = data.json(&["solve", "3x5", "--json"])["best_move"].clone();
    assert!(
        moves.iter().any(|m| m["move"] == best && m["pn"] == 0),
        "{v}"
    );
    // Down the best move: its numbers and nodes, its replies summing to its subtree, and the
    // heaviest line from it getting lighter at each step.
    let best = best.as_str().unwrap();
    let v = data.json(&[
        "session",
        "moves",
        "1",
        "--line",
        best,
        "--heaviest",
        "--json",
    ]);
    let white = &v["questions"][0];
    assert_eq!(white["reached"], "node", "{v}");
    let top = moves.iter().find(|m| m["move"] == best).unwrap();
    assert_eq!(white["at"]["move"], best);
    assert_eq!(white["at"]["nodes"], top["nodes"]);
    assert_eq!(white["at"]["pn"], 0);
    let replies = white["moves"].as_array().unwrap();
    let below: u64 = replies.iter().map(|m| m["nodes"].as_u64().unwrap()).sum();
    assert_eq!(below + 1, top["nodes"].as_u64().unwrap());
    // After White's winning move every Black reply is proven (an AND node).
    assert!(replies.iter().all(|m| m["pn"] == 0), "{v}");
    let line: Vec<u64> = white["heaviest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["nodes"].as_u64().unwrap())
        .collect();
    assert!(
        !line.is_empty() && line.windows(2).all(|w| w[0] > w[1]),
        "{line:?}"
    );
    assert_eq!(
        line[0],
        replies
            .iter()
            .map(|m| m["nodes"].as_u64().unwrap())
            .max()
            .unwrap()
    );
    // By pieces on the board: every node of the tree once, the root's 14 pieces the most.
    let v = data.json(&["session", "moves", "1", "--pieces", "--json"]);
    let pieces = v["questions"][0]["pieces"].as_array().unwrap();
    let counted: u64 = pieces.iter().map(|p| p["nodes"].as_u64().unwrap()).sum();
    assert_eq!(counted, v["questions"][0]["first_level"].as_u64().unwrap());
    assert_eq!(pieces.last().unwrap()["pieces"], 14);
    let o = data.cmd(&["session", "moves", "1", "--line", &format!("{best} a1-a9")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("move 2 'a1-a9'"), "{}", stderr(&o));
    let o = data.cmd(&["session", "moves", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no session 9"), "{}", stderr(&o));
}

#[test]
fn a_decided_move_of_an_open_or_solved_question_gets_its_own_certificate() {
    // 3x5 is a White win (the paper's Table 4): in "White wins?" the winning move is proven.
    let data = Data::new("log_level = \"warn\"\nthreads = 1\n");
    let best = data.json(&["solve", "3x5", "--json"])["best_move"]
        .as_str()
        .unwrap()
        .to_string();
    let moves = data.json(&["session", "moves", "1", "--json"]);
    let white = &moves["questions"][0];
    assert!(
        white["moves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["move"] == best.as_str() && m["pn"] == 0)
    );
    let prefix = data.tmp.path().join("after");
    let v = data.json(&[
        "session",
        "certificate",
        "1",
        prefix.to_str().unwrap(),
        "--move",
        &best,
        "--json",
    ]);
    let certs = v["certificates"].as_array().unwrap();
    let white = certs.iter().find(|c| c["goal"] == "white wins").unwrap();
    assert_eq!(
        (&white["claim"], &white["verified"]),
        (&"proven".into(), &true.into())
    );
    // The file stands alone: `verify` reads it from the position after the move.
    let shown = std::process::Command::new(common::data::BIN)
        .args(["show", "--board", "3x5", "--play", &best])
        .output()
        .unwrap();
    let after = String::from_utf8_lossy(&shown.stdout)
        .lines()
        .find(|l| l.ends_with(" b") || l.ends_with(" w"))
        .unwrap()
        .to_string();
    let checked = std::process::Command::new(common::data::BIN)
        .args(["verify", white["path"].as_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout).to_string();
    assert!(checked.status.success(), "{out}");
    assert!(
        out.contains(&format!("white wins proven from {after}")),
        "{out}"
    );
    let o = data.cmd(&[
        "session",
        "certificate",
        "1",
        prefix.to_str().unwrap(),
        "--move",
        "a1-a3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a legal move"), "{}", stderr(&o));
}

/// With the daemon running (it holds the store), certificates are written by the daemon on
/// request: a session's, and a decided move's; a bad move is still refused as bad input.
#[test]
fn the_running_daemon_writes_certificates_on_request() {
    // A re-decision budget of one node: every node re-solved for a certificate is left open
    // and then solved on its own and stitched in, so the certificates still come out whole.
    let data = Data::new("log_level = \"warn\"\nthreads = 1\ncertificate_leaf_budget = 1\n");
    let _daemon = data.daemon();
    let id = data.json(&["session", "start", "3x5", "--json"])["id"]
        .as_u64()
        .unwrap();
    data.wait_for(id, "the solve and its certificates", |s| {
        settled(s)
            && s["goals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["certificate_verified"] == true)
    });
    let best = data.json(&["session", "moves", &id.to_string(), "--json"])["questions"][0]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pn"] == 0)
        .unwrap()["move"]
        .as_str()
        .unwrap()
        .to_string();
    let prefix = data.tmp.path().join("after");
    let v = data.json(&[
        "session",
        "certificate",
        &id.to_string(),
        prefix.to_str().unwrap(),
        "--move",
        &best,
        "--json",
    ]);
    let certs = v["certificates"].as_array().unwrap();
    assert!(
        certs
            .iter()
            .any(|c| c["goal"] == "white wins" && c["claim"] == "proven" && c["verified"] == true),
        "{v}"
    );
    let path = certs[0]["path"].as_str().unwrap();
    assert!(std::path::Path::new(path).is_file(), "{path}");
    assert!(
        certs
            .iter()
            .all(|c| c["open_leaves"] == 0 && c["closed_leaves"].as_u64() > Some(0)),
        "{v}"
    );
    // The session's own certificates, copied out while the daemon runs.
    let whole = data.tmp.path().join("whole");
    let v = data.json(&[
        "session",
        "certificate",
        &id.to_string(),
        whole.to_str().unwrap(),
        "--json",
    ]);
    let whole_certs = v["certificates"].as_array().unwrap();
    assert_eq!(whole_certs.len(), 2, "{v}");
    // The daemon's own, written when the session was solved: whole, nothing left beside.
    let mut files: Vec<String> = std::fs::read_dir(data.dir.join("certificates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            format!("session-{id}.black-wins.cert.gz"),
            format!("session-{id}.white-wins.cert.gz")
        ]
    );
    // One of them lost: asking for the session's certificates writes that one again and
    // keeps the other, checked already, as it is (it was re-solved from nothing before).
    let own = |goal: &str| {
        data.dir
            .join("certificates")
            .join(format!("session-{id}.{goal}-wins.cert.gz"))
    };
    std::fs::remove_file(own("black")).unwrap();
    let kept = std::fs::metadata(own("white")).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let copy = data.tmp.path().join("copy");
    let o = data.cmd(&[
        "session",
        "certificate",
        &id.to_string(),
        copy.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(own("black").is_file());
    assert_eq!(
        std::fs::metadata(own("white")).unwrap().modified().unwrap(),
        kept
    );
    a_second_session_is_decided_by_the_first_ones_certificate(&data, id);
    let o = data.cmd(&[
        "session",
        "certificate",
        &id.to_string(),
        prefix.to_str().unwrap(),
        "--move",
        "a1-a3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a legal move"), "{}", stderr(&o));
}

/// A second session on the same root is decided by the rote store at its root: the first
/// session's (`id`) certificate holds it, so it is not re-solved from nothing, neither when
/// the session is solved nor on request (unless a leaf budget asks for it).
fn a_second_session_is_decided_by_the_first_ones_certificate(data: &Data, id: u64) {
    let again = data.json(&["session", "start", "3x5", "--json"])["id"]
        .as_u64()
        .unwrap();
    assert_ne!(again, id);
    let s = data.wait_for(again, "the second solve", settled);
    assert_eq!(s["goals"][0]["rote_leaves"], 1, "{s}");
    let o = data.cmd(&[
        "session",
        "certificate",
        &again.to_string(),
        data.tmp.path().join("again").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rote store at the root"),
        "{}",
        stderr(&o)
    );
    assert!(
        !data
            .dir
            .join("certificates")
            .join(format!("session-{again}.white-wins.cert.gz"))
            .exists()
    );
    let v = data.json(&[
        "session",
        "certificate",
        &again.to_string(),
        data.tmp.path().join("again").to_str().unwrap(),
        "--leaf-budget",
        "1000000",
        "--json",
    ]);
    assert!(
        v["certificates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["verified"] == true),
        "{v}"
    );
}

/// A name that does not print is refused, without a daemon and through one, and the refusal
/// does not echo it (an escape sequence would reach the terminal).
#[test]
fn a_session_name_that_does_not_print_is_refused() {
    let data = Data::new("log_level = \"warn\"\n");
    let refused = |data: &Data| {
        for (name, code) in [
            ("\u{1b}[31mred", "U+001B"),
            ("tab\there", "U+0009"),
            ("\u{202E}evil", "U+202E"),
        ] {
            let o = data.cmd(&["session", "start", "3x3", "--name", name]);
            assert_eq!(o.status.code(), Some(2), "{name:?}: {}", stderr(&o));
            let e = stderr(&o);
            assert_eq!(e.trim_end().lines().count(), 1, "{e}");
            assert!(e.contains(code) && !e.contains(name), "{e:?}");
        }
        assert_eq!(
            data.json(&["session", "list", "--json"]),
            serde_json::json!([])
        );
    };
    refused(&data);
    let _daemon = data.daemon();
    refused(&data);
    // A name that prints, in any script, is taken.
    let started = data.json(&["session", "start", "3x3", "--name", "3x3 — 三", "--json"]);
    let id = started["id"].as_u64().unwrap();
    assert_eq!(data.status(id)["name"], "3x3 — 三");
}

/// Hostile input on the socket: a request line of 100 MB is refused after 64 KiB (never held
/// whole), bytes that are not UTF-8 get an answer (not a closed connection), and the daemon
/// answers the next request as before.
#[test]
fn the_socket_bounds_a_request_and_answers_bad_bytes() {
    use std::io::{BufRead, BufReader, Write};
    let data = Data::new("log_level = \"warn\"\n");
    let _daemon = data.daemon();
    let ask = |payload: &[u8]| -> String {
        let s = std::os::unix::net::UnixStream::connect(data.dir.join("daemon.sock")).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        // The daemon may close the connection before it has read everything.
        let _ = (&s).write_all(payload);
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).unwrap();
        line
    };
    let mut huge = vec![b'x'; 100 << 20];
    huge.push(b'\n');
    let a = ask(&huge);
    assert!(a.contains("longer than 65536 bytes"), "{a}");
    let a = ask(b"\xff\xfe{}\n");
    assert!(a.contains("not UTF-8"), "{a}");
    let a = ask(b"{\"protocol\":1,\"request\":{\"command\":\"list\"}}\n");
    assert!(a.contains("\"ok\":true"), "{a}");
}

/// A kept certificate replaced by one of another question (the session's other one, or
/// another board's) is refused when handed out: named, exit 1, nothing written under the
/// prefix.
#[test]
fn a_certificate_of_another_question_is_not_handed_out_as_the_sessions() {
    let data = Data::new("log_level = \"warn\"\n");
    let id = data.json(&["session", "start", "3x3", "--json"])["id"]
        .as_u64()
        .unwrap();
    // Solved here, without a daemon: the solve resumes the session on the same problem.
    data.json(&["solve", "3x3", "--json"]);
    let s = data.status(id);
    assert_eq!(s["state"], "solved", "{s}");
    let kept = data.dir.join("certificates");
    let own = |goal: &str| kept.join(format!("session-{id}.{goal}-wins.cert.gz"));
    let out = data.tmp.path().join("out");
    let o = data.cmd(&[
        "session",
        "certificate",
        &id.to_string(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The other question's certificate in this one's place.
    std::fs::copy(own("black"), own("white")).unwrap();
    let swapped = data.tmp.path().join("swapped");
    let o = data.cmd(&[
        "session",
        "certificate",
        &id.to_string(),
        swapped.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        said.contains("black wins?") && said.contains("not of this session"),
        "{said}"
    );
    assert!(
        !data.tmp.path().join("swapped.white-wins.cert.gz").exists(),
        "nothing handed out under the prefix"
    );
}
