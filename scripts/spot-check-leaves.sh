#!/usr/bin/env bash
# Re-checks the table leaves of a certificate by forward search down to smaller tables (the
# paper's own check of its databases): each leaf with N pieces is solved by df-pn over the
# tables with fewer than N pieces only, and its value must equal the one the certificate
# (and the tables) give it. Prints one line per disagreement and a summary; exits 1 on any.
# A leaf whose search runs out of memory (MEMORY, default 4GiB, per search) is reported as
# not decided, never as agreeing. ALGO (default dfpn) picks the solver.
# Usage: [ALGO=...] [MEMORY=...] scripts/spot-check-leaves.sh CERT DB_DIR [SAMPLE]
#        (SAMPLE: at most this many leaves, chosen evenly; default all)
set -euo pipefail
cd "$(dirname "$0")/.."
cert=$1
db=$(realpath "$2")
sample=${3:-0}
cargo build --release --quiet
bin=$PWD/target/release/fanorona
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$bin verify "$cert" --db "$db" --leaves "$work/leaves.tsv" > /dev/null
total=$(wc -l < "$work/leaves.tsv")
if [ "$sample" -gt 0 ] && [ "$total" -gt "$sample" ]; then
    awk -v n="$total" -v k="$sample" 'int((NR - 1) * k / n) != int(NR * k / n)' "$work/leaves.tsv" > "$work/sample.tsv"
else
    cp "$work/leaves.tsv" "$work/sample.tsv"
fi
# The tables' board directory, and for each piece count N a copy of the tables with fewer
# than N pieces (symbolic links to the files).
board=$(zcat -f "$cert" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["tables"]["board"])')
for n in $(seq 3 45); do
    d="$work/below-$n/$board"
    mkdir -p "$d"
    for f in "$db/$board"/*.wdl; do
        name=$(basename "$f" .wdl)
        a=${name%-*}
        b=${name#*-}
        [ $((a + b)) -lt "$n" ] && ln -s "$f" "$d/"
    done
done
export bin work
check_one() {
    pos=$1
    want=$2
    pieces=$(printf '%s' "${pos% *}" | tr -cd 'WB' | wc -c)
    out=$($bin solve "$pos" --db "$work/below-$pieces" --algo "${ALGO:-dfpn}" --no-store --json --memory "${MEMORY:-4GiB}" 2>/dev/null) || true
    python3 - "$pos" "$want" "$out" <<'PY'
import json, sys
pos, want = sys.argv[1], sys.argv[2]
try:
    out = json.loads(sys.argv[3])
except ValueError:
    last = sys.argv[3].strip().splitlines()[-1:] or [""]
    print(f"ERROR\t{pos}\t{want}\t-\t0\tFalse\t{last[0][:200]}")
    sys.exit(0)
mover = "white" if pos.endswith(" w") else "black"
got = {"draw": "d", mover: "w"}.get(out["value"], "l")
print(("same" if got == want else "DIFFERENT") + f"\t{pos}\t{want}\t{got}\t{out['nodes']}\t{out['verified']}")
PY
}
export -f check_one
tr '\t' '\n' < "$work/sample.tsv" | xargs -d '\n' -n 2 -P 2 bash -c 'check_one "$0" "$1"' > "$work/results.tsv"
grep -v '^same' "$work/results.tsv" || true
python3 - "$work/results.tsv" "$total" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
same = sum(r[0] == "same" for r in rows)
different = sum(r[0] == "DIFFERENT" for r in rows)
undecided = len(rows) - same - different
nodes = sum(int(r[4]) for r in rows)
checked = all(r[5] == "True" for r in rows if r[0] == "same")
print(f"{same} of {len(rows)} table leaves (of {sys.argv[2]}) re-solved over smaller tables agree, "
      f"{different} differ, {undecided} not decided within the memory bound; {nodes} nodes; "
      f"every proof checked: {checked}")
sys.exit(0 if different == 0 and checked else 1)
PY
