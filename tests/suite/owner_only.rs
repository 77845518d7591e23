//! The data directory is its owner's: made 0700 whatever the umask, tightened when found open,
//! and everything the daemon writes there (store, logs, certificates, socket) owner-only even
//! when it is started under umask 000.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{BIN, Daemon, Data, stderr};

/// The permission bits of `path` (not following a link).
fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o777
}

/// `fanorona ARGS` on `data`, run by a shell that sets umask 000 first.
fn under_umask_000(data: &Data, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", "umask 000; exec \"$@\"", "sh", BIN])
        .arg("--config")
        .arg(&data.config)
        .arg("--data-dir")
        .arg(&data.dir)
        .args(args);
    c
}

/// Waits until the daemon's socket answers.
fn wait_for_socket(data: &Data) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(data.dir.join("daemon.sock")).is_err() {
        assert!(Instant::now() < deadline, "the daemon did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every path under `dir`, itself included.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn under_umask_000_the_daemon_writes_nothing_another_user_may_read() {
    let data = Data::new("log_level = \"warn\"\n");
    // The modes the socket shows from the moment it appears: a chmod after bind would show
    // the wide one first.
    let watcher = {
        let socket = data.dir.join("daemon.sock");
        std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            let (deadline, mut after) = (Instant::now() + Duration::from_secs(30), 0);
            while after < 1000 && Instant::now() < deadline {
                match std::fs::symlink_metadata(&socket) {
                    Ok(m) => {
                        seen.insert(m.mode() & 0o777);
                        after += 1;
                    }
                    Err(_) => std::thread::yield_now(),
                }
            }
            seen
        })
    };
    let child = under_umask_000(&data, &["daemon"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _daemon = Daemon { child };
    wait_for_socket(&data);
    // A session solved: its store records, progress log and certificates written.
    let started = data.json(&["session", "start", "3x3", "--json"]);
    let id = started["id"].as_u64().unwrap();
    data.wait_for(id, "the session to be solved", |s| s["state"] == "solved");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !data.dir.join("certificates").is_dir() {
        assert!(Instant::now() < deadline, "no certificate written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = watcher.join().unwrap();
    assert!(!seen.is_empty(), "the socket was never seen");
    assert!(
        seen.iter().all(|m| m & 0o077 == 0),
        "the socket was open to others at some moment: modes {:?}",
        seen.iter().map(|m| format!("{m:o}")).collect::<Vec<_>>()
    );
    assert_eq!(mode(&data.dir), 0o700);
    let paths = walk(&data.dir);
    for kind in [
        "store",
        "logs",
        "certificates",
        "daemon.lock",
        "daemon.sock",
    ] {
        assert!(
            paths.iter().any(|p| p.starts_with(data.dir.join(kind))),
            "no {kind} in {paths:?}"
        );
    }
    // (A certificate writer's temporary files may vanish between the listing and the look.)
    let open: Vec<_> = paths
        .iter()
        .filter_map(|p| {
            let m = std::fs::symlink_metadata(p).ok()?.mode() & 0o777;
            (m & 0o077 != 0).then(|| format!("{} {m:o}", p.display()))
        })
        .collect();
    assert!(open.is_empty(), "open to group or others: {open:?}");
}

#[test]
fn an_open_data_directory_is_tightened_at_start_and_the_log_says_so() {
    let data = Data::new("log_level = \"info\"\n");
    std::fs::create_dir(&data.dir).unwrap();
    std::fs::set_permissions(&data.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = data.tmp.path().join("daemon.log");
    let child = Command::new(BIN)
        .arg("--config")
        .arg(&data.config)
        .arg("--data-dir")
        .arg(&data.dir)
        .arg("daemon")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let daemon = Daemon { child };
    wait_for_socket(&data);
    assert_eq!(mode(&data.dir), 0o700);
    assert!(daemon.sigterm().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("was mode 777") && l.contains("now 0700")),
        "{text}"
    );
}

#[test]
fn a_command_without_a_daemon_makes_the_data_directory_owner_only() {
    let data = Data::new("log_level = \"warn\"\n");
    let o = under_umask_000(&data, &["session", "start", "3x3", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&data.dir), 0o700);
    // Nested: the parents are the user's to shape (the umask's), the data directory is not.
    let nested = Data::new("log_level = \"warn\"\n");
    let deep = nested.tmp.path().join("a/b/data");
    let o = Command::new(BIN)
        .arg("--config")
        .arg(&nested.config)
        .arg("--data-dir")
        .arg(&deep)
        .args(["session", "start", "3x3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&deep), 0o700);
}

#[test]
fn a_data_directory_of_another_user_is_refused() {
    // Only root can give a directory away; as another user there is nothing to try.
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let data = Data::new("log_level = \"warn\"\n");
    std::fs::create_dir(&data.dir).unwrap();
    std::os::unix::fs::chown(&data.dir, Some(65534), Some(65534)).unwrap();
    let o = data.cmd(&["session", "start", "3x3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("belongs to uid 65534"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert_eq!(std::fs::read_dir(&data.dir).unwrap().count(), 0);
}
