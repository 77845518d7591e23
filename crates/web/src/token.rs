//! The web app's token, as Jupyter keeps its own: a secret in a file of the data directory
//! (`web.token`, 0600), drawn from the system's randomness the first time and read at every
//! start after. The server prints a link that carries it; the page keeps it and sends it with
//! every API request. It is never on a command line, where `/proc/PID/cmdline` shows it to
//! every user of the machine.

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The token file's name in the data directory.
pub const FILE: &str = "web.token";

/// Random bytes in a new token (printed as twice as many hex digits, as Jupyter's 24).
const BYTES: usize = 24;

/// The most of a token file read: a token is a line.
const MAX_FILE: u64 = 1024;

#[derive(Debug, Error)]
pub enum TokenError {
    #[error("{what} the web token file {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is open to other users (mode {mode:o}), so its token may be known: remove it and `fanorona serve` makes a new one"
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error(
        "{path} holds no token (one line of at least 16 letters, digits, '-' or '_'): remove it and `fanorona serve` makes a new one"
    )]
    Malformed { path: PathBuf },
    #[error("cannot draw a token from the system's randomness: {0}")]
    Random(std::io::Error),
}

/// Whether `token` can be a token: 16 characters or more, each one an address carries as it
/// is (so the printed link works everywhere).
pub fn well_formed(token: &str) -> bool {
    token.len() >= 16
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The token in `path`, made (owner-only, from the system's randomness) when the file is not
/// there. Its directory must exist. A file others may read is refused, not repaired: its
/// token may already be out.
pub fn read_or_create(path: &Path) -> Result<String, TokenError> {
    match read(path) {
        Err(TokenError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            create(path)
        }
        other => other,
    }
}

/// The token in `path`, checked.
fn read(path: &Path) -> Result<String, TokenError> {
    let io = |what| {
        move |source| TokenError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    };
    let file = std::fs::File::open(path).map_err(io("cannot open"))?;
    let mode = file.metadata().map_err(io("cannot read"))?.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(TokenError::Exposed {
            path: path.to_path_buf(),
            mode,
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE)
        .read_to_end(&mut bytes)
        .map_err(io("cannot read"))?;
    match std::str::from_utf8(&bytes).map(str::trim) {
        Ok(t) if well_formed(t) => Ok(t.to_string()),
        _ => Err(TokenError::Malformed {
            path: path.to_path_buf(),
        }),
    }
}

/// Writes a new token to `path`: whole in a file of its own (0600 from its creation), then
/// linked into place unless another server put one there first, whose token is then taken.
fn create(path: &Path) -> Result<String, TokenError> {
    let io = |what| {
        move |source| TokenError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    };
    let token = fresh()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".web.token.")
        .tempfile_in(dir)
        .map_err(io("cannot create"))?;
    writeln!(tmp, "{token}").map_err(io("cannot write"))?;
    tmp.as_file().sync_all().map_err(io("cannot write"))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(token),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => read(path),
        Err(e) => Err(io("cannot create")(e.error)),
    }
}

/// A new token: `BYTES` from the kernel's random source, in hex.
fn fresh() -> Result<String, TokenError> {
    let mut bytes = [0u8; BYTES];
    let mut filled = 0;
    while filled < BYTES {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(TokenError::Random(e.into())),
        }
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_token_is_made_owner_only_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let made = read_or_create(&path).unwrap();
        assert_eq!(made.len(), 2 * BYTES);
        assert!(well_formed(&made));
        assert_eq!(
            std::fs::metadata(&path).unwrap().mode() & 0o777,
            0o600,
            "the token file is its owner's alone"
        );
        assert_eq!(read_or_create(&path).unwrap(), made);
        // Another file, another token: drawn, not derived.
        let other = read_or_create(&dir.path().join("other.token")).unwrap();
        assert_ne!(other, made);
        // Nothing else is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_file_others_may_read_or_that_holds_no_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            read_or_create(&path),
            Err(TokenError::Exposed { mode: 0o644, .. })
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_or_create(&path).unwrap(), "0123456789abcdef0123");
        for bad in [
            "short\n",
            "sixteen+chars/with=signs\n",
            "",
            "\u{1b}[31m0123456789abcdef",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(
                matches!(read_or_create(&path), Err(TokenError::Malformed { .. })),
                "{bad:?}"
            );
        }
    }
}
