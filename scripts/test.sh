#!/usr/bin/env bash
# The test suite: the browser the web tests drive (installed once), then every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-browser.sh
cargo test "$@"
