#!/usr/bin/env bash
# The test suite: the browser the web tests drive and the NATS server the cluster tests
# start (each installed once), then every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-browser.sh
scripts/install-nats.sh
cargo test --workspace "$@"
