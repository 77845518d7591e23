#!/usr/bin/env bash
# Starts a solve-session daemon (if none runs on the data directory), starts a session on the
# 5x9 start over the 7-piece tables, and shows how to follow it and export its curve.
# The tables must exist: `fanorona db build --board 5x9 --pieces 7 --db DB` (about 11
# minutes on 2 cores) or scripts/build-tables.sh.
# Usage: scripts/daemon-5x9.sh [DB_DIR] [DATA_DIR]    (defaults: data/egdb, data)
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-data/egdb}
data=${2:-data}
cargo build --release --quiet
bin=target/release/fanorona
f=("$bin" --data-dir "$data")
if [ ! -d "$db/5x9" ]; then
    echo "no 5x9 tables under $db: build them with '$bin db build --board 5x9 --pieces 7 --db $db'" >&2
    exit 2
fi
mkdir -p "$data"
if [ ! -S "$data/daemon.sock" ] || ! "${f[@]}" session list >/dev/null 2>&1; then
    # The daemon runs in the foreground; here it is sent to the background. It writes its
    # log to $data/daemon.log itself (rotated); daemon.out keeps what else it prints.
    nohup "${f[@]}" daemon >>"$data/daemon.out" 2>&1 &
    for _ in $(seq 100); do [ -S "$data/daemon.sock" ] && break; sleep 0.1; done
    echo "daemon started (pid $!), its log in $data/daemon.log"
fi
id=$("${f[@]}" session start 5x9 --db "$db" --name "5x9 start" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "session $id started. Follow it with:"
echo "  $bin --data-dir $data session status $id"
echo "  $bin --data-dir $data session tail $id --follow"
echo "Export the root's pn/dpn curve (the paper's Figures 7 and 8) with:"
echo "  $bin --data-dir $data session curve $id --csv 5x9.csv --png 5x9.png"
echo "Stop the daemon with SIGTERM or Ctrl-C (it checkpoints first); starting it again resumes:"
echo "  kill -TERM \$(cat $data/daemon.lock); nohup $bin --data-dir $data daemon >>$data/daemon.out 2>&1 &"
