//! Fanorona on every board of Schadd et al. (2008): rules, move generation and perft.
#![deny(unsafe_code)]

pub mod config;
pub mod diagram;
pub mod egdb;
pub mod geometry;
pub mod machine;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod play;
pub mod position;
pub mod repetition;
pub mod search;
pub mod target;

pub use geometry::{Bitboard, Board, BoardError};
pub use movegen::Capture;
pub use moves::{Move, MoveError, legal_moves};
pub use position::{Color, Position, PositionError};
pub use target::{TargetError, parse_target};
pub mod certificate;
pub mod daemon;
pub mod session;
pub mod web;
