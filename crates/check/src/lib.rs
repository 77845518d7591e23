//! Proof certificates read and checked (format 1 of `docs/CERTIFICATE.md`) with the rules and
//! the table probe alone: `format` (the header, node lines, gzip in and out), `check` (the
//! streaming checker), `explore` (a certificate walked as a tree), `stitch` (open leaves
//! closed by certificates of their own) and `cut` (the certificate of a position inside
//! another).
//!
//! This crate depends on `fanorona-rules` and `fanorona-tables` only: the searches that
//! write certificates cannot be reached from here, so a checker that passes a certificate
//! shares no code with what produced it.
#![deny(unsafe_code)]

pub mod check;
pub mod cut;
pub mod explore;
pub mod format;
pub mod report;
pub mod stitch;
