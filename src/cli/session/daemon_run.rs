//! `fanorona daemon`, and the log it and the other commands keep.

use super::*;

use anyhow::anyhow;

use crate::cli::output::{CliResult, Failure};
use fanorona::config::{Config, LogFormat};
use fanorona::daemon::{self, DaemonError, DataDir};

/// The readable log on stderr, at the config's level and format.
pub fn init_tracing(config: &Config) {
    let filter = tracing_subscriber::EnvFilter::new(format!("fanorona={}", config.log_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// One of the daemon's log outputs, in the config's format.
type LogLayer = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

pub(super) fn log_layer<W>(format: LogFormat, writer: W, ansi: bool, time: bool) -> LogLayer
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi);
    match (format, time) {
        (LogFormat::Text, true) => Box::new(layer),
        (LogFormat::Text, false) => Box::new(layer.without_time()),
        (LogFormat::Json, true) => Box::new(layer.json()),
        (LogFormat::Json, false) => Box::new(layer.json().without_time()),
    }
}

/// The daemon's log: under systemd the journal alone (it stamps and keeps every line);
/// otherwise `DATA_DIR/daemon.log`, rotated by size, and stderr (unless stderr is that file,
/// as an older script's redirection makes it).
pub(super) fn init_daemon_tracing(config: &Config, no_log_file: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let journal = daemon::logfile::under_journal();
    let path = daemon::logfile::path(&DataDir::new(&config.data_dir));
    let mut layers: Vec<LogLayer> = Vec::new();
    if journal || no_log_file || !daemon::logfile::stderr_is(&path) {
        let ansi = !journal && std::io::IsTerminal::is_terminal(&std::io::stderr());
        layers.push(log_layer(
            config.log_format,
            std::io::stderr,
            ansi,
            !journal,
        ));
    }
    if !journal && !no_log_file {
        let file = daemon::logfile::RotatingFile::new(
            path,
            daemon::logfile::MAX_BYTES,
            daemon::logfile::KEEP,
        );
        layers.push(log_layer(config.log_format, file, false, true));
    }
    let filter = tracing_subscriber::EnvFilter::new(format!("fanorona={}", config.log_level));
    let _ = tracing_subscriber::registry()
        .with(layers)
        .with(filter)
        .try_init();
}

/// `fanorona daemon`: runs until SIGINT or SIGTERM, then checkpoints and exits. Under a
/// service manager that asked for it (`NOTIFY_SOCKET`), says when it is ready and stopping.
pub fn daemon(config: Config, no_log_file: bool) -> CliResult {
    init_daemon_tracing(&config, no_log_file);
    let shutdown = Arc::new(daemon::Shutdown::new());
    let signal = shutdown.clone();
    ctrlc::set_handler(move || signal.trigger())
        .map_err(|e| Failure::other(anyhow!("cannot handle signals: {e}")))?;
    match daemon::serve(config, shutdown) {
        Err(DaemonError::Restart(why)) => {
            // The same command in a new process image: the store's file lock goes with the
            // old one's descriptors (all close on exec).
            use std::os::unix::process::CommandExt;
            tracing::warn!("daemon: the store failed writing ({why}); restarting to reopen it");
            let exe = std::env::current_exe().map_err(|e| Failure::other(anyhow!(e)))?;
            let e = std::process::Command::new(exe)
                .args(std::env::args_os().skip(1))
                .exec();
            Err(Failure::other(anyhow!("cannot restart the daemon: {e}")))
        }
        Err(e) if e.is_damaged_store() => {
            // Said, and exit status 3: the service unit does not restart a store no backup
            // mended (a restart cannot either).
            eprintln!("error: {e}");
            Err(Failure::Reported(DAMAGED_STORE))
        }
        r => r.map_err(daemon_failure),
    }
}

/// The daemon's exit status for a damaged store that no backup mended.
const DAMAGED_STORE: u8 = 3;

/// A daemon error as a failure: the user's (exit 2) or the machine's (exit 1).
pub fn daemon_failure(e: DaemonError) -> Failure {
    if e.is_user_error() {
        Failure::input(e)
    } else {
        Failure::other(e)
    }
}
