//! Shared by the integration tests; each test file uses a part of it.
#![allow(dead_code)]

pub mod data;
pub mod simple_rules;
pub mod tables;

#[allow(unused_imports)]
pub use data::*;
pub mod browser;
