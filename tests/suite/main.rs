//! The integration tests, one binary: each module is what one file tested before (linking
//! twenty binaries of the whole crate took most of the suite's time). A test that must be
//! alone in its process lives apart (`tests/memory_figure.rs`: it measures the process's
//! own memory). Run one module with `cargo test --test suite daemon::`.

#[path = "../common/mod.rs"]
mod common;

mod backups;
mod certificate;
mod cli;
mod cli_honest;
mod cluster;
mod cross_check;
mod daemon;
mod doc_examples;
mod egdb_files;
mod egdb_table3;
mod layers;
mod learn;
mod owner_only;
mod parsers;
mod perft_deep;
mod perft_reference;
mod play_cli;
mod players;
mod proof_player;
mod rules;
mod service;
mod service_unit;
mod session_faults;
mod solve_cross;
mod solve_small;
mod store_format;
mod web;
