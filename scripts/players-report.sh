#!/usr/bin/env bash
# The players measured: every player against random (200 games a board), WINIMAX against
# plain perfect play facing fallible players (1000 games from the 5x5 start, and from drawn
# 4-against-3 positions of the 5x9 tables), and the paper's Section 3 (`fanorona stats`).
# Writes one CSV a match and the summaries (JSON lines) under OUT.
# Needs the 5x5 and 5x9 tables: scripts/build-tables.sh builds them.
# Usage: scripts/players-report.sh [DB_DIR] [OUT]   (defaults: data/egdb, data/players)
#        GAMES=200 WINIMAX_GAMES=1000 STATS_GAMES=10000 scripts/players-report.sh ...
#        (STATS_GAMES=0 leaves the statistics out)
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-data/egdb}
out=${2:-data/players}
mkdir -p "$out"
cargo build --release --quiet
bin=${BIN:-$PWD/target/release/fanorona}
games=${GAMES:-200}
wgames=${WINIMAX_GAMES:-1000}
summary="$out/summary.jsonl"
: > "$summary"
m() { # A B BOARD-OR-STARTS GAMES NAME
    local where=(--board "$3") tables=()
    [ -f "$3" ] && where=(--starts "$3")
    # The tables, where there are some for the board (5x9 for the drawn positions).
    local board=$3
    [ -f "$3" ] && board=5x9
    [ -d "$db/$board" ] && tables=(--db "$db")
    local time=()
    [ -n "${MOVE_TIME:-}" ] && time=(--move-time "$MOVE_TIME")
    "$bin" match "$1" "$2" "${where[@]}" --games "$4" "${tables[@]}" "${time[@]}" --csv "$out/$5.csv" --json \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); d["name"]=sys.argv[1]; print(json.dumps(d))' "$5" \
        | tee -a "$summary" | python3 -c '
import json,sys
d=json.load(sys.stdin)
n, w, dr, l = d["name"], d["wins"], d["draws"], d["losses"]
s, lo, hi, ms = d["score"], d["score_low"], d["score_high"], d["a_seconds_per_move"] * 1000
print(f"{n:<36} {w:>5} {dr:>5} {l:>5}  score {s:.3f} [{lo:.3f}, {hi:.3f}]  {ms:.2f} ms a move")'
}

echo "== every player against random, $games games a board (wins draws losses for the player)"
for board in 3x3 5x5 5x9; do
    for p in minimax alphabeta mcts; do m "$p" random "$board" "$games" "$p-random-$board"; done
done
for board in 3x3 5x5; do
    for p in perfect winimax; do m "$p" random "$board" "$games" "$p-random-$board"; done
done
# 5x9: the tables answer only its endgames; elsewhere df-pn and alpha-beta share 0.2 s a move.
for p in perfect winimax; do MOVE_TIME=0.2 m "$p" random 5x9 "$games" "$p-random-5x9"; done

echo "== drawn 4-against-3 positions of the 5x9 tables"
starts="$out/drawn-4v3-5x9.txt"
python3 - "$db" "$bin" > "$starts" <<'PY'
import random, subprocess, sys
db, binary = sys.argv[1], sys.argv[2]
rng = random.Random(7)
cands = []
for _ in range(4000):
    cells = rng.sample(range(45), 7)
    board = ["."] * 45
    for c in cells[:4]: board[c] = "W"
    for c in cells[4:]: board[c] = "B"
    rows = ["".join(board[r * 9:(r + 1) * 9]) for r in range(5)]
    cands.append("/".join(rows) + " " + rng.choice("wb"))
out = subprocess.run([binary, "db", "probe", "--batch", "--db", db], input="\n".join(cands) + "\n",
                     capture_output=True, text=True).stdout.split()
drawn = [p for p, v in zip(cands, out) if v == "d"]
print("\n".join(drawn[:200]))
PY
echo "$(wc -l < "$starts") drawn positions"

echo "== WINIMAX and perfect play against fallible players, $wgames games each"
for opp in random alphabeta:easy mcts:easy; do
    for p in winimax perfect; do
        m "$p" "$opp" 5x5 "$wgames" "$p-$opp-5x5"
        m "$p" "$opp" "$starts" "$wgames" "$p-$opp-4v3"
    done
done

if [ "${STATS_GAMES:-10000}" -gt 0 ]; then
    echo "== the paper's Section 3"
    "$bin" stats --games "${STATS_GAMES:-10000}" --out "$out" | tee "$out/stats.txt"
fi
