//! `fanorona session tail`: a session's progress log, its last lines with their times, and
//! with `--follow` what comes next, across pauses, daemon restarts and a log file replaced.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::anyhow;

use crate::cli::output::{CliResult, Failure};
use crate::cli::session::ask;
use crate::cli::session::print::{progress_line, state_words};
use crate::out;
use fanorona::config::Config;
use fanorona::daemon::DataDir;
use fanorona::daemon::answers::Shown;
use fanorona::daemon::client::{ClientError, call};
use fanorona::daemon::protocol::StatusOf;
use fanorona::session::log::{LastLogged, Progress, log_path, lost_note};

/// Lines read before the ones shown, so that a resume among them can say what was lost.
const CONTEXT: usize = 200;
/// How often a follower with nothing new asks how the session stands.
const ASK_EVERY: Duration = Duration::from_secs(2);
/// How often it looks at the file for new lines.
const POLL: Duration = Duration::from_millis(200);

/// `-n`: a count of lines, or `all`.
pub fn line_count(text: &str) -> Result<usize, String> {
    match text {
        "all" => Ok(usize::MAX),
        _ => text
            .parse()
            .map_err(|_| format!("'{text}' is not a count of lines or 'all'")),
    }
}

/// What `session tail` was asked.
pub struct TailArgs {
    pub id: u64,
    pub lines: usize,
    pub follow: bool,
    pub json: bool,
}

/// A log line's time: UTC, to the second.
fn stamp(time: f64) -> String {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(time.max(0.0));
    humantime::format_rfc3339_seconds(at).to_string()
}

/// Prints the lines of a log as they come, readable or as written.
struct Printer {
    json: bool,
    last: LastLogged,
    /// The log's last event of a session that ended (solved, or failed).
    ended: bool,
    /// It ended failing.
    failed: bool,
}

impl Printer {
    /// Takes in a line; prints it unless `quiet` (a line read only for what came before).
    fn line(&mut self, text: &str, quiet: bool) {
        let p: Option<Progress> = serde_json::from_str(text).ok();
        let lost = p.as_ref().and_then(|p| self.last.note(p));
        if let Some(p) = &p {
            self.failed = p.event == "error"
                && p.message
                    .as_deref()
                    .is_some_and(|m| !m.starts_with("checkpoint"));
            self.ended = p.event == "solved" || self.failed;
        }
        if quiet {
            return;
        }
        if self.json {
            out!("{text}");
        } else if let Some(p) = &p {
            let mut line = format!("{} {}", stamp(p.time), progress_line(p));
            // (A log whose resume line says it already is left as it is.)
            if let Some(n) = lost.filter(|&n| n > 0 && p.message.is_none()) {
                line.push_str(&format!(" | {}", lost_note(n)));
            }
            out!("{line}");
        }
    }
}

/// Where the last `n` whole lines of `file` start, and where they end (after its last
/// newline: a line being written is left for later). Reads back from the end only.
fn last_lines(file: &mut File, n: usize) -> std::io::Result<(u64, u64)> {
    let mut pos = file.metadata()?.len();
    let mut end = None;
    let mut seen = 0;
    let mut buf = vec![0u8; 64 << 10];
    while pos > 0 {
        let take = (buf.len() as u64).min(pos) as usize;
        pos -= take as u64;
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut buf[..take])?;
        for i in (0..take).rev().filter(|&i| buf[i] == b'\n') {
            let after = pos + i as u64 + 1;
            match end {
                None if n == 0 => return Ok((after, after)),
                None => end = Some(after),
                Some(e) => {
                    seen += 1;
                    if seen == n {
                        return Ok((after, e));
                    }
                }
            }
        }
    }
    Ok((0, end.unwrap_or(0)))
}

/// The log file being read, and how far.
struct Reader {
    path: PathBuf,
    file: Option<(BufReader<File>, u64)>,
    pos: u64,
}

impl Reader {
    /// Opens the log if it is there; `Ok(false)` when it is not (yet).
    fn open(&mut self) -> Result<bool, Failure> {
        match File::open(&self.path) {
            Ok(f) => {
                let ino = f.metadata().map(|m| m.ino()).map_err(|e| self.failed(e))?;
                self.file = Some((BufReader::new(f), ino));
                self.pos = 0;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.failed(e)),
        }
    }

    fn failed(&self, e: std::io::Error) -> Failure {
        Failure::other(anyhow!("cannot read {}: {e}", self.path.display()))
    }

