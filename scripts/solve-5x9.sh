#!/usr/bin/env bash
# The 5x9 job in one command, idempotent: builds the missing 7-piece tables, starts the
# daemon unless one runs on the data directory, starts (or resumes) six sessions (the start
# and the position after each of White's five first moves, PN² with df-pn at the second
# level, both questions at once on two threads), shows their progress every minute, and once
# all six are solved prints the table of values, nodes, times and certificate sizes beside
# the paper's. While it waits it writes the certificate of each question as soon as it is
# decided (under DATA_DIR/certificates/5x9). Run it again after any interruption (kill, reboot): the daemon resumes every
# session from its last checkpoint, and the script carries on where it stopped.
# Usage: scripts/solve-5x9.sh [DATA_DIR] [DB_DIR]   (defaults: data, data/egdb)
#        WAIT=0 scripts/solve-5x9.sh ...            (start or resume, print, do not wait
#                                                    nor write certificates)
#        SECOND_LEVEL=B scripts/solve-5x9.sh ...     (new sessions' second-level bound, default
#                                                    max(30000,tree/100): docs/journal/5x9.md,
#                                                    "The second level's bound")
#        PIECES=8 scripts/solve-5x9.sh DATA DB8      (tables up to 8 pieces, one entry per
#                                                    class under the board's mirrors: 80 minutes
#                                                    of both cores and 3.6 GB; PIECES=9 adds
#                                                    3.5 hours more, 16 GiB at its peak, 30 GB.
#                                                    A killed build resumes at its pair and
#                                                    round. Sessions on other tables move onto
#                                                    DB8.)
#        INDEX=paper scripts/solve-5x9.sh ...        (new slices in the paper's index, every
#                                                    position: four times the memory and disk)
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

pieces=${PIECES:-7}
echo "== tables: 5x9 up to $pieces pieces under $db (built slices are kept)"
f db build --board 5x9 --pieces "$pieces" --db "$db" --index "${INDEX:-symmetric}" 2>&1 | tail -1

echo "== daemon on $data"
if python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$data/daemon.sock" 2> /dev/null; then
    echo "already running"
else
    # It writes its log to $data/daemon.log itself (rotated); daemon.out keeps the rest.
    nohup "$bin" --config "$config" daemon >> "$data/daemon.out" 2>&1 &
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
    read -r id st tables why < <(python3 - "$name" "$(f session list --json)" <<'PY'
import json, sys
found = [s for s in json.loads(sys.argv[2]) if s["name"] == sys.argv[1]]
s = found[-1] if found else None
print(f"{s['id']} {s['state']} {s['db_dir']} {s.get('error') or ''}" if s else "none")
PY
)
    state="$id${st:+ $st}"
    # A session on other tables moves onto these (say, the 8-piece ones once built): paused
    # for the change if it runs or waits its turn, then resumed; the trees it kept stay.
    if [ "$id" != none ] && [ "$st" != solved ] && [ "$tables" != "$db" ]; then
        active=no; case "$st" in running | queued) active=yes ;; esac
        [ $active = yes ] && f session pause "$id" > /dev/null
        f session tune "$id" --db "$db" > /dev/null && echo "session $id ($name): now on $db"
        [ $active = yes ] && f session resume "$id" > /dev/null
    fi
    case "$state" in
        none) f session start "${positions[$i]}" --algo pn2-dfpn --db "$db" --name "$name" \
                  --second-level "${SECOND_LEVEL:-max(30000,tree/100)}" ;;
        # Paused is a user's choice (an interruption leaves sessions running, and the daemon
        # resumes them): say so and leave it.
        # The daemon pauses a session itself past its memory bound: the reason is shown.
        *" paused") echo "session ${state% *} ($name): paused${why:+ ($why)}; \`fanorona session resume ${state% *}\` continues it" ;;
        *" stopped" | *" failed") f session resume "${state% *}" > /dev/null && echo "resumed ${state% *} ($name)" ;;
        *) echo "session ${state% *} ($name): ${state#* }" ;;
    esac
