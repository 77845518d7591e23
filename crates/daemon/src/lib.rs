//! The solve-session daemon: it owns the data directory (a lock file keeps a second process
//! out), runs the running sessions on its workers, and answers commands on a Unix socket.
//!
//! Its rooms, after tokio-rs/mini-redis's layout:
//! - `datadir`: the data directory's paths, its lock, its owner-only mode;
//! - `open`: its store opened, a stopped compaction finished or undone first;
//! - `server`: the socket, a thread a connection, the daemon's life until shutdown (`serve`);
//! - `shutdown`: the signal every thread waits on beside its work;
//! - `protocol`: the commands a client sends, each a struct with its answer's type;
//! - `answers`: those answers, shared with the command line and the web app;
//! - `client`: a command sent and its answer read back;
//! - `service`: what each command does (`Apply`, a file a group of commands) and `handle`,
//!   the dispatch;
//! - `workers`: the threads that solve the running sessions;
//! - `jobs`: where their second-level searches go (here, or workers through NATS);
//! - `compact`: compacting the store;
//! - `logfile`: the daemon's log file, rotated by size (or the journal under systemd);
//! - `notify`: readiness for a service manager (systemd's `Type=notify`).
//!
//! The daemon sits above the session layer (sessions, their settings, their certificates)
//! and below the web app and the command line, which talk to it through `client`.

pub mod answers;
pub mod backup;
pub mod client;
pub mod compact;
pub mod datadir;
pub mod jobs;
pub mod logfile;
pub mod notify;
pub mod open;
pub mod protocol;
pub mod put_back;
pub mod server;
pub mod service;
pub mod shutdown;
pub mod workers;

pub use datadir::{DaemonError, DataDir, DataLock, lock};
pub use open::open_sessions;
pub use server::{answer, bind, serve};
pub use service::{Apply, Refusal, Service};
pub use shutdown::Shutdown;
