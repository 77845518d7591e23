//! What this build is: its version and the commit it was built from, carried by
//! certificates and stores (the `--version` text adds the formats it writes).

/// The program's version ("0.1.0"), the workspace's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit the program was built from, with "-modified" when the work tree had changes
/// ("unknown" outside a git checkout); recorded by this crate's `build.rs`.
pub const COMMIT: &str = env!("FANORONA_COMMIT");

/// "fanorona 0.1.0 (commit abc123def456)".
pub fn producer() -> String {
    format!("fanorona {VERSION} (commit {COMMIT})")
}
