//! Fanorona on every board of Schadd et al. (2008): the rules, endgame tables, proof search
//! with certificates anyone can check, solve sessions kept in a store, players, and the
//! daemon, web app and command line over them.
//!
//! Each layer is a crate under `crates/`, using only those above it (Cargo keeps the order):
//! - `fanorona-rules`: `geometry`, `position`, `movegen`, `moves`, `repetition`, `perft`,
//!   `target` (what a command starts from), `diagram`; with `version` (what this build is)
//!   and `machine` (its memory and disk) beside them;
//! - `fanorona-tables`: `egdb` (retrograde builds, files, probes);
//! - `fanorona-search`: `search` (PN, PN², df-pn, alpha-beta, the rote table), with `config`;
//! - `fanorona-check`: the certificate format and its checker, on the rules and the tables
//!   only; `fanorona-certificate`: `certificate`, writing them from decided searches (and
//!   naming the checker's modules);
//! - `fanorona-session`: `session`, solve sessions in the store, their settings, runs,
//!   curves and certificates;
//! - `fanorona-play`: `play`, agents, games, matches;
//! - `fanorona-cluster`: `cluster`, second-level searches as jobs for workers over NATS
//!   JetStream;
//! - `fanorona-daemon`: `daemon`, the data directory, the socket server, the service, the
//!   workers;
//! - `fanorona-web`: `web`, the HTTP app; the command line (`src/cli/`, the binary) is last.
//!
//! This crate names each layer by its module name, so that `fanorona::search::Goal` is the
//! search crate's `Goal`. `tests/suite/layers.rs` checks the map against the manifests.
#![deny(unsafe_code)]

pub use fanorona_certificate as certificate;
pub use fanorona_cluster as cluster;
pub use fanorona_daemon as daemon;
pub use fanorona_play as play;
pub use fanorona_rules::{
    Bitboard, Board, BoardError, Capture, Color, Move, MoveError, Position, PositionError,
    TargetError, diagram, geometry, legal_moves, machine, movegen, moves, parse_target, perft,
    position, repetition, target, version,
};
pub use fanorona_search as search;
pub use fanorona_search::config;
pub use fanorona_session as session;
pub use fanorona_tables as egdb;
pub use fanorona_web as web;
