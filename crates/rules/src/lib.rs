//! The rules of Fanorona on every board of Schadd et al. (2008): boards and their lines
//! (`geometry`), positions and their text (`position`), move generation without allocation
//! (`movegen`), owned moves and their notation (`moves`), repetitions, perft, what a command
//! starts from (`target`) and diagrams; with `version` (what this build is) and `machine` (its
//! memory and disk) beside them. The first layer: it uses no other crate of the project.
#![deny(unsafe_code)]

pub mod diagram;
pub mod geometry;
pub mod machine;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod position;
pub mod repetition;
pub mod target;
pub mod version;

pub use geometry::{Bitboard, Board, BoardError};
pub use movegen::Capture;
pub use moves::{Move, MoveError, legal_moves};
pub use position::{Color, Position, PositionError};
pub use target::{TargetError, parse_target};
