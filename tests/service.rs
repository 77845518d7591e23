//! The daemon run as a service for a week: the settings named once in the environment,
//! sessions deleted and renamed, and a directory with no store named as such.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{BIN, Data, stderr};
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

/// Exit status `code` and one line on stderr containing every one of `says`.
fn assert_fails(o: &Output, code: i32, says: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for s in says {
        assert!(err.contains(s), "'{s}' in: {err}");
    }
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