    /// Whether the file at the path is no longer the one being read (replaced, or cut
    /// short): then it is read again from its start.
    fn replaced(&self) -> bool {
        let Some((_, ino)) = &self.file else {
            return self.path.exists();
        };
        match std::fs::metadata(&self.path) {
            Ok(m) => m.ino() != *ino || m.len() < self.pos,
            Err(_) => false,
        }
    }

    /// The next whole line, if one is there.
    fn next_line(&mut self) -> Result<Option<String>, Failure> {
        let Some((reader, _)) = &mut self.file else {
            return Ok(None);
        };
        let mut line = String::new();
        let failed = |e: std::io::Error| anyhow!("cannot read {}: {e}", self.path.display());
        // Read up to the bound: a longer line is no progress line, and is not held whole.
        let n = reader
            .by_ref()
            .take(MAX_LOG_LINE + 1)
            .read_line(&mut line)
            .map_err(|e| Failure::other(failed(e)))?;
        if n == 0 {
            return Ok(None);
        }
        if !line.ends_with('\n') && n as u64 > MAX_LOG_LINE {
            if let Some(rest) = skip_line(reader).map_err(|e| Failure::other(failed(e)))? {
                self.pos += n as u64 + rest;
                // Said on stderr: stdout keeps the log's lines alone (JSON lines with --json).
                eprintln!(
                    "{}: a line of over {} KiB, not a progress line, skipped",
                    self.path.display(),
                    MAX_LOG_LINE >> 10
                );
                return self.next_line();
            }
            // Still being written: read again later.
            reader
                .seek(SeekFrom::Start(self.pos))
                .map_err(|e| Failure::other(failed(e)))?;
            return Ok(None);
        }
        if !line.ends_with('\n') {
            // Being written: read it again whole, later.
            reader
                .seek_relative(-(n as i64))
                .map_err(|e| Failure::other(anyhow!(e)))?;
            return Ok(None);
        }
        self.pos += n as u64;
        Ok(Some(line.trim_end().to_string()))
    }
}

/// The longest line `tail` reads whole (a progress line is some hundred bytes).
const MAX_LOG_LINE: u64 = 1 << 20;

/// Reads past the rest of a line without keeping it; the bytes read, if its end was found.
fn skip_line(reader: &mut BufReader<File>) -> std::io::Result<Option<u64>> {
    let mut skipped = 0u64;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok(Some(skipped + i as u64 + 1));
        }
        let len = buf.len();
        reader.consume(len);
        skipped += len as u64;
    }
}

/// Prints the last lines of session `id`'s progress log; with `follow`, keeps printing new
/// lines until the session is solved, fails or is stopped.
pub fn tail(config: &Config, args: TailArgs) -> CliResult {
    let TailArgs {
        id,
        lines,
        follow,
        json,
    } = args;
    let dir = DataDir::new(&config.data_dir);
    let path = log_path(&dir.logs(), id);
    let mut printer = Printer {
        json,
        last: LastLogged::default(),
        ended: false,
        failed: false,
    };
    let mut reader = Reader {
        path: path.clone(),
        file: None,
        pos: 0,
    };
    if reader.open()? {
        let (mut file, _) = reader.file.take().expect("just opened");
        let f = file.get_mut();
        let (from, end) =
            last_lines(f, lines.saturating_add(CONTEXT)).map_err(|e| reader.failed(e))?;
        let (shown_from, _) = last_lines(f, lines).map_err(|e| reader.failed(e))?;
        f.seek(SeekFrom::Start(from))
            .map_err(|e| reader.failed(e))?;
        let ino = f
            .metadata()
            .map(|m| m.ino())
            .map_err(|e| reader.failed(e))?;
        reader.file = Some((BufReader::new(file.into_inner()), ino));
        reader.pos = from;
        while reader.pos < end {
            let at = reader.pos;
            let Some(line) = reader.next_line()? else {
                break;
            };
            printer.line(&line, at < shown_from);
        }
        if !follow {
            return Ok(());
        }
    } else {
        // Say whether the session is unknown or just has not started.
        let (s, _) = ask(config, StatusOf { id })?;
        let s = s.state;
        if !follow || !s.is_live() {
            out!(
                "session {id} is {} and has no log yet ({})",
                state_words(s),
                path.display()
            );
            return Ok(());
        }
        eprintln!(
            "session {id} is {}: waiting for its first line",
            state_words(s)
        );
    }
    follow_on(config, id, &mut reader, &mut printer)
}

/// What a follower last said of the session, so each change is said once.
#[derive(PartialEq, Clone, Copy)]
enum Said {
    Nothing,
    Paused,
    NoDaemon,
}

