#!/usr/bin/env bash
# The 5x9 job in one command, idempotent: builds the missing 7-piece tables, starts the
# daemon unless one runs on the data directory, starts (or resumes) six sessions (the start
# and the position after each of White's five first moves, PN² with df-pn at the second
# level, both questions at once on two threads), shows their progress every minute, and once
# all six are solved prints the table of values, nodes, times and certificate sizes beside
# the paper's. Run it again after any interruption (kill, reboot): the daemon resumes every
# session from its last checkpoint, and the script carries on where it stopped.
# Usage: scripts/solve-5x9.sh [DATA_DIR] [DB_DIR]   (defaults: data, data/egdb)
#        WAIT=0 scripts/solve-5x9.sh ...            (start or resume, print, do not wait)
#        SECOND_LEVEL=N scripts/solve-5x9.sh ...     (new sessions' second-level bound, default
#                                                    30000: README "The second level's bound")
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(realpath -m "${1:-data}")
db=$(realpath -m "${2:-data/egdb}")
mkdir -p "$data" "$db"
cargo build --release --quiet
bin=$PWD/target/release/fanorona
config="$data/solve-5x9.toml"
cat > "$config" <<EOF
# Written by scripts/solve-5x9.sh.
data_dir = "$data"
db_dir = "$db"
threads = 2
checkpoint_interval = "2m"
EOF
f() { "$bin" --config "$config" "$@"; }

echo "== tables: 5x9 up to 7 pieces under $db (built slices are kept)"
f db build --board 5x9 --pieces 7 --db "$db" 2>&1 | tail -1

echo "== daemon on $data"
if python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$data/daemon.sock" 2> /dev/null; then
    echo "already running"
else
    nohup "$bin" --config "$config" daemon >> "$data/daemon.log" 2>&1 &
    sleep 2
    echo "started (log: $data/daemon.log)"
fi

start=$("$bin" show --board 5x9 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["position"])')
names=("5x9 start")
positions=("$start")
for m in f2-e3A d3-e3A e2-e3A d3-e3W d2-e3A; do
    names+=("5x9 $m")
    positions+=("$("$bin" show --board 5x9 --play "$m" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["position"])')")
done

echo "== sessions"
for i in "${!names[@]}"; do
    name=${names[$i]}
    state=$(python3 - "$name" "$(f session list --json)" <<'PY'
import json, sys
found = [s for s in json.loads(sys.argv[2]) if s["name"] == sys.argv[1]]
print(f"{found[-1]['id']} {found[-1]['state']}" if found else "none")
PY
)
    case "$state" in
        none) f session start "${positions[$i]}" --algo pn2-dfpn --db "$db" --name "$name" \
                  --second-level "${SECOND_LEVEL:-30000}" ;;
        # Paused is a user's choice (an interruption leaves sessions running, and the daemon
        # resumes them): say so and leave it.
        *" paused") echo "session ${state% *} ($name): paused; \`fanorona session resume ${state% *}\` continues it" ;;
        *" stopped" | *" failed") f session resume "${state% *}" > /dev/null && echo "resumed ${state% *} ($name)" ;;
        *) echo "session ${state% *} ($name): ${state#* }" ;;
    esac
done

table() {
    python3 - "$data" "$(f session list --json)" <<'PY'
import json, os, sys
data = sys.argv[1]
paper = {"5x9 start": "draw", "5x9 f2-e3A": "draw", "5x9 d3-e3A": "draw",
         "5x9 e2-e3A": "black (thought)", "5x9 d3-e3W": "unknown", "5x9 d2-e3A": "unknown"}
rows = [s for s in json.loads(sys.argv[2]) if s["name"] in paper]
print(f"{'session':<12} {'paper':<16} {'ours':<8} {'questions':<24} {'state':<9} {'nodes':>15} {'hours':>7}  certificates (white wins?, black wins?)")
total = 0
for s in rows:
    secs = sum(g["seconds"] for g in s["goals"])
    # Each question's outcome, and the nodes now (live where it runs).
    live = {p["goal"]: p for p in s.get("live") or []}
    questions = " ".join(f"{g['attacker'][0].upper()}?{g['outcome']}" for g in s["goals"])
    nodes = sum(live[g["attacker"]]["nodes"] if g["attacker"] in live else g["nodes"] for g in s["goals"])
    s["nodes"] = max(s["nodes"], nodes)
    total += s["nodes"]
    certs = []
    for g in ("white", "black"):
        p = os.path.join(data, "certificates", f"session-{s['id']}.{g}-wins.cert.gz")
        certs.append(f"{os.path.getsize(p)} B" if os.path.exists(p) else "-")
    print(f"{s['name']:<12} {paper[s['name']]:<16} {s['value'] or '-':<8} {questions:<24} {s['state']:<9} {s['nodes']:>15} {secs / 3600:>7.2f}  {', '.join(certs)}")
print(f"{len(rows)} sessions, {total} nodes ({total / 130.8e9:.3%} of the paper's 130.8 billion)")
PY
}

solved() {
    python3 - "$(f session list --json)" "${names[@]}" <<'PY'
import json, sys
names = set(sys.argv[2:])
rows = [s for s in json.loads(sys.argv[1]) if s["name"] in names]
sys.exit(0 if rows and all(s["state"] == "solved" for s in rows) else 1)
PY
}

if [ "${WAIT:-1}" = 1 ]; then
    until solved; do
        echo "== $(date '+%F %T')"
        f session list | grep -F "5x9" || true
        sleep 60
    done
fi
echo "== the 5x9 job"
table
