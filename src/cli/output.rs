//! What the commands print, and how they fail.

use std::fmt;
use std::io::{self, Write};
use std::process;

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
            "{flag} {}: {} is not a directory",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Failure::input(anyhow::anyhow!(
            "{flag} {}: a directory, not a file",
            path.display()
        )));
    }
    Ok(())
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

/// Writes one line to stdout. A closed pipe (`fanorona moves ... | head -1`) ends the
/// program quietly, as it does for other command-line tools.
pub fn emit(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|_| stdout.write_all(b"\n")) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            process::exit(0);
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