/// Follows the log until the session ends, saying on stderr when it is paused or no daemon
/// runs (it goes on once a daemon resumes it).
fn follow_on(config: &Config, id: u64, reader: &mut Reader, printer: &mut Printer) -> CliResult {
    let dir = DataDir::new(&config.data_dir);
    let mut said = Said::Nothing;
    let mut asked: Option<Instant> = None;
    // Said on stderr when the log's last line ends the session: a follower is not left to
    // guess why it stopped.
    let ended = |printer: &Printer| {
        eprintln!(
            "session {id} {}: nothing more will come",
            if printer.failed {
                "has failed"
            } else {
                "is solved"
            }
        );
        Ok(())
    };
    loop {
        if printer.ended {
            return ended(printer);
        }
        if reader.replaced() {
            if reader.file.is_some() {
                eprintln!(
                    "({} was replaced: reading it from its start)",
                    reader.path.display()
                );
            }
            reader.open()?;
        }
        let mut read = false;
        while let Some(line) = reader.next_line()? {
            printer.line(&line, false);
            read = true;
            if printer.ended {
                return ended(printer);
            }
        }
        if read {
            said = Said::Nothing;
            asked = Some(Instant::now());
        }
        // Nothing new for a while: ask how the session stands. The first time, with no
        // daemon, from the store (a stopped session ends the follow at once); after that
        // through the socket only: a follower must not take the data directory's lock
        // again and again, one of those times from a daemon starting.
        if asked.is_none_or(|a| a.elapsed() >= ASK_EVERY) {
            let answer = match (asked, call(&dir.socket(), StatusOf { id })) {
                (None, Err(ClientError::NoDaemon(_))) => {
                    let (s, daemon) = ask(config, StatusOf { id })?;
                    Some((s, !daemon))
                }
                (_, Ok(s)) => Some((s, false)),
                (_, Err(ClientError::Refused { message, bad_input })) => {
                    return Err(if bad_input {
                        Failure::input(anyhow!(message))
                    } else {
                        Failure::other(anyhow!(message))
                    });
                }
                // No daemon, or one dying mid-answer.
                (_, Err(_)) => None,
            };
            asked = Some(Instant::now());
            let now = match answer {
                Some((s, no_daemon)) => match s.state {
                    Shown::Solved | Shown::Stopped | Shown::Failed | Shown::Damaged => {
                        // What it wrote last is read before the end is said.
                        while let Some(line) = reader.next_line()? {
                            printer.line(&line, false);
                        }
                        if s.state == Shown::Solved {
                            return ended(printer);
                        }
                        eprintln!(
                            "session {id} is {}: nothing more will come (until `fanorona session resume {id}`)",
                            state_words(s.state)
                        );
                        return Ok(());
                    }
                    Shown::Paused | Shown::Pausing => Said::Paused,
                    _ if no_daemon => Said::NoDaemon,
                    _ => Said::Nothing,
                },
                None => Said::NoDaemon,
            };
            if now != said {
                match now {
                    Said::Paused => eprintln!(
                        "session {id} is paused: following on (`fanorona session resume {id}` continues it; Ctrl-C ends this)"
                    ),
                    Said::NoDaemon => eprintln!(
                        "no daemon is running on {}: following on, the log goes on once one starts (`fanorona daemon`; Ctrl-C ends this)",
                        dir.root.display()
                    ),
                    Said::Nothing if said != Said::Nothing => {
                        eprintln!(
                            "session {id} is {}: following on",
                            state_words(Shown::Running)
                        )
                    }
                    Said::Nothing => {}
                }
                said = now;
            }
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_last_lines_are_found_from_the_end_and_a_line_being_written_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut f = File::create(&path).unwrap();
        for i in 0..30_000 {
            writeln!(f, "line {i}").unwrap();
        }
        write!(f, "half").unwrap();
        let mut f = File::open(&path).unwrap();
        let len = f.metadata().unwrap().len();
        let end = len - 4;
        let (from, e) = last_lines(&mut f, 2).unwrap();
        assert_eq!(e, end);
        let mut text = String::new();
        f.seek(SeekFrom::Start(from)).unwrap();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "line 29998\nline 29999\nhalf");
        assert_eq!(last_lines(&mut f, 0).unwrap(), (end, end));
        assert_eq!(last_lines(&mut f, usize::MAX).unwrap(), (0, end));
        assert_eq!(line_count("all"), Ok(usize::MAX));
        assert!(line_count("-1").is_err());
    }
}
