#!/usr/bin/env python3
"""The web app's speed, measured from outside as a browser would meet it.

  scripts/bench-web.py [--config FILE] [--session ID] [--seconds S] [--bin PATH]

1. Page load: the page, its script and style, the boards and a 5x9 game (what the play page
   fetches before it draws), 20 times; the median and the slowest total.
2. A move against each hard player (and perfect play) from the 5x9 and 5x5 starts, 5 times
   each; the median and the slowest answer beside the level's budget.
3. With --session ID (a running session of the config's daemon): what a page watching it costs
   the solve. S seconds without a page, then S seconds polled as the session page polls (its
   curve and log every 2 s); the solve's rate in each window (from its progress log), the
   server's CPU time, and the daemon's time answering.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# The server's token, from the link it prints; every API request carries it.
TOKEN = ""


def request(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("x-token", TOKEN)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        payload = r.read()
    return time.perf_counter() - t, payload


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def log_rate(path, start, end):
    """Median nodes a second of the progress lines written between start and end."""
    rates = []
    with open(path) as f:
        for line in f:
            try:
                p = json.loads(line)
            except ValueError:
                continue
            if p.get("event") == "progress" and start <= p["time"] <= end:
                rates.append(p["nodes_per_second"])
    return (statistics.median(rates) if rates else float("nan")), len(rates)


def thread_cpu(pid):
    """CPU seconds of each live thread of `pid`, and of the whole process."""
    ticks = os.sysconf("SC_CLK_TCK")
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            threads[tid] = (int(fields[11]) + int(fields[12])) / ticks
        except OSError:
            pass
    return threads, cpu_seconds(pid)


def find_daemon(config):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"daemon" in argv and any(b"fanorona" in x for x in argv[:1]) and (
            config.encode() in argv
        ):
            return int(pid)
    return None


def watch(a, base, server_pid):
    """Alternating windows, unwatched then watched, `rounds` times."""
    sid = a.session
    _, st = request(base, "GET", f"/api/sessions/{sid}")
    status = json.loads(st)
    log = status["log"]
    if status["state"] != "running":
        sys.exit(f"session {sid} is {status['state']}: start or resume it first")
    daemon = find_daemon(a.config)
    unwatched, watched, calls = [], [], []
    server_cpu = answering_cpu = worker_cpu = 0.0
    for _ in range(a.rounds):
        t0 = time.time()
        time.sleep(a.seconds)
        unwatched.append(log_rate(log, t0, time.time())[0])
        s0 = cpu_seconds(server_pid)
        d0 = thread_cpu(daemon) if daemon else None
        t0 = time.time()
        offset = 0
        while time.time() - t0 < a.seconds:
            t = time.perf_counter()
            request(base, "GET", f"/api/sessions/{sid}/curve")
            _, payload = request(base, "GET", f"/api/sessions/{sid}/log?from={offset}")
            offset = json.loads(payload)["next"]
            calls.append(time.perf_counter() - t)
            time.sleep(max(0.0, 2.0 - (time.perf_counter() - t)))
        watched.append(log_rate(log, t0, time.time())[0])
        server_cpu += cpu_seconds(server_pid) - s0
        if d0:
            d1 = thread_cpu(daemon)
            lasting = [t for t in d0[0] if t in d1[0]]
            lasting_cpu = sum(d1[0][t] - d0[0][t] for t in lasting)
            # Threads that came and went in the window: the answers to the page.
            answering_cpu += (d1[1] - d0[1]) - lasting_cpu
            worker_cpu += max(d1[0][t] - d0[0][t] for t in lasting)
    ra, rb = statistics.median(unwatched), statistics.median(watched)
    print(
        f"session {sid}, {a.rounds} rounds of {a.seconds:.0f} s: median {ra / 1e6:.3f} M nodes/s "
        f"unwatched, {rb / 1e6:.3f} M nodes/s watched ({100 * (rb - ra) / ra:+.2f}%; "
        f"rounds unwatched {[round(r / 1e6, 3) for r in unwatched]}, "
        f"watched {[round(r / 1e6, 3) for r in watched]})"
    )
    span = a.rounds * a.seconds
    print(
        f"  the server: {server_cpu:.2f} s CPU in {span:.0f} s watched "
        f"({100 * server_cpu / span:.2f}% of one core); {len(calls)} polls, median "
        f"{statistics.median(calls) * 1000:.1f} ms each (the daemon's answers within)"
    )
    if daemon and worker_cpu > 0:
        print(
            f"  the daemon's answers: {answering_cpu:.3f} s CPU against its busiest thread's "
            f"{worker_cpu:.1f} s ({100 * answering_cpu / worker_cpu:.3f}%)"
        )


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config.toml")
    ap.add_argument("--session", type=int)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--bin", default="target/release/fanorona")
    a = ap.parse_args()

    port = free_port()
    server = subprocess.Popen(
        [a.bin, "--config", a.config, "serve", "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        link = server.stdout.readline().strip()
        print(link.split("?token=")[0])
        TOKEN = link.split("?token=")[1]
        base = f"http://127.0.0.1:{port}"

        totals = []
        for _ in range(20):
            t = 0.0
            for method, path, body in [
                ("GET", "/", None),
                ("GET", "/app.js", None),
                ("GET", "/style.css", None),
                ("GET", "/api/info", None),
                ("POST", "/api/game", {"start": "5x9", "moves": []}),
            ]:
                dt, _ = request(base, method, path, body)
                t += dt
            totals.append(t)
        print(
            f"page load (5 requests): median {statistics.median(totals) * 1000:.1f} ms, "
            f"slowest {max(totals) * 1000:.1f} ms (limit 1000 ms)"
        )

        for player, budget in [
            ("alphabeta:hard", 1.0),
            ("mcts:hard", 1.0),
            ("perfect", None),
        ]:
            for start in ["5x9", "5x5"]:
                times = []
                for seed in range(5):
                    dt, payload = request(
                        base,
                        "POST",
                        "/api/agent",
                        {"start": start, "moves": [], "player": player, "seed": seed},
                    )
                    times.append(dt)
                move = json.loads(payload)["move"]
                limit = f"budget {budget:.1f} s" if budget else "no fixed budget"
                print(
                    f"{player:15} {start}: median {statistics.median(times):.3f} s, "
                    f"slowest {max(times):.3f} s ({limit}); e.g. {move}"
                )

        if a.session is not None:
            watch(a, base, server.pid)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
