#!/usr/bin/env bash
# Times the proof explorer on the published 5x9 start certificates: the first walk (which
# indexes both files) and steps down a line after it.
#   scripts/measure-explorer.sh BIN TABLES_DIR
# TABLES_DIR holds the 5x9 tables up to 7 pieces (either index), which the checker needs.
set -euo pipefail
bin=${1:?usage: scripts/measure-explorer.sh BIN TABLES_DIR}
db=${2:?usage: scripts/measure-explorer.sh BIN TABLES_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/certs" "$work/data"
cp "$here"/docs/certificates/5x9-start.*.cert.gz "$work/certs/"
port=$((20000 + RANDOM % 20000))
"$bin" serve --bind "127.0.0.1:$port" --data-dir "$work/data" --db "$db" \
    --certificates "$work/certs" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$work/data/web.token" ] && break; sleep 0.1; done
token=$(cat "$work/data/web.token")
get() { curl -sf -o /dev/null -w '%{time_total}' -G -H "x-token: $token" "http://127.0.0.1:$port$1" "${@:2}"; }
for _ in $(seq 100); do get /api/info >/dev/null 2>&1 && break; sleep 0.1; done
root='BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w'
echo "listing (checks both certificates): $(get /api/proofs) s"
line=""
for mv in "" d2-e3A g4-g5W d3-d2W; do
    line="${line:+$line }$mv"
    echo "walk to '${line:-root}': $(get /api/proofs/walk --data-urlencode "root=$root" --data-urlencode "line=$line") s"
done
