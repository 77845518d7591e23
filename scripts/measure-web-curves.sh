#!/usr/bin/env bash
# The web server's memory under many first views of one session's curve at once (PNG and
# JSON), as an operator's dashboard and a crowd of tabs would ask.
#
#   scripts/measure-web-curves.sh [FANORONA] [VIEWS]
#
# Runs a daemon in a temporary data directory, solves a 5x5 session for 20 s (a curve of a
# few thousand points, two resumes), then starts `fanorona serve` and sends VIEWS (300)
# requests at once to each of curve.png and curve. Prints the server's resident memory
# before, its peak and after, in MB.
set -euo pipefail
source "$(dirname "$0")/lib/drill.sh"
bin=${1:-target/release/fanorona}
views=${2:-300}
bin=$(realpath "$bin")
dir=$(mktemp -d)
tmp=$dir
f=("$bin")
port=$((20000 + RANDOM % 20000))
cleanup() {
    [[ -n ${serve:-} ]] && kill "$serve" 2>/dev/null || true
    [[ -n ${daemon:-} ]] && kill "$daemon" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"
printf 'data_dir = "data"\ncheckpoint_interval = "1s"\nverify = false\nlog_level = "warn"\n' > config.toml
export FANORONA_CONFIG=$dir/config.toml
start_daemon data/daemon.sock
"$bin" session start 5x5 >/dev/null
for _ in 1 2; do
    sleep 7
    "$bin" session pause 1 >/dev/null
    "$bin" session resume 1 >/dev/null
done
sleep 6
"$bin" session pause 1 >/dev/null
"$bin" serve --bind "127.0.0.1:$port" >serve.out 2>&1 &
serve=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
token=$(cat data/web.token)
before=$(rss "$serve" VmRSS)
for kind in curve.png curve; do
    for _ in $(seq "$views"); do
        curl -s -o /dev/null -w '%{http_code}\n' -H "x-token: $token" \
            "http://127.0.0.1:$port/api/sessions/1/$kind" &
    done > codes.$kind
    wait $(jobs -p | grep -v -e "^$serve\$" -e "^$daemon\$") 2>/dev/null || true
done
sleep 5
points=$("$bin" session curve 1 --csv points.csv --json | sed 's/.*"points":\([0-9]*\).*/\1/')
echo "curve of $points points; $views views each of curve.png and curve"
for kind in curve.png curve; do
    echo "  $kind answers: $(sort codes.$kind | uniq -c | tr '\n' ' ')"
done
echo "server resident memory: before $before MB, peak $(rss "$serve" VmHWM) MB, 5 s after $(rss "$serve" VmRSS) MB"
