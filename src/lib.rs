//! Fanorona on every board of Schadd et al. (2008): the rules, endgame tables, proof search
//! with certificates anyone can check, solve sessions kept in a store, players, and the
//! daemon, web app and command line over them.
//!
//! The layers, each using only those above it:
//! - rules: `geometry`, `position`, `movegen`, `moves`, `repetition`, `perft`, `target` (what
//!   a command starts from), `diagram`; with `version` (what this build is) and `machine`
//!   (its memory and disk) beside them;
//! - tables: `egdb` (retrograde builds, files, probes);
//! - search: `search` (PN, PN², df-pn, alpha-beta, the rote table), and `config` beside it;
//! - `certificate`: writing and checking solution trees (the checker uses only the rules
//!   and the table probe);
//! - `session`: solve sessions in the store, their settings, runs, curves and certificates;
//! - `play`: agents, games, matches;
//! - `cluster`: second-level searches as jobs for workers over NATS JetStream;
//! - `daemon`: the data directory, the socket server, the service, the workers;
//! - `web`: the HTTP app; the command line (`src/cli/`, the binary) is last.
//!
//! `tests/suite/layers.rs` checks the map against the code.
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
pub mod version;

pub use geometry::{Bitboard, Board, BoardError};
pub use movegen::Capture;
pub use moves::{Move, MoveError, legal_moves};
pub use position::{Color, Position, PositionError};
pub use target::{TargetError, parse_target};
pub mod certificate;
pub mod cluster;
pub mod daemon;
pub mod session;
pub mod web;
