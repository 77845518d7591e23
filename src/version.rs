//! What this build is: its version and the commit it was built from, carried by
//! certificates and stores (the `--version` text adds the formats it writes).

/// "fanorona 0.1.0 (commit abc123def456)".
pub fn producer() -> String {
    format!(
        "fanorona {} (commit {})",
        env!("CARGO_PKG_VERSION"),
        env!("FANORONA_COMMIT")
    )
}
