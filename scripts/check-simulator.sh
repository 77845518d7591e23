#!/usr/bin/env bash
# The simulator checked against real runs: one question decided by a master with N worker
# processes of one thread each through a local file-backed nats-server (N jobs in flight),
# its jobs traced; then `cluster simulate` replays the same trace with N workers. Compared:
# jobs a second and the workers' idle fraction (1 - job seconds / (N x the run's seconds)),
# real against model; the check asks both within 20%. Past two workers the processes share
# this machine's two cores, so each job runs longer, and the trace keeps those longer
# seconds: what is checked is the model of dispatch (master, server, round trips, leaves in
# flight), not the cores. Run it on an otherwise idle machine.
#
#   scripts/check-simulator.sh [WORKERS] [POSITION] [GOAL] [SECOND_LEVEL]
#   (defaults: "2 4 8" 7x5 black 30000)
#   LATENCY=1.1 scripts/check-simulator.sh ...   (the model's round trip in ms with two
#       workers, stretched to N/2 times that with N: here N workers share two cores, and their
#       messages wait for the processor as their searches do. Default 0.55, the round trip
#       bench-cluster.sh measures with one worker, not stretched.)
#   LATENCY=gap scripts/check-simulator.sh ...   (the model's round trip set to the mean gap
#       between a worker's jobs in the real run it is checked against: a weaker check, as the
#       model then takes its round trip from that run, and what is left to agree is the rest
#       of the model: the master's turns, the server's queue, the leaves in flight)
#   KEEP=1 scripts/check-simulator.sh ...   (the runs' logs, traces and answers kept)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/nats.sh
counts=${1:-2 4 8}
position=${2:-7x5}
goal=${3:-black}
second_level=${4:-30000}
cluster_bench_setup
# Workers log each job (debug level), so the real idle time can be split: before a worker's
# first job, between its jobs, after its last.
printf 'log_level = "debug"\nlog_format = "json"\n' > "$work/worker.toml"
question=("$position" --goal "$goal" --second-level "$second_level")
echo "$position, whether $goal wins, second level $second_level; $(nproc) cores; $(date -u +%FT%TZ)"
printf '%8s %10s %10s %7s %10s %10s %7s %9s %9s\n' workers "real j/s" "model j/s" ratio \
    "real idle" "model idle" ratio "real s" "model s"
# Seconds of a run: from its search's start (connected) to the decision, as the master counts
# them (the model's from its first job).
latency() {
    if [[ ${LATENCY:-} == gap ]]; then
        mean_gap "$work/$1"
    elif [[ -n ${LATENCY:-} ]]; then
        python3 -c "print(f'{$LATENCY * max($1, 2) / 2:.3f}ms')"
    else
        echo 0.55ms
    fi
}
# The mean gap between a worker's jobs in run DIR (from the workers' per-job lines).
mean_gap() {
    python3 scripts/lib/job_spans.py "$1"
}
for n in $counts; do
    mkdir -p "$work/$n"
    start_nats "$work/$n"
    pids+=("$nats_pid")
    workers=()
    for i in $(seq "$n"); do
        FANORONA_NATS_TOKEN=$nats_token "$bin" --config "$work/worker.toml" worker --nats "$nats_url" \
            --name "w$i" --threads 1 2> "$work/$n/w$i.log" &
        workers+=($!)
        pids+=($!)
    done
    sleep 2
    start=$(date +%s.%N)
    "$bin" "${common[@]}" cluster solve "${question[@]}" --nats "$nats_url" \
        --token-file "$work/$n/token" --jobs "$n" --trace "$work/$n/trace" --json > "$work/$n/real.json"
    # The real run's jobs alone: the model appends to the trace the jobs it runs again.
    cp "$work/$n/trace" "$work/$n/real.trace"
    end=$(date +%s.%N)
    sleep 1
    kill -TERM "${workers[@]}" "$nats_pid" 2>/dev/null || true
    wait "${workers[@]}" "$nats_pid" 2>/dev/null || true
    "$bin" "${common[@]}" cluster simulate "${question[@]}" --workers "$n" \
        --trace "$work/$n/trace" --latency "$(latency "$n")" --json > "$work/$n/model.json"
    python3 - "$n" "$start" "$end" "$work/$n" <<'PY'
import json, sys
n, start, end, dir = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
lines = [json.loads(l) for l in open(f"{dir}/real.trace")][1:]
real = json.load(open(f"{dir}/real.json"))
jobs = sum(s["jobs"] for s in real["searches"])
wall = sum(s["seconds"] for s in real["searches"]) or (end - start)
busy = sum(l["seconds"] for l in lines)
real_jps, real_idle = jobs / wall, 1 - busy / (n * wall)
model = json.load(open(f"{dir}/model.json"))
runs = model["runs"] if isinstance(model, dict) else model
m = runs[-1]
model_jps = m["jobs"] / m["seconds"]
model_idle = 1 - m["busy_seconds"] / (m["workers"] * m["seconds"])
# The real idle split from the workers' per-job lines (time stamped as answered, with their
# seconds): before the first job, between jobs (mean gap), after the last.
sys.path.insert(0, "scripts/lib")
import job_spans
t0 = end - wall
first, gaps, last, worked = [], [], [], 0.0
for spans in job_spans.workers(dir):
    spans = [s for s in spans if s[1] >= t0]
    worked += sum(min(b, end) - max(a, t0) for a, b in spans if b > a)
    if spans:
        first.append(spans[0][0] - t0)
        gaps += job_spans.gaps(spans)
        last.append(end - spans[-1][1])
split = (f"idle split: first job after {sum(first) / len(first):.2f} s, between jobs "
         f"{1000 * sum(gaps) / max(len(gaps), 1):.2f} ms a gap ({sum(gaps) / (n * wall):.1%} of the "
         f"workers' time), after the last {sum(last) / len(last):.2f} s; idle from these lines "
         f"{1 - worked / (n * wall):.1%}") if first else ""
print(f"{n:>8} {real_jps:>10.1f} {model_jps:>10.1f} {model_jps / real_jps:>7.2f} "
      f"{real_idle:>10.1%} {model_idle:>10.1%} {model_idle / max(real_idle, 1e-9):>7.2f} "
      f"{wall:>9.1f} {m['seconds']:>9.1f}   ({jobs} jobs real, {m['jobs']} model, "
      f"{m['ran']} run again)\n         {split}")
PY
done
