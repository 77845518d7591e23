//! What the commands print, and how they fail.

use std::fmt;
use std::io::{self, Write};
use std::process;

use serde::{Deserialize, Serialize};

/// Bad input (exit status 2) or a failure of the machine (exit status 1).
pub enum Failure {
    Input(anyhow::Error),
    Other(anyhow::Error),
    /// Already reported on stdout: only the exit status is left to give.
    Reported(u8),
}

impl Failure {
    pub fn input(e: impl Into<anyhow::Error>) -> Failure {
        Failure::Input(e.into())
    }

    pub fn other(e: impl Into<anyhow::Error>) -> Failure {
        Failure::Other(e.into())
    }
}

pub type CliResult = Result<(), Failure>;

/// A failure as `--json` prints it: the message and the exit status. Alone when the command
/// failed before any report, or folded into the report (`report_json`).
#[derive(Debug, Serialize, Deserialize)]
pub struct FailureReport {
    pub error: String,
    pub exit_code: u8,
}

impl FailureReport {
    /// Its one line of JSON.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("a string and a number serialise")
    }
}

/// A report with the failure that ends its command, if any, as one object.
#[derive(Serialize)]
struct WithFailure<'r, R> {
    #[serde(flatten)]
    report: &'r R,
    #[serde(flatten)]
    failure: Option<FailureReport>,
}

/// Prints a command's `--json` answer: its one line of JSON.
pub fn print_json(report: &impl Serialize) -> CliResult {
    let line = serde_json::to_string(report)
        .map_err(|e| Failure::other(anyhow::anyhow!("the report does not serialise: {e}")))?;
    emit(format_args!("{line}"));
    Ok(())
}

/// Prints a command's JSON report as its one object, with the failure that ends the command
/// (`error` and `exit_code`, as a failure alone prints them) folded in.
pub fn report_json(report: &impl Serialize, result: CliResult) -> CliResult {
    let (error, exit_code) = match &result {
        Ok(()) | Err(Failure::Reported(_)) => {
            print_json(report)?;
            return result;
        }
        Err(Failure::Input(e)) => (one_line(e), 2),
        Err(Failure::Other(e)) => (one_line(e), 1),
    };
    let failure = Some(FailureReport { error, exit_code });
    print_json(&WithFailure { report, failure })?;
    Err(Failure::Reported(exit_code))
}

/// An error and its causes on one line, each cause once: a message that already ends with
/// its cause's text (an OS error quoted in it) does not get it again.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// "1 game", "3 games".
pub fn counted<N: fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let word = if n == N::from(1) { one } else { many };
    format!("{n} {word}")
}

/// Marks the error of `r` as bad input.
pub fn input<T, E: Into<anyhow::Error>>(r: Result<T, E>) -> Result<T, Failure> {
    r.map_err(Failure::input)
}

/// Refuses, before any work, an output path the command could not write at the end: its
/// directory must exist, and the path must not be a directory.
pub fn check_output(flag: &str, path: &std::path::Path) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Failure::input(anyhow::anyhow!(
            "{flag} {}: {} {}",
            path.display(),
            dir.display(),
            if dir.exists() {
                "is not a directory"
            } else {
                "does not exist"
            }
        )));
    }
    if path.is_dir() {
        return Err(Failure::input(anyhow::anyhow!(
            "{flag} {}: a directory, not a file",
            path.display()
        )));
    }
    // A directory that is there but cannot be written (read-only, another owner's) is
    // found now too, by a file of our own made and removed there: the path itself (a file
    // to be replaced, a symlink, a pipe) is not touched.
    let probe = dir.join(format!(".fanorona-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Failure::input(anyhow::anyhow!(
            "{flag} {}: cannot be written: {e}",
            path.display()
        ))),
    }
}

/// Writes `bytes` to `path` whole: to `path.tmp` first, then renamed over it, so a failure
/// leaves no half-written file.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), Failure> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Failure::other(anyhow::anyhow!("cannot write {}: {e}", path.display()))
        })
}

/// The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell gives it.
pub const INTERRUPTED: u8 = 130;

/// A command stopped by Ctrl-C (or SIGTERM) after saving what it did: `message` as a failure
/// prints it (on stderr, or with `json` as the error object), with exit status 130.
pub fn interrupted(message: &str, json: bool) -> Failure {
    if json {
        let failure = FailureReport {
            error: message.to_string(),
            exit_code: INTERRUPTED,
        };
        emit(format_args!("{}", failure.line()));
    } else {
        eprintln!("{message}");
    }
    Failure::Reported(INTERRUPTED)
}

/// The exit status after stdout was closed under the program (`fanorona moves ... | head
/// -1`): what a shell reports for a tool ended by SIGPIPE (128 + 13). Not 0: what was not
/// read (a checker's verdict, a report's last line) was not delivered.
pub const CLOSED_PIPE: i32 = 141;

/// Writes one line to stdout. A closed pipe ends the program quietly, with the status other
/// command-line tools have then (`CLOSED_PIPE`).
pub fn emit(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|_| stdout.write_all(b"\n")) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            process::exit(CLOSED_PIPE);
        }
        eprintln!("error: writing to stdout: {e}");
        process::exit(1);
    }
}

/// `println!` through `emit`.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::emit(format_args!($($arg)*)) };
}

/// Bytes in decimal units, as `ls --si` counts them.
pub fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} bytes"),
    }
}
