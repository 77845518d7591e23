#!/usr/bin/env bash
# The proof player from the 5x9 start: GAMES games as White and GAMES as Black against each
# opponent, following the published certificates (docs/certificates, checked over 7-piece
# tables) and the tables. Prints each match's wins, draws and losses, where the proof
# player's moves came from (certificate, tables, a win found, fallback) and the time a move
# of each side; exits 1 if the proof player lost a game.
#
#   scripts/bench-proof-player.sh DB_DIR [GAMES] [OPPONENTS]
#   (defaults: 100 "alphabeta:hard mcts:hard random"; DB_DIR holds the 5x9 tables to 7
#   pieces at least: fanorona db build --board 5x9 --pieces 7 --db DB_DIR, about 11 minutes)
#   THREADS=N: games at once (default 1: each player's time a move is then its own core's).
#   OUT=DIR: keep each match's CSV (a row a game: its end, plies, moves) and JSON there.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: scripts/bench-proof-player.sh DB_DIR [GAMES] [OPPONENTS]}
games=${2:-100}
opponents=${3:-alphabeta:hard mcts:hard random}
threads=${THREADS:-1}
bin=${FANORONA:-target/release/fanorona}
[[ -x $bin ]] || cargo build --release --quiet
if [[ -n ${OUT:-} ]]; then
    out=$OUT
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
echo "proof player from the 5x9 start, $games games a colour; $(nproc) cores, $threads thread(s); $(date -u +%FT%TZ)"
printf '%-16s %5s %5s %5s %7s %13s %7s %5s %9s %12s %12s\n' opponent games wins draws losses \
    "certificate" tables win fallback "proof/move" "them/move"
lost=0
for opp in $opponents; do
    "$bin" match proof "$opp" --board 5x9 --db "$db" --certificates docs/certificates \
        --games $((2 * games)) --threads "$threads" --json --csv "$out/$opp.csv" \
        > "$out/$opp.json" 2> "$out/$opp.err" || { cat "$out/$opp.err" >&2; exit 2; }
    python3 - "$out/$opp.json" "$opp" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
f = m.get("a_moves_from") or {}
print(f"{sys.argv[2]:<16} {m['games']:5} {m['wins']:5} {m['draws']:5} {m['losses']:7} "
      f"{f.get('certificate', 0):13} {f.get('tables', 0):7} {f.get('win', 0):5} {f.get('fallback', 0):9} "
      f"{m['a_seconds_per_move'] * 1e3:9.1f} ms {m['b_seconds_per_move'] * 1e3:9.1f} ms")
PY
    losses=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['losses'])" "$out/$opp.json")
    (( losses == 0 )) || lost=1
done
exit $lost
