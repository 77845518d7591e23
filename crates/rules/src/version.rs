//! What this build is: its version and the commit it was built from, carried by
//! certificates and stores (the `--version` text adds the formats it writes).

use std::sync::OnceLock;

/// The program's version ("0.1.0"), the workspace's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static COMMIT: OnceLock<&'static str> = OnceLock::new();

/// Names the commit the program was built from. The binary's build script records it and
/// `main` hands it here first thing, so that a new commit rebuilds the binary alone, not every
/// layer below it.
pub fn set_commit(commit: &'static str) {
    let _ = COMMIT.set(commit);
}

/// The commit given to `set_commit` ("abc123def456", with "-modified" when the work tree had
/// changes); "unknown" in a program that gave none (a library's own tests).
pub fn commit() -> &'static str {
    COMMIT.get().copied().unwrap_or("unknown")
}

/// "fanorona 0.1.0 (commit abc123def456)".
pub fn producer() -> String {
    format!("fanorona {VERSION} (commit {})", commit())
}
