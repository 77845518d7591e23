#!/usr/bin/env bash
# The kill-and-resume drill: a daemon solves a board while it is killed with SIGKILL at
# random moments (each after at least one more checkpoint), restarted each time; the value
# must equal an uninterrupted in-memory solve's, and the exported curve must continue
# iteration by iteration without a gap.
# Usage: scripts/kill-resume-drill.sh [BOARD] [KILLS] [DB_DIR]   (defaults: 3x9, 5, no tables)
# Without tables, 3x9 with a small second level takes a few seconds; with tables, try 5x5.
set -euo pipefail
cd "$(dirname "$0")/.."
board=${1:-3x9}
kills=${2:-5}
db=${3:-}
source scripts/lib/drill.sh
bin=$(drill_bin)
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
printf 'second_level = "3000"\ncheckpoint_interval = "50ms"\nlog_level = "warn"\n' >"$tmp/config.toml"
f=("$bin" --config "$tmp/config.toml" --data-dir "$tmp/data")
dbargs=()
[ -n "$db" ] && dbargs=(--db "$db")
reference=$("${f[@]}" solve "$board" --no-store --algo pn2 "${dbargs[@]}" --json 2>/dev/null | field '["value"]')
echo "uninterrupted: $reference"
start_daemon "$tmp/data/daemon.sock"
id=$("${f[@]}" session start "$board" "${dbargs[@]}" --json | field '["id"]')
for k in $(seq "$kills"); do
    before=$(status "$id" | field '["checkpoints"]')
    sleep "0.$((RANDOM % 2))$((RANDOM % 10))"
    while s=$(status "$id") && [ "$(field '["state"]' <<<"$s")" != solved ] \
        && [ "$(field '["checkpoints"]' <<<"$s")" -le "$before" ]; do sleep 0.02; done
    [ "$(status "$id" | field '["state"]')" = solved ] && { echo "solved before kill $k"; break; }
    kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true
    echo "kill $k: SIGKILL after checkpoint $(status "$id" | field '["checkpoints"]') (iterations per question: $(status "$id" | python3 -c 'import json,sys; print(*[g["iterations"] for g in json.load(sys.stdin)["goals"]])'))"
    start_daemon "$tmp/data/daemon.sock"
done
until [ "$(status "$id" | field '["state"]')" = solved ]; do sleep 0.1; done
value=$(status "$id" | field '["value"]')
"${f[@]}" session curve "$id" --csv "$tmp/curve.csv" >/dev/null
python3 - "$tmp/curve.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
prev = {}
for r in rows:
    g, it = r["goal"], int(r["iteration"])
    assert it == prev.get(g, 0) + 1, f"gap or repeat at {g} iteration {it}"
    prev[g] = it
print(f"curve: {len(rows)} points, continuous")
PY
echo "after the kills: $value"
[ "$value" = "$reference" ] && echo "same value: OK" || { echo "DIFFERENT VALUE"; exit 1; }
