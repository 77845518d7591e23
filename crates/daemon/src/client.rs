//! A client's side of the socket: one command sent, its typed answer read back.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::protocol::{Answer, Command, Envelope, PROTOCOL};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no daemon answers on {0}")]
    NoDaemon(PathBuf),
    #[error("talking to the daemon on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the daemon's answer is not understood: {0}")]
    Garbled(String),
    #[error("{message}")]
    Refused { message: String, bad_input: bool },
}

/// Sends `command` to the daemon listening on `socket` and waits for its answer.
pub fn call<C: Command>(socket: &Path, command: C) -> Result<C::Answer, ClientError> {
    call_within(socket, command, Some(Duration::from_secs(120)))
}

/// `call`, waiting for the answer at most `timeout` (`None`: as long as it takes, for a
/// command that works for long, such as `Certificate`).
pub fn call_within<C: Command>(
    socket: &Path,
    command: C,
    timeout: Option<Duration>,
) -> Result<C::Answer, ClientError> {
    let stream =
        UnixStream::connect(socket).map_err(|_| ClientError::NoDaemon(socket.to_path_buf()))?;
    let io = |source| ClientError::Io {
        path: socket.to_path_buf(),
        source,
    };
    stream.set_read_timeout(timeout).map_err(io)?;
    let mut line = serde_json::to_vec(&Envelope {
        protocol: PROTOCOL,
        request: command.into(),
    })
    .expect("requests serialise");
    line.push(b'\n');
    (&stream).write_all(&line).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).map_err(io)?;
    let a: Answer =
        serde_json::from_str(&answer).map_err(|e| ClientError::Garbled(e.to_string()))?;
    if a.protocol != PROTOCOL {
        return Err(ClientError::Garbled(format!(
            "protocol {} (this client speaks {PROTOCOL})",
            a.protocol
        )));
    }
    if !a.ok {
        return Err(ClientError::Refused {
            message: a.error.unwrap_or_default(),
            bad_input: a.bad_input,
        });
    }
    serde_json::from_value(a.result.unwrap_or_default())
        .map_err(|e| ClientError::Garbled(e.to_string()))
}
