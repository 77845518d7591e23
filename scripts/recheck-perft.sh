#!/usr/bin/env bash
# Re-computes every deep perft count of tests/data/perft-deep.tsv with the simple, separately
# written model of the rules (tests/common/simple_rules.rs). Takes about a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release -p fanorona --test suite perft_deep -- --include-ignored --nocapture
