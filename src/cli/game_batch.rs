//! What `match` and `stats` show while their games are played, and how Ctrl-C stops them: a
//! bar on a terminal, a line every half minute otherwise (a log, a pipe); the first Ctrl-C
//! (or SIGTERM) lets the games under way finish and the command reports the ones played, a
//! second quits at once.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cli::output::{CliResult, Failure, INTERRUPTED, counted};
use crate::out;

/// Set by the first Ctrl-C: no game starts after it.
static STOP: AtomicBool = AtomicBool::new(false);

/// How often a line of progress is written where there is no terminal for a bar.
const EVERY: Duration = Duration::from_secs(30);

pub struct GameBatch {
    label: String,
    total: usize,
    bar: indicatif::ProgressBar,
    /// Lines instead of a bar: stderr is not a terminal.
    lines: bool,
    done: AtomicUsize,
    started: Instant,
    last_line: Mutex<Instant>,
}

impl GameBatch {
    /// Shows the progress of `total` games as `label` (a bar on a terminal unless `quiet`)
    /// and takes over Ctrl-C.
    pub fn start(label: String, total: usize, quiet: bool) -> GameBatch {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(INTERRUPTED.into());
            }
            eprintln!(
                "\ninterrupted: the games under way finish, then those played are reported (Ctrl-C again quits at once)"
            );
        });
        let terminal = std::io::stderr().is_terminal();
        let bar = if terminal && !quiet {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg} [{bar:30}] {pos}/{len} games, eta {eta}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            );
            bar.set_message(label.clone());
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        let now = Instant::now();
        GameBatch {
            label,
            total,
            bar,
            lines: !terminal,
            done: AtomicUsize::new(0),
            started: now,
            last_line: Mutex::new(now),
        }
    }

    /// Set once the user has asked to stop: for the games' runner.
    pub fn stop(&self) -> &AtomicBool {
        &STOP
    }

    /// One more game finished.
    pub fn inc(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.bar.inc(1);
        if !self.lines || done == self.total {
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        if last.elapsed() >= EVERY {
            *last = Instant::now();
            eprintln!(
                "{}: {done} of {} played, {:.0} s",
                self.label,
                counted(self.total, "game", "games"),
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// Clears the bar. When fewer than all the games were played (Ctrl-C), the line that
    /// says so, for the report; when none was, the command ends here as Ctrl-C ends one,
    /// having said why nothing follows.
    pub fn finish(&self, played: usize) -> Result<Option<String>, Failure> {
        self.bar.finish_and_clear();
        if played == 0 {
            eprintln!("interrupted before a game was finished: nothing to report");
            return Err(Failure::Reported(INTERRUPTED));
        }
        Ok((played < self.total).then(|| {
            format!(
                "interrupted: {played} of {} played",
                counted(self.total, "game", "games")
            )
        }))
    }
}

/// The end of a report of games: the line saying it was interrupted (in text), and the
/// exit status that goes with it.
pub fn end(interrupted: Option<String>, json: bool) -> CliResult {
    match interrupted {
        Some(line) => {
            if !json {
                out!("{line}");
            }
            Err(Failure::Reported(INTERRUPTED))
        }
        None => Ok(()),
    }
}
