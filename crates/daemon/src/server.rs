//! The server: the data directory's socket, a thread a connection answering one request a
//! line (`protocol`), and the daemon's life from start to shutdown (`serve`).

use std::io::{BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Service;
use super::datadir::{self, DaemonError, DataDir};
use super::open::open_or_restore;
use super::protocol::{Answer, Envelope, PROTOCOL};
use super::shutdown::Shutdown;
use fanorona_search::config::Config;

/// Listens on the data directory's socket, replacing a stale socket file: the caller holds
/// the lock, so no other process answers there.
///
/// The socket is owner-only from its first instant: bound under umask 077 (the daemon's
/// own; a solve's is set for the call and put back), not chmod-ed after, when another user
/// could connect in between.
pub fn bind(dir: &DataDir) -> Result<UnixListener, DaemonError> {
    use rustix::fs::Mode;
    use rustix::process::umask;
    let socket = dir.socket();
    let _ = std::fs::remove_file(&socket);
    let before = umask(Mode::from_raw_mode(0o077));
    let bound = UnixListener::bind(&socket);
    umask(before);
    bound.map_err(|source| DaemonError::Io {
        what: "cannot listen on",
        path: socket.clone(),
        source,
    })
}

/// Answers connections on `listener`, each on a thread of its own, until `shutdown` is set;
/// then removes the socket file. Accepting blocks: at shutdown a connection of its own
/// wakes it.
pub fn answer(service: &Service, listener: &UnixListener, shutdown: &Shutdown) {
    let socket = service.dir.socket();
    std::thread::scope(|s| {
        s.spawn(|| {
            shutdown.wait();
            if let Err(e) = UnixStream::connect(&socket) {
                tracing::warn!("cannot wake the listener on {}: {e}", socket.display());
            }
        });
        for stream in listener.incoming() {
            if shutdown.is_set() {
                break;
            }
            match stream {
                Ok(stream) => {
                    // A client that stays silent is dropped, so it cannot hold up shutdown.
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                    s.spawn(move || converse(service, stream));
                }
                Err(e) => tracing::warn!("accept: {e}"),
            }
        }
    });
    let _ = std::fs::remove_file(&socket);
}

/// How long a starting daemon waits for a command that holds the data directory's lock.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs the daemon in the foreground until `shutdown` is set (by SIGINT or SIGTERM): the
/// running session is checkpointed before it returns. Taking the data directory's lock
/// sets the process's umask to 077 before anything is created: what the daemon writes is
/// its owner's alone.
pub fn serve(config: Config, shutdown: Arc<Shutdown>) -> Result<(), DaemonError> {
    let dir = DataDir::new(&config.data_dir);
    // A command may hold the lock for a moment, as one does that a daemon restarting after
    // a store failure meets (its clients open the store themselves while it is away).
    let _lock = datadir::lock_patiently(&dir, LOCK_PATIENCE)?;
    let sessions = open_or_restore(&dir, &config)?;
    let listener = bind(&dir)?;
    // Ready once it listens: resuming the sessions is work, not start-up.
    super::notify::tell(&format!(
        "READY=1\nSTATUS=listening on {}",
        dir.socket().display()
    ));
    let dispatcher = super::jobs::dispatcher(&config, &dir)?;
    let service = Service::new(sessions, config, dir, true).dispatching(dispatcher);
    let stale = datadir::remove_unfinished_certificates(&service.dir.root.join("certificates"));
    if stale > 0 {
        tracing::info!(
            "daemon: removed {stale} unfinished certificate files (a writer was killed)"
        );
    }
    tracing::info!(
        "daemon {} on {} (store {})",
        std::process::id(),
        service.dir.socket().display(),
        service.dir.store().display()
    );
    service.mend_all();
    std::thread::scope(|s| {
        s.spawn(|| service.work(&shutdown));
        if service.config.threads >= 2 {
            s.spawn(|| service.work_spare(&shutdown));
        }
        s.spawn(|| answer(&service, &listener, &shutdown));
        s.spawn(|| service.keep_backups(&shutdown));
        shutdown.wait();
        // The manager then waits for the final checkpoints (the unit's TimeoutStopSec).
        super::notify::tell("STOPPING=1\nSTATUS=checkpointing the running sessions");
        tracing::info!("daemon: shutting down, checkpointing the running sessions");
        service.closing.store(true, Ordering::SeqCst);
        // A worker that claims a session after this sees the shutdown and stops it itself;
        // the scope waits for both to checkpoint.
        service.workers.main.control.request_exit();
        service.workers.spare.control.request_exit();
    });
    let unwritten = std::mem::take(&mut *service.unwritten.lock().expect("unwritten lock"));
    let restart = service.restart.load(Ordering::SeqCst);
    let poisoned = service.sessions.store().poisoned();
    service.close(!unwritten.is_empty());
    if let Some(why) = poisoned
        && restart
    {
        return Err(DaemonError::Restart(why));
    }
    if !unwritten.is_empty() {
        return Err(DaemonError::Unwritten(unwritten.join("; ")));
    }
    tracing::info!("daemon: stopped");
    Ok(())
}

/// Answers the requests of one connection, one line each. A line is read up to the
/// certificates' bound (`format::MAX_LINE`, 64 KiB; a real request is a few hundred bytes):
/// a longer one is refused and the connection closed, without reading the rest into memory.
fn converse(service: &Service, stream: UnixStream) {
    use fanorona_certificate::format::{MAX_LINE, read_line_bounded};
    let mut reader = BufReader::new(&stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let (answer, too_long) = match read_line_bounded(&mut reader, &mut buf) {
            Ok(0) => return,
            Ok(_) => match std::str::from_utf8(&buf) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => (answer_to(service, line), false),
                Err(e) => (refusal(format!("not a request: not UTF-8 ({e})")), false),
            },
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => (
                refusal(format!(
                    "a request longer than {MAX_LINE} bytes: not a request of this protocol"
                )),
                true,
            ),
            Err(_) => return,
        };
        let mut out = serde_json::to_vec(&answer).expect("answers serialise");
        out.push(b'\n');
        if (&stream).write_all(&out).is_err() || too_long {
            return;
        }
    }
}

/// A refusal of bad input.
fn refusal(error: String) -> Answer {
    Answer {
        protocol: PROTOCOL,
        ok: false,
        result: None,
        error: Some(error),
        bad_input: true,
    }
}

/// The answer to one request line.
fn answer_to(service: &Service, line: &str) -> Answer {
    match serde_json::from_str::<Envelope>(line) {
        Ok(env) if env.protocol != PROTOCOL => refusal(format!(
            "protocol {} is not spoken here (this daemon speaks {PROTOCOL})",
            env.protocol
        )),
        Ok(env) => match service.handle(env.request) {
            Ok(v) => Answer {
                protocol: PROTOCOL,
                ok: true,
                result: Some(v),
                error: None,
                bad_input: false,
            },
            Err(r) => Answer {
                protocol: PROTOCOL,
                ok: false,
                result: None,
                error: Some(r.message),
                bad_input: r.bad_input,
            },
        },
        Err(e) => refusal(format!("not a request: {e}")),
    }
}
