//! Backups of the store: one taken through the running daemon while a session searches,
//! restored into another data directory where the session finishes with the same value; a
//! damaged store restored from the daemon's own backup when it starts; the refusals.

use crate::common;

use common::{Data, assert_fails, settled};

const CONFIG: &str =
    "second_level = \"3000\"\ncheckpoint_interval = \"40ms\"\nlog_level = \"warn\"\nthreads = 2\n";

fn checkpoints(s: &serde_json::Value) -> u64 {
    s["checkpoints"].as_u64().unwrap()
}

#[test]
fn a_backup_taken_under_the_daemon_finishes_elsewhere_with_the_same_value() {
    let here = Data::new(CONFIG);
    let reference = here.json(&["solve", "3x9", "--no-store", "--algo", "pn2", "--json"]);
    let daemon = here.daemon();
    let id = here.json(&["session", "start", "3x9", "--json"])["id"]
        .as_u64()
        .unwrap();
    here.wait_for(id, "two checkpoints", |s| checkpoints(s) >= 2);
    let backup = here.tmp.path().join("backup");
    let taken = here.json(&["store", "backup", backup.to_str().unwrap(), "--json"]);
    let mark = &taken["manifest"]["sessions"][0];
    assert_eq!(mark["id"], id, "{taken}");
    // Taken while the session ran: the backup holds it unsolved.
    assert_eq!(mark["state"], "running", "{taken}");
    assert!(backup.join("backup.json").is_file());
    // A second backup into the same directory is refused, the first kept.
    let again = here.cmd(&["store", "backup", backup.to_str().unwrap()]);
    assert_fails(&again, 2, &["is not empty"]);
    let done = here.wait_for(id, "the solve", settled);
    assert_eq!(done["value"], reference["value"]);
    // The status says what backups the daemon keeps.
    assert_eq!(done["backups"]["count"], 0, "{done}");
    drop(daemon);

    // Elsewhere: restored, the session resumes from the backup's checkpoint under a daemon
    // there and finishes with the same value.
    let there = Data::new(CONFIG);
    let restored = there.json(&["store", "restore", backup.to_str().unwrap(), "--json"]);
    assert_eq!(restored["set_aside"], serde_json::Value::Null, "{restored}");
    let status = there.status(id);
    assert_eq!(checkpoints(&status), mark["checkpoints"].as_u64().unwrap());
    let _daemon = there.daemon();
    let finished = there.wait_for(id, "the solve there", settled);
    assert_eq!(finished["value"], reference["value"], "{finished}");
    assert_eq!(finished["goals"][0]["verified"], true, "{finished}");
}

#[test]
fn a_store_that_will_not_open_is_restored_from_the_daemons_backup_at_its_start() {
    // A backup a minute: the test takes one itself, where the daemon would.
    let data = Data::new(&format!("{CONFIG}backup_every = \"1m\"\n"));
    let id = data.json(&["session", "start", "3x3", "--json"])["id"]
        .as_u64()
        .unwrap();
    let backups = data.dir.join("backups");
    data.json(&[
        "store",
        "backup",
        backups.join("backup-1").to_str().unwrap(),
        "--json",
    ]);
    // The store's files replaced by garbage.
    let store = data.dir.join("store");
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("db"), vec![0xA5; 1 << 16]).unwrap();
    std::fs::write(store.join("conf"), b"garbage").unwrap();
    // Without a daemon, the damage is said in one line, with the way out.
    let o = data.cmd(&["session", "list"]);
    assert_fails(&o, 1, &["damaged", "store restore"]);
    let _daemon = data.daemon();
    let s = data.wait_for(id, "the solve after the restore", settled);
    let reference = data.json(&["solve", "3x3", "--no-store", "--json"]);
    assert_eq!(s["value"], reference["value"], "{s}");
    let aside = std::fs::read_dir(&data.dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("store.before-restore")
        })
        .count();
    assert_eq!(aside, 1, "the damaged store is kept");
}

