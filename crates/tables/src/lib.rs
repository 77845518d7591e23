//! Endgame databases: every position of a material slice solved by retrograde analysis,
//! stored as 2 bits per position (win, draw or loss for the side to move).

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
pub mod scheme;
pub mod stats;
pub mod symmetric;
pub mod verify;
pub mod wdl;
pub mod writer;

pub use build::{BuildError, BuildOptions, build, build_pair_and_needs};
pub use index::{Material, Slice};
pub use probe::Database;
pub use wdl::Wdl;
