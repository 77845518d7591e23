"""The jobs each worker of a run ran, from the per-job lines of its log (JSON, debug level):
(start, end) in Unix seconds, the end stamped as answered and the start its seconds before.

    python3 scripts/lib/job_spans.py DIR   # the mean gap between a worker's jobs, as "N.NNNms"
"""
import datetime
import glob
import json
import re
import sys


def spans(log):
    found = []
    for line in open(log):
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        hit = re.search(r"answered in ([0-9.]+) s", e.get("fields", {}).get("message", ""))
        if hit:
            at = datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp()
            found.append((at - float(hit.group(1)), at))
    return found


def workers(run_dir):
    """One list of spans a worker (logs DIR/w*.log)."""
    return [spans(log) for log in sorted(glob.glob(f"{run_dir}/w*.log"))]


def gaps(worker_spans):
    return [b[0] - a[1] for a, b in zip(worker_spans, worker_spans[1:])]


if __name__ == "__main__":
    every = [g for w in workers(sys.argv[1]) for g in gaps(w)]
    print(f"{1000 * sum(every) / max(len(every), 1):.3f}ms")
