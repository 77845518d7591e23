//! Readiness for a service manager (systemd's `Type=notify`): `READY=1` once the daemon's
//! socket listens, `STOPPING=1` when it begins to shut down, each one datagram to the socket
//! `$NOTIFY_SOCKET` names (a path, or `@name` in the abstract namespace). Written against
//! sd_notify(3) with std alone: the protocol is one datagram of `KEY=VALUE` lines.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::Path;

use thiserror::Error;

#[derive(Debug, Error)]
#[error("cannot notify the service manager on NOTIFY_SOCKET={socket}: {source}")]
pub struct NotifyError {
    socket: String,
    #[source]
    source: io::Error,
}

/// Sends `state` (`READY=1`, `STOPPING=1`, with `STATUS=...` lines if wanted) to the service
/// manager; `Ok(false)` when none asked for it (`NOTIFY_SOCKET` unset or empty).
pub fn notify(state: &str) -> Result<bool, NotifyError> {
    match std::env::var_os("NOTIFY_SOCKET").filter(|s| !s.is_empty()) {
        Some(socket) => send(&socket, state).map(|()| true),
        None => Ok(false),
    }
}

/// Sends `state` to the socket named `socket`.
pub fn send(socket: &OsStr, state: &str) -> Result<(), NotifyError> {
    let error = |source| NotifyError {
        socket: socket.to_string_lossy().into_owned(),
        source,
    };
    let addr = address(socket).map_err(error)?;
    let sender = UnixDatagram::unbound().map_err(error)?;
    sender
        .send_to_addr(state.as_bytes(), &addr)
        .map_err(error)?;
    Ok(())
}

/// `/path` or `@name` (the abstract namespace, where systemd usually puts it).
fn address(socket: &OsStr) -> io::Result<SocketAddr> {
    let bytes = socket.as_bytes();
    match bytes.first() {
        Some(b'/') => SocketAddr::from_pathname(Path::new(socket)),
        Some(b'@') => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(&bytes[1..])
        }
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "neither an absolute path nor @name",
        )),
    }
}

/// Tells the service manager `state`, if one asked (`NOTIFY_SOCKET`); a failure is logged,
/// not fatal: the daemon works the same without the manager knowing.
pub fn tell(state: &str) {
    if let Err(e) = notify(state) {
        tracing::warn!("{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reaches_a_path_and_an_abstract_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        send(path.as_os_str(), "READY=1").unwrap();
        let mut buf = [0u8; 64];
        let n = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("fanorona-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixDatagram::bind_addr(&addr).unwrap();
        send(OsStr::new(&format!("@{name}")), "STOPPING=1").unwrap();
        let n = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1");

        let e = send(OsStr::new("relative"), "READY=1").unwrap_err();
        assert!(e.to_string().contains("NOTIFY_SOCKET=relative"), "{e}");
    }
}