#[test]
fn a_restore_refuses_what_is_not_a_whole_backup_and_a_running_daemon() {
    let data = Data::new(CONFIG);
    let empty = data.tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = data.cmd(&["store", "restore", empty.to_str().unwrap()]);
    assert_fails(&o, 2, &["not a whole backup"]);
    data.json(&["session", "start", "3x3", "--json"]);
    let backup = data.tmp.path().join("b");
    data.json(&["store", "backup", backup.to_str().unwrap(), "--json"]);
    let _daemon = data.daemon();
    let o = data.cmd(&["store", "restore", backup.to_str().unwrap()]);
    assert_fails(&o, 2, &["in use by process"]);
}

/// The record file of session `id` holding the most bytes (a record file begins with its
/// magic, the key's length, the value's length and checksum, then the key, whose first 8
/// bytes are the session's id).
fn largest_record_file_of(store: &std::path::Path, id: u64) -> std::path::PathBuf {
    std::fs::read_dir(store.join("records"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let b = std::fs::read(p).unwrap();
            b.len() >= 32 && b[24..32] == id.to_be_bytes()
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("a record file of the session")
}

#[test]
fn a_damaged_session_goes_on_from_the_daemons_backup_and_the_other_never_stops() {
    let data = Data::new(CONFIG);
    let reference = data.json(&["solve", "3x9", "--no-store", "--algo", "pn2", "--json"]);
    let backups = data.dir.join("backups");
    let ids: Vec<u64>;
    let (before, mark): (u64, u64);
    {
        let _daemon = data.daemon();
        let start = |extra: &[&str]| {
            let mut args = vec!["session", "start", "3x9", "--json"];
            args.extend_from_slice(extra);
            let id = data.json(&args)["id"].as_u64().unwrap();
            data.wait_for(id, "two checkpoints", |s| checkpoints(s) >= 2);
            data.json(&["session", "pause", &id.to_string(), "--json"]);
            id
        };
        ids = vec![start(&[]), start(&["--second-level", "50"])];
        let taken = data.json(&[
            "store",
            "backup",
            backups.join("backup-1").to_str().unwrap(),
            "--json",
        ]);
        mark = taken["manifest"]["sessions"][0]["checkpoints"]
            .as_u64()
            .unwrap();
        // The first goes on past the backup, then waits paused.
        let id = ids[0].to_string();
        let at = checkpoints(&data.status(ids[0]));
        data.json(&["session", "resume", &id, "--json"]);
        data.wait_for(ids[0], "two more checkpoints", |s| checkpoints(s) >= at + 2);
        data.json(&["session", "pause", &id, "--json"]);
        data.wait_for(ids[0], "the pause", |s| s["state"] == "paused");
    }
    // As the store holds it, the daemon stopped.
    before = checkpoints(&data.status(ids[0]));
    // A byte of the first session's largest record file changed, the daemon stopped.
    let file = largest_record_file_of(&data.dir.join("store"), ids[0]);
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 0x10;
    std::fs::write(&file, bytes).unwrap();
    for id in &ids {
        data.json(&["session", "resume", &id.to_string(), "--json"]);
    }
    let _daemon = data.daemon();
    for &id in &ids {
        let s = data.wait_for(id, "the solve", settled);
        assert_eq!(s["value"], reference["value"], "{s}");
        assert_eq!(s["error"], serde_json::Value::Null, "{s}");
    }
    // The damaged one was put back from the backup, losing the checkpoints after it; its log
    // says so.
    let log =
        std::fs::read_to_string(data.dir.join(format!("logs/session-{}.jsonl", ids[0]))).unwrap();
    let put_back = log
        .lines()
        .find(|l| l.contains("\"put back\""))
        .unwrap_or_else(|| panic!("no put back in the session's log:\n{log}"));
    // At least the checkpoints since the backup (its other question, whose tree reads
    // whole, may checkpoint once more before the damage is met).
    let lost: u64 = put_back
        .split(": ")
        .last()
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{put_back}"));
    assert!(
        (before - mark..=before - mark + 2).contains(&lost),
        "{put_back} ({before} checkpoints then, {mark} in the backup)"
    );
    let other =
        std::fs::read_to_string(data.dir.join(format!("logs/session-{}.jsonl", ids[1]))).unwrap();
    assert!(
        !other.contains("\"put back\""),
        "the other session was left alone"
    );
}
