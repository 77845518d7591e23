#!/usr/bin/env bash
# How long `session status` waits while a session checkpoints: a daemon in a temporary data
# directory, a 9x3 session with --second-level 1 (large checkpoints) every 2 s, a status
# request every 0.2 s for 40 s; prints the median, 90th percentile and maximum.
# Usage: scripts/status-latency.sh [BINARY]   (default: target/release/fanorona)
set -u
bin=$(realpath "${1:-target/release/fanorona}"); dir=$(mktemp -d)
printf 'data_dir = "%s/data"\nthreads = 1\ncheckpoint_interval = "2s"\nlog_level = "warn"\n' "$dir" > "$dir/c.toml"
"$bin" --config "$dir/c.toml" daemon > "$dir/d.log" 2>&1 &
dpid=$!
sleep 1
"$bin" --config "$dir/c.toml" session start 9x3 --second-level 1 > /dev/null
sleep 5
python3 - "$bin" "$dir/c.toml" <<'PY'
import subprocess, sys, time, statistics
bin, conf = sys.argv[1], sys.argv[2]
t = []
end = time.time() + 40
while time.time() < end:
    a = time.time()
    subprocess.run([bin, "--config", conf, "session", "status", "1", "--json"], capture_output=True)
    t.append(time.time() - a)
    time.sleep(0.2)
t.sort()
print(f"{len(t)} calls: median {statistics.median(t):.3f} s, 90th {t[int(len(t)*0.9)]:.3f} s, max {t[-1]:.3f} s")
PY
"$bin" --config "$dir/c.toml" session status 1 | sed -n 4p
kill -TERM $dpid; wait $dpid 2>/dev/null; rm -rf "$dir"
