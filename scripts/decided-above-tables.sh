#!/usr/bin/env bash
# Positions above the tables that sessions decided, for `fanorona learn --rote FILE` (a test
# of how the value model carries over, with wins in it, where the certificates hold only
# disproofs) and `--rote-train FILE`. COUNT positions of PIECES pieces are taken from random
# games from the 5x9 start (every move drawn uniformly, seeded, by the outside checker's move
# generator: an implementation apart from the solver's), each solved as a session, both
# questions (`fanorona solve POSITION --algo pn2-dfpn`, learned first numbers, second level
# max(30000, tree/100), one thread), at most TIMEOUT seconds each (one not decided by then is
# checkpointed and left); then every rote entry of the store is exported to OUT (JSON lines,
# `fanorona rote export`). About COUNT * TIMEOUT / 2 seconds over the 5x9 tables to 8 pieces.
# Usage: [COUNT=30] [PIECES=12] [TIMEOUT=45] [SEED=7] [DATA=DIR] \
#          scripts/decided-above-tables.sh TABLES OUT.jsonl
#   DATA: the data directory of the sessions (default: a new temporary one, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:?usage: scripts/decided-above-tables.sh TABLES OUT.jsonl}
out=${2:?usage: scripts/decided-above-tables.sh TABLES OUT.jsonl}
count=${COUNT:-30}
pieces=${PIECES:-12}
seconds=${TIMEOUT:-45}
seed=${SEED:-7}
cargo build --release --quiet
bin=$PWD/target/release/fanorona
tables=$(cd "$tables" && pwd)
if [ -n "${DATA:-}" ]; then
    data=$DATA
    mkdir -p "$data"
else
    data=$(mktemp -d)
    trap 'rm -rf "$data"' EXIT
fi
data=$(cd "$data" && pwd)
cat > "$data/config.toml" <<CONFIG
db_dir = "$tables"
data_dir = "$data/data"
threads = 1
checkpoint_interval = "20s"
init = "learned"
second_level = "max(30000,tree/100)"
CONFIG

python3 - "$count" "$pieces" "$seed" > "$data/roots.txt" <<'PY'
import random, sys
sys.path.insert(0, 'scripts/outside-checker')
from check_certificate import parse_position, gen_moves, format_position
count, pieces, seed = (int(a) for a in sys.argv[1:4])
rng = random.Random(seed)
bd, white, black, side = parse_position("BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w")
roots = []
while len(roots) < count:
    w, b, s = white, black, side
    for _ in range(400):
        n = bin(w).count('1') + bin(b).count('1')
        if n <= pieces:
            # The first position of at most PIECES pieces, if it has exactly that many and
            # both sides have pieces.
            if n == pieces and w and b:
                roots.append(format_position(bd, w, b, s))
            break
        moves = gen_moves(bd, w, b) if s == 0 else gen_moves(bd, b, w)
        if not moves:
            break
        _, me, opp = rng.choice(moves)
        w, b = (me, opp) if s == 0 else (opp, me)
        s ^= 1
print("\n".join(roots))
PY

i=0
decided=0
while read -r pos; do
    i=$((i + 1))
    if timeout -s INT "$seconds" "$bin" --config "$data/config.toml" solve "$pos" --algo pn2-dfpn \
        > "$data/solve-$i.out" 2> "$data/solve-$i.err"; then
        decided=$((decided + 1))
    fi
    echo "$i of $count: $(tail -1 "$data/solve-$i.out" 2>/dev/null || true)" >&2
done < "$data/roots.txt"
"$bin" --config "$data/config.toml" rote export "$out"
echo "$decided of $count positions decided within ${seconds} s each; their sessions' rote entries in $out"