done

# The twelve questions (White wins? Black wins? after each of the six positions): decided in
# the position's own session, or as a move of the start in the start's session; with the
# certificate of each decided one under $certs (written by `certify`).
certs="$data/certificates/5x9"
report() {
    python3 - "$1" "$certs" "$(f session list --json)" "$(f session moves 1 --json 2> /dev/null || echo null)" <<'PY'
import gzip, json, os, sys
mode, certs = sys.argv[1], sys.argv[2]
sessions = {s["name"]: s for s in json.loads(sys.argv[3])}
start_moves = json.loads(sys.argv[4]) if sys.argv[4] != "null" else None
INF = 2**62
paper = {"start": "draw", "f2-e3A": "draw", "d3-e3A": "draw",
         "e2-e3A": "black (thought)", "d3-e3W": "unknown", "d2-e3A": "unknown"}
rows, todo = [], []
for tag in paper:
    s = sessions.get(f"5x9 {tag}")
    outcome = {}
    for attacker in ("white", "black"):
        g = next((g for g in (s or {}).get("goals", []) if g["attacker"] == attacker), None)
        live = {p["goal"]: p for p in (s or {}).get("live") or []}.get(attacker)
        nodes = live["nodes"] if live else (g["nodes"] if g else 0)
        hours = (g["seconds"] if g else 0) / 3600
        res, where = (g["outcome"] if g else "open"), (f"session {s['id']}" if s else "-")
        if res == "open" and tag != "start" and start_moves:
            q = next((q for q in start_moves["questions"] if q["attacker"] == attacker), None)
            m = next((m for m in (q or {}).get("moves", []) if m["move"] == tag), None)
            if m and (m["pn"] == 0 or m["dn"] == 0):
                res = "proven" if m["pn"] == 0 else "disproven"
                where, nodes, hours = "start's tree", None, None
        if s and s["value"]:
            res = res if res != "open" else ("proven" if s["value"] == attacker else "disproven")
        outcome[attacker] = res
        path = os.path.join(certs, f"5x9-{tag}.{attacker}-wins.cert.gz")
        # A question the start's tree decided at this move is checked inside the start's
        # certificate when that one holds every first move: White (to move) not winning, or
        # Black winning.
        start_cert = os.path.join(certs, f"5x9-start.{attacker}-wins.cert.gz")
        every_move = (attacker, res) in (("white", "disproven"), ("black", "proven"))
        cert = "-"
        if os.path.exists(path):
            with gzip.open(path, "rt") as fh:
                lines = sum(1 for _ in fh) - 1
            cert = f"{lines} nodes, {os.path.getsize(path) / 1e6:.2f} MB"
        elif where == "start's tree" and every_move and os.path.exists(start_cert):
            cert = "in the start's"
            todo.append((tag, "1", attacker))
        elif res != "open":
            todo.append((tag, "1" if where == "start's tree" else where.split()[-1], attacker))
        rows.append((tag, attacker, res, where, nodes, hours, cert))
    w, b = outcome["white"], outcome["black"]
    value = "white" if w == "proven" else "black" if b == "proven" else \
        "draw" if (w, b) == ("disproven", "disproven") else \
        "white at least draws" if b == "disproven" else "black at least draws" if w == "disproven" else "-"
    rows.append((tag, None, value, None, None, None, None))
if mode == "todo":
    for tag, source, attacker in dict.fromkeys(todo):
        print(tag, source, attacker)
    sys.exit(0)
print(f"{'position':<9} {'paper':<16} {'ours':<21} {'question':<12} {'answer':<10} {'decided in':<13} {'nodes':>15} {'hours':>6}  certificate")
total = sum(s["nodes"] for s in sessions.values() if s["name"].startswith("5x9 "))
value_of = {r[0]: r[2] for r in rows if r[1] is None}
for tag, attacker, res, where, nodes, hours, cert in rows:
    if attacker is None:
        continue
    first = attacker == "white"
    print(f"{tag if first else '':<9} {paper[tag] if first else '':<16} {value_of[tag] if first else '':<21} "
          f"{attacker + ' wins?':<12} {res:<10} {where:<13} {'' if nodes is None else nodes:>15} "
          f"{'' if hours is None else f'{hours:.2f}':>6}  {cert}")
print(f"{total} nodes in the six sessions ({total / 130.8e9:.1%} of the paper's 130.8 billion)")
PY
}

