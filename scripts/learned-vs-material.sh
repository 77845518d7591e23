#!/usr/bin/env bash
# The closed questions of the learned guide's table (README, "The learned guide against
# material"), each solved twice at once, one core each: `--init material` and `--init
# learned`, the same search otherwise (PN² with df-pn at the second level, 30,000 nodes,
# no rote store). Prints each pair's nodes, seconds, node rates and their ratios (learned
# over material), the table hits a node of each (how much of the tree reached the
# tables) and each search's major page faults (table pages read from the disk; GNU time,
# Debian's package time). A different answer, or a learned disproof whose certificate
# fails `fanorona verify`, makes the script exit non-zero at the end.
# Needs the 5x9 tables to 9 pieces (`fanorona db build --board 5x9 --pieces 9 --index
# symmetric --db DIR`, about 4 hours); the six pairs take 40 to 80 minutes on two cores.
# Stop any daemon first: the pairs are timed against each other and want the cores.
# Usage: [ONLY="startW d2"] [OUT=DIR] [OUTSIDE=1] scripts/learned-vs-material.sh TABLES
#   ONLY: question names among startW startB f2 d3 d2 x95 (default: all six)
#   OUT: where the answers (JSON) and the learned certificates go (default: data/learned-vs-material)
#   OUTSIDE=1: each learned certificate also checked by scripts/outside-checker/
#   NODES=N: each search stopped after N nodes (a quick look at the node rates; no answers)
#   WEIGHTS=FILE: the learned searches use these weights (`fanorona learn --out FILE`), not the
#     built-in ones
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:?usage: scripts/learned-vs-material.sh TABLES (the 5x9 tables to 9 pieces)}
out=${OUT:-data/learned-vs-material}
only=${ONLY:-startW startB f2 d3 d2 x95}
mkdir -p "$out"
cargo build --release --quiet
bin=target/release/fanorona

# name, position, goal
questions="startW	BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w	white
startB	BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w	black
f2	BB.BBBBBB/BBB.BBBBB/BWBWWBWBW/WWWWW.WWW/WWWWWWWWW b	black
d3	BBBBBBBBB/BBBBBBBBB/BWB.W.WBW/WWWWWWWWW/WWWWWWWWW b	black
d2	BBBBBB.BB/BBBBB.BBB/BWBWWBWBW/WWW.WWWWW/WWWWWWWWW b	black
x95	BBBBB/BBBBB/BBBBB/BBBBB/BW.BW/WWWWW/WWWWW/WWWWW/WWWWW w	white"

$bin bench --repeat 3 | tail -1 | sed 's/^/bench: /'
# `timed INIT COMMAND...`: runs COMMAND, its major faults written beside the question's answer.
if [ -x /usr/bin/time ]; then
    timed() { /usr/bin/time -f %F -o "$out/$name.$1.faults" "${@:2}"; }
else
    timed() { echo - > "$out/$name.$1.faults"; "${@:2}"; }
fi
status=0
printf "%-7s %15s %15s %6s %9s %9s %6s %6s %9s %9s %10s %10s\n" question material learned nodes \
    mat_s learn_s time rate mat_hit/n lrn_hit/n mat_faults lrn_faults
while IFS=$'\t' read -r name pos goal; do
    case " $only " in *" $name "*) ;; *) continue ;; esac
    common=(--db "$tables" --algo pn2-dfpn --no-store --goal "$goal" --second-level 30000
        --threads 1 --config /dev/null --json)
    [ -n "${NODES:-}" ] && common+=(--nodes "$NODES")
    timed material $bin solve "$pos" "${common[@]}" --init material \
        > "$out/$name.material.json" 2> /dev/null &
    m=$!
    learned=(--init learned)
    [ -n "${WEIGHTS:-}" ] && learned+=(--weights "$WEIGHTS")
    timed learned $bin solve "$pos" "${common[@]}" "${learned[@]}" --certificate "$out/$name" \
        > "$out/$name.learned.json" 2> /dev/null &
    l=$!
    wait $m || status=1
    wait $l || status=1
    line=$(python3 - "$out/$name.material.json" "$out/$name.learned.json" \
        "$out/$name.material.faults" "$out/$name.learned.faults" <<'EOF'
import json, sys
m, l = (json.load(open(p))["searches"][0] for p in sys.argv[1:3])
fm, fl = (open(p).read().split()[-1] for p in sys.argv[3:5])
same = m["outcome"] == l["outcome"]
rate = lambda s: s["nodes"] / s["seconds"]
print(f'{m["nodes"]:15,d} {l["nodes"]:15,d} {l["nodes"] / m["nodes"]:6.2f} '
      f'{m["seconds"]:9.1f} {l["seconds"]:9.1f} {l["seconds"] / m["seconds"]:6.2f} '
      f'{rate(l) / rate(m):6.2f} {m["db_hits"] / m["nodes"]:9.3f} {l["db_hits"] / l["nodes"]:9.3f} '
      f'{fm:>10} {fl:>10}'
      + ('' if same else f'  DIFFERENT ANSWERS: {m["outcome"]} / {l["outcome"]}'))
EOF
)
    case "$line" in *DIFFERENT*) status=1 ;; esac
    printf "%-7s %s\n" "$name" "$line"
    for cert in "$out/$name".*-wins.cert.gz; do
        [ -e "$cert" ] || continue
        $bin verify "$cert" --db "$tables" > /dev/null || { echo "  $cert: verify FAILED"; status=1; }
        if [ "${OUTSIDE:-0}" = 1 ]; then
            python3 scripts/outside-checker/check_certificate.py "$cert" \
                --probe "$bin db probe --batch --db $tables" > /dev/null \
                || { echo "  $cert: outside checker FAILED"; status=1; }
        fi
    done
done <<< "$questions"
$bin bench --repeat 3 | tail -1 | sed 's/^/bench: /'
exit $status
