//! The rules of Fanorona on every board of Schadd et al. (2008): boards and their lines
//! (`geometry`), positions and their text (`position`), move generation without allocation
//! (`movegen`), owned moves and their notation (`moves`), repetitions, perft, what a command
//! starts from (`target`) and diagrams; with `version` (what this build is) and `machine` (its
//! memory and disk) beside them. The first layer: it uses no other crate of the project.
//!
//! ```
//! use fanorona_rules::perft::perft;
//! use fanorona_rules::{Board, Position, legal_moves};
//!
//! // The 5x5 start and its moves, in the paper's notation (A: approach, W: withdrawal).
//! let start = Position::initial("5x5".parse::<Board>().unwrap());
//! let moves: Vec<String> = legal_moves(&start)
//!     .iter()
//!     .map(|m| m.notation(start.board()))
//!     .collect();
//! assert_eq!(moves, ["b2-c3A", "c2-c3A", "d2-c3A", "b3-c3A", "b3-c3W"]);
//!
//! // A count that independent implementations of the rules agree on
//! // (tests/data/perft-reference.tsv): the 3x5 start to depth 3.
//! let pos: Position = "BBBBB/BW.BW/WWWWW w".parse().unwrap();
//! assert_eq!(perft(&pos, 3), 89);
//! ```
#![deny(unsafe_code)]

pub mod diagram;
pub mod geometry;
pub mod machine;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod position;
pub mod repetition;
pub mod rng;
pub mod target;
pub mod version;

pub use geometry::{Bitboard, Board, BoardError};
pub use movegen::Capture;
pub use moves::{Move, MoveError, legal_moves};
pub use position::{Color, Position, PositionError};
pub use target::{TargetError, parse_target};
