//! Endgame databases: every position of a material slice solved by retrograde analysis,
//! stored as 2 bits per position (win, draw or loss for the side to move).
//!
//! ```
//! use fanorona_tables::scheme::Scheme;
//! use fanorona_tables::{BuildOptions, Database, Wdl, build};
//!
//! // Every 3x3 position with up to 4 pieces, in the symmetric index.
//! let dir = tempfile::tempdir().unwrap();
//! let board = "3x3".parse().unwrap();
//! let options = BuildOptions {
//!     threads: 1,
//!     progress: false,
//!     distances: false,
//!     report_every: None,
//!     index: Scheme::Symmetric,
//!     checkpoint_every: None,
//! };
//! build(dir.path(), board, 4, &options, &mut |_| {}).unwrap();
//!
//! let db = Database::open_whole(dir.path(), board).unwrap();
//! // White withdraws from the last black piece (b2-c1W) and wins.
//! assert_eq!(db.probe(&"B../.W./... w".parse().unwrap()), Some(Wdl::Win));
//! // With the roles turned, Black to move has lost.
//! assert_eq!(db.probe(&"W../.B./... b".parse().unwrap()), Some(Wdl::Win));
//! ```

pub mod audit;
pub mod build;
pub mod capture_values;
pub mod checked;
pub mod file;
pub mod index;
pub mod manifest;
pub mod paper;
pub mod parallel;
pub mod plan;
pub mod probe;
pub mod report;
pub mod scheme;
pub mod stats;
pub mod symmetric;
pub mod verify;
pub mod warm;
pub mod wdl;
pub mod writer;

pub use build::{BuildError, BuildOptions, build, build_pair_and_needs};
pub use index::{Material, Slice};
pub use probe::Database;
pub use wdl::Wdl;
