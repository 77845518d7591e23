//! Small endgame tables built for a test, quietly.

use fanorona::Board;
use fanorona::egdb::{BuildOptions, build};

/// A build on two threads in the paper's index, with no progress shown and no distances.
pub fn quiet() -> BuildOptions {
    BuildOptions {
        threads: 2,
        progress: false,
        distances: false,
        report_every: None,
        index: fanorona::egdb::scheme::Scheme::Paper,
        checkpoint_every: None,
    }
}

/// `board`'s tables up to `pieces` pieces, in a temporary directory of their own.
pub fn built(board: Board, pieces: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), board, pieces, &quiet(), &mut |_| {}).unwrap();
    dir
}
