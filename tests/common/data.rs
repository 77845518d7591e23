//! What the tests that drive the binary share: a data directory with its config, a daemon
//! on it, and their outputs.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_fanorona");

/// A data directory with its config file.
pub struct Data {
    pub tmp: tempfile::TempDir,
    pub config: PathBuf,
    pub dir: PathBuf,
}

impl Data {
    pub fn new(config: &str) -> Data {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, config).unwrap();
        let dir = tmp.path().join("data");
        Data {
            tmp,
            config: path,
            dir,
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("--config")
            .arg(&self.config)
            .arg("--data-dir")
            .arg(&self.dir)
            .args(args)
            .output()
            .unwrap()
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let o = self.cmd(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// `session status ID --json`, retried while a daemon is starting or dying.
    pub fn status(&self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let o = self.cmd(&["session", "status", &id.to_string(), "--json"]);
            if o.status.success() {
                return serde_json::from_slice(&o.stdout).unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn daemon(&self) -> Daemon {
        let child = Command::new(BIN)
            .arg("--config")
            .arg(&self.config)
            .arg("--data-dir")
            .arg(&self.dir)
            .arg("daemon")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Ready when its socket answers.
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(self.dir.join("daemon.sock")).is_err() {
            assert!(Instant::now() < deadline, "the daemon did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        Daemon { child }
    }

    /// Polls until `done` holds for the session's status (at most three minutes: the bound
    /// catches a hang, not a slow machine, and a machine busy with other work can take
    /// several times as long as an idle one).
    pub fn wait_for(&self, id: u64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let s = self.status(id);
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "waiting for {what}: {s}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

pub struct Daemon {
    pub child: Child,
}

impl Daemon {
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn sigterm(mut self) -> std::process::ExitStatus {
        signal(&self.child, "TERM");
        self.child.wait().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `child` the signal `name` ("TERM", "INT").
pub fn signal(child: &Child, name: &str) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args([format!("-{name}").as_str(), &pid])
            .status()
            .unwrap()
            .success()
    );
}

/// A session's status says it is solved, and every decided question's proof checked (the
/// check follows the result).
pub fn settled(s: &Value) -> bool {
    s["state"] == "solved"
        && s["goals"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["outcome"] == "open" || !g["verified"].is_null())
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status `code` and one line on stderr containing every one of `says`.
pub fn assert_fails(o: &Output, code: i32, says: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for s in says {
        assert!(err.contains(s), "'{s}' in: {err}");
    }
}
