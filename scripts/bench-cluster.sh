#!/usr/bin/env bash
# The cluster's cost on one machine, like for like: one question decided in this process
# (`solve --goal`, two threads offered) and by a master with two worker processes of one
# thread each through a local nats-server (`cluster solve --goal`): the same position, the
# same second-level bound, the same first numbers, both to the decision. Counted for each:
# nodes, wall seconds, and processor seconds of every process (the solve's; or the master's,
# the server's and the workers'), and nodes a processor-second. Then the round trip of one
# job (3x9, jobs of one node, one in flight, one worker). Run it on an otherwise idle machine.
#
#   scripts/bench-cluster.sh [POSITION] [GOAL] [SECOND_LEVEL]   (defaults: 7x5 black 30000)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/nats.sh
position=${1:-7x5}
goal=${2:-black}
second_level=${3:-30000}
cluster_bench_setup
question=("$position" --goal "$goal" --second-level "$second_level")
# Processor seconds (user and system) of the processes given, together, from /proc.
cpu() {
    python3 -c "
import sys
t = 0
for p in sys.argv[1:]:
    f = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()
    t += int(f[11]) + int(f[12])
print(t / 100)" "$@"
}

echo "$position, whether $goal wins, second level $second_level; $(nproc) cores; $(date -u +%FT%TZ)"
/usr/bin/time -f '%U %S %e' -o "$work/solo.time" \
    "$bin" "${common[@]}" solve "${question[@]}" --algo pn2-dfpn --threads 2 --no-store --json \
    > "$work/solo.json"

start_nats "$work"
token=$nats_token url=$nats_url server=$nats_pid
pids+=("$server")
workers=()
for i in 1 2; do
    FANORONA_NATS_TOKEN=$token "$bin" "${common[@]}" worker --nats "$url" --name "w$i" --threads 1 \
        2> "$work/w$i.log" &
    workers+=($!)
    pids+=($!)
done
sleep 2
before=$(cpu "$server" "${workers[@]}")
/usr/bin/time -f '%U %S %e' -o "$work/cluster.time" \
    "$bin" "${common[@]}" cluster solve "${question[@]}" --nats "$url" --token-file "$work/token" \
    --jobs 4 --json > "$work/cluster.json"
after=$(cpu "$server" "${workers[@]}")

python3 - "$work" "$before" "$after" <<'PY'
import json, sys
work, before, after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def timed(name):
    u, s, e = open(f"{work}/{name}.time").read().split()[-3:]
    return float(u) + float(s), float(e)
solo = json.load(open(f"{work}/solo.json"))
clus = json.load(open(f"{work}/cluster.json"))
s_nodes = sum(q["nodes"] for q in solo["searches"])
c_nodes = sum(q["nodes"] for q in clus["searches"])
s_cpu, s_wall = timed("solo")
m_cpu, c_wall = timed("cluster")
c_cpu = m_cpu + (after - before)
print(f"in process:      {solo['searches'][0]['outcome']}, {s_nodes} nodes, {s_wall:.1f} s, "
      f"{s_cpu:.1f} processor-s, {s_nodes / s_cpu:.0f} nodes a processor-second")
print(f"master+2 workers: {clus['searches'][0]['outcome']}, {c_nodes} nodes, {c_wall:.1f} s, "
      f"{c_cpu:.1f} processor-s (master {m_cpu:.1f}, server and workers {after - before:.1f}), "
      f"{c_nodes / c_cpu:.0f} nodes a processor-second, {clus['searches'][0]['jobs']} jobs")
print(f"ratio: {(c_nodes / c_cpu) / (s_nodes / s_cpu):.3f} of the in-process rate a processor-second; "
      f"{c_nodes / s_nodes:.3f} of its nodes; {s_wall / c_wall:.2f} times as fast")
PY

# The round trip: a 3x9 question whose jobs are one node each, one in flight, one worker
# (the second stopped): wall time over jobs.
kill -TERM "${workers[1]}"
start=$(date +%s.%N)
out=$(FANORONA_NATS_TOKEN=$token "$bin" "${common[@]}" cluster solve 3x9 --nats "$url" --jobs 1 --second-level 1 --json)
end=$(date +%s.%N)
python3 - "$start" "$end" "$out" <<'PY'
import json, sys
v = json.loads(sys.argv[3])
jobs = sum(s["jobs"] for s in v["searches"])
wall = float(sys.argv[2]) - float(sys.argv[1])
print(f"round trip: {jobs} jobs of one node in {wall:.2f} s, {1000 * wall / jobs:.2f} ms a job (master's tree work included)")
PY
