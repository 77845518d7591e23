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