# Writes the certificate of every decided question that has none under $certs yet: cut from
# the start's certificate of that question when it answers the move (`fanorona cut`, in a
# second: a disproof of "White wins?" answers every first move, a disproof of "Black wins?"
# the one White chose), else from the question's own session, or from the start's tree for a
# move of the start (through the daemon, which holds the store; re-solving what a session took
# from the rote store can take hours, see docs/guide/certificates.md).
certify() {
    mkdir -p "$certs"
    local todo
    todo=$(report todo)
    while read -r tag id attacker; do
        [ -n "$tag" ] || continue
        from="$certs/5x9-start.$attacker-wins.cert.gz"
        if [ "$tag" != start ] && [ -e "$from" ] && f cut "$from" --play "$tag" \
            --out "$certs/5x9-$tag.$attacker-wins.cert.gz" 2> /dev/null < /dev/null; then
            continue
        fi
        # The start's own certificate of this question is still to come: the move's is cut
        # from it then, not written again beside it from the same tree.
        if [ "$tag" != start ] && [ "$id" = 1 ] && grep -qx "start 1 $attacker" <<< "$todo"; then
            continue
        fi
        echo "== certificate of 5x9 $tag (session $id)"
        if [ "$tag" != start ] && [ "$id" = 1 ]; then
            f session certificate 1 "$certs/5x9-$tag" --move "$tag" < /dev/null || true
        else
            f session certificate "$id" "$certs/5x9-$tag" < /dev/null || true
        fi
    done <<< "$todo"
}

# While the start's "White wins?" is open, a first move's session whose "Black wins?" is
# decided would search its "White wins?" next: a subtree of the start's own search, so the
# same work twice on the spare thread (a disproof at the start answers every first move, and
# the rote store then answers the move's session at its root). Such a session is paused,
# noted in $held, and resumed once the start is solved; a session paused by hand is left
# alone.
held="$data/held-for-the-start"
hold() {
    python3 - "$(f session list --json)" "$held" <<'PY' | while read -r verb id name; do
import json, os, sys
sessions, held = json.loads(sys.argv[1]), sys.argv[2]
noted = set(open(held).read().split()) if os.path.exists(held) else set()
start = next((s for s in sessions if s["name"] == "5x9 start"), None)
open_white = start is not None and start["state"] != "solved" and any(
    g["attacker"] == "white" and g["outcome"] == "open" for g in start["goals"])
for s in sessions:
    if not s["name"].startswith("5x9 ") or s["name"] == "5x9 start":
        continue
    goals = {g["attacker"]: g["outcome"] for g in s["goals"]}
    if open_white and s["state"] in ("running", "queued") and goals.get("black", "open") != "open" \
            and goals.get("white", "open") == "open":
        print("pause", s["id"], s["name"])
    elif not open_white and str(s["id"]) in noted and s["state"] == "paused":
        print("resume", s["id"], s["name"])
PY
        # (A session that changed meanwhile, solved or resumed by hand, is left as it is.)
        if [ "$verb" = pause ]; then
            if f session pause "$id" > /dev/null < /dev/null; then
                echo "$id" >> "$held"
                echo "session $id ($name): paused until the start is solved (its White wins? lies in the start's tree)"
            fi
        elif f session resume "$id" > /dev/null < /dev/null; then
            sed -i "/^$id\$/d" "$held"
            echo "session $id ($name): resumed, the start is solved"
        fi
    done
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
        hold || echo "could not read the sessions this minute; trying again"
        certify
        sleep 60
    done
    certify
fi
echo "== the 5x9 job"
report table
