//! Solve sessions: a root position solved by PN/PN² whose first-level tree lives in the store
//! and is checkpointed, with the root's pn/dpn curve and the rote-learning table.
//!
//! Only this layer touches the store, and only `store.rs` touches sled.

pub mod bitmap_text;
pub mod certificates;
pub mod checkpoint_failure;
pub mod codec;
pub mod curve;
mod error;
pub mod format;
pub mod log;
pub mod moves;
pub mod name;
pub mod record;
pub mod record_files;
pub mod remote;
pub mod report;
pub mod runner;
mod sessions;
pub mod settings;
pub mod store;
pub mod weights;

pub use error::SessionError;
pub use record::{GoalRecord, SecondLevel, SessionRecord, Settings, State};
pub use sessions::{DISK_MARGIN, SavedTree, Sessions, SharedRote, Tuning};
