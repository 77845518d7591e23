#!/usr/bin/env bash
# The cluster's cost on one machine: the same session run for SECONDS by the daemon alone
# (its two threads, one a question) and by the daemon with [cluster] and two worker
# processes (one thread each), then the round trip of one job (3x9 with jobs of one node,
# one in flight, one worker). Prints nodes a second of each, their ratio, and ms a job.
# Run it on an otherwise idle machine: both setups use both cores.
#
#   scripts/bench-cluster.sh [SECONDS] [POSITION] [SECOND_LEVEL]   (defaults: 120 5x5 30000)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
position=${2:-5x5}
second_level=${3:-30000}
scripts/install-nats.sh
cargo build --release --quiet
bin=$PWD/target/release/fanorona
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=nats://127.0.0.1:$port
# The token in files only this user reads, never on a command line (`ps` shows those).
(umask 077 && printf '%s' "$token" > "$work/token" &&
    printf 'authorization { token: "%s" }\n' "$token" > "$work/nats.conf")
/usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -c "$work/nats.conf" -sd "$work/nats" > /dev/null 2>&1 &
pids+=($!)
sleep 1

# One run: config text, then the session for SECONDS; prints its nodes a second.
run() {
    local name=$1 config=$2
    mkdir -p "$work/$name"
    printf '%s' "$config" > "$work/$name/config.toml"
    local f=("$bin" --config "$work/$name/config.toml" --data-dir "$work/$name/data")
    "${f[@]}" daemon 2> "$work/$name/daemon.log" &
    local daemon=$!
    sleep 1
    "${f[@]}" session start "$position" --algo pn2-dfpn --json > /dev/null
    sleep "$seconds"
    "${f[@]}" session status 1 --json > "$work/$name/status.json"
    kill -TERM "$daemon"
    wait "$daemon" || true
    python3 - "$work/$name/status.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
live = s.get("live") or []
nodes = sum(p["nodes"] for p in live) or s["nodes"]
secs = max([p["seconds"] for p in live] or [s["seconds"]])
jobs = sum(j["answered"] for j in s.get("jobs", []))
print(f"{nodes} {secs:.1f} {nodes / secs:.0f} {jobs}")
EOF
}

base="threads = 2
second_level = \"$second_level\"
log_level = \"warn\"
"
read -r n1 s1 r1 _ < <(run alone "$base")
echo "daemon alone: $n1 nodes in $s1 s, $r1 nodes/s"

for i in 1 2; do
    FANORONA_NATS_TOKEN=$token "$bin" worker --nats "$url" --name "w$i" 2> "$work/w$i.log" &
    pids+=($!)
done
read -r n2 s2 r2 j2 < <(run cluster "$base
[cluster]
nats = \"$url\"
token_file = \"$work/token\"
jobs = 4
")
echo "daemon + 2 workers: $n2 nodes in $s2 s, $r2 nodes/s, $j2 jobs"
python3 -c "print(f'ratio: {$r2 / $r1:.3f} of the daemon alone')"

# The round trip: a 3x9 question whose jobs are one node each, one in flight, one worker
# (the second stopped): wall time over jobs.
kill -TERM "${pids[2]}"
start=$(date +%s.%N)
out=$(FANORONA_NATS_TOKEN=$token "$bin" cluster solve 3x9 --nats "$url" --jobs 1 --second-level 1 --json)
end=$(date +%s.%N)
python3 - "$start" "$end" <<EOF
import json, sys
v = json.loads('''$out''')
jobs = sum(s["jobs"] for s in v["searches"])
wall = float(sys.argv[2]) - float(sys.argv[1])
print(f"round trip: {jobs} jobs of one node in {wall:.2f} s, {1000 * wall / jobs:.2f} ms a job (master's tree work included)")
EOF
