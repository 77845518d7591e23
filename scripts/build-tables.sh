#!/usr/bin/env bash
# Builds and verifies the endgame tables for every board of Table 4: 5x9 (and 9x5) up to 7
# pieces, 5x5 up to 9, 5x7 (and 7x5) up to 8 (the paper: 7), 3x9 (and 9x3) up to 7.
# A board and its transpose share one set of files. Finished slices are kept, so a killed run
# resumes where it stopped. Roughly 45 minutes and 4 GB of files on 2 cores (the 8-piece
# 5x7 slices alone about 21 minutes, peak RSS 1.7 GB).
# Usage: scripts/build-tables.sh [DB_DIR]   (default: data/egdb)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-data/egdb}
cargo build --release --quiet
bin=target/release/fanorona
for spec in 3x9:7 5x7:8 5x5:9 5x9:7; do
    board=${spec%:*}
    pieces=${spec#*:}
    echo "== $board up to $pieces pieces"
    /usr/bin/env time -f "%e s, max RSS %M KiB" $bin db build --board "$board" --pieces "$pieces" --db "$dir"
    $bin db verify --board "$board" --db "$dir" | tail -1
done
$bin db stats --board 5x9 --db "$dir"
