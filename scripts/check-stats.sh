#!/usr/bin/env bash
# Compares the win, draw and loss counts of the 5x9 tables beyond the paper (7, 8 and 9
# pieces) with the rows published in docs/results.md, count for count: a rebuilt layer, or
# one built on another machine, must give the same. Exits non-zero on any difference, or if
# no row beyond 6 pieces was compared. `db stats` reads every entry: about 4 minutes for 7
# pieces, 15 to 40 for 9 (from disk). A saved `db stats` output can be given instead.
# Usage: scripts/check-stats.sh DB_DIR            (runs fanorona db stats --board 5x9)
#        scripts/check-stats.sh --from STATS_FILE (a saved output of it)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
--from)
    stats=${2:?usage: scripts/check-stats.sh --from STATS_FILE}
    [ -r "$stats" ] || { echo "check-stats: cannot read $stats" >&2; exit 2; }
    ;;
"" | -*)
    echo "usage: scripts/check-stats.sh DB_DIR | --from STATS_FILE" >&2
    exit 2
    ;;
*)
    cargo build --release --quiet
    stats=$(mktemp)
    trap 'rm -f "$stats"' EXIT
    target/release/fanorona db stats --board 5x9 --db "$1" | tee /dev/stderr > "$stats"
    ;;
esac
# Published rows: "| a-b | win | draw | loss |" in the results' tables of 7 pieces and more.
python3 - "$stats" docs/results.md <<'EOF'
import re, sys

stats_file, results_file = sys.argv[1], sys.argv[2]
published = {}
for line in open(results_file):
    m = re.match(r"^\| (\d+)-(\d+) \| (\d+) \| (\d+) \| (\d+) \|$", line.strip())
    if m and int(m[1]) + int(m[2]) >= 7:
        published[f"{m[1]}-{m[2]}"] = tuple(int(x) for x in m.groups()[2:])
compared = differ = unpublished = 0
for line in open(stats_file):
    m = re.match(r"^\s*(\d+)-(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\b", line)
    if not m or int(m[1]) + int(m[2]) < 7:
        continue
    slice, counts = f"{m[1]}-{m[2]}", tuple(int(x) for x in m.groups()[2:])
    if slice not in published:
        print(f"{slice}: not published in {results_file}")
        unpublished += 1
        continue
    compared += 1
    if counts != published[slice]:
        differ += 1
        print(f"{slice}: DIFFERENT: {counts} here, {published[slice]} published")
    else:
        print(f"{slice}: same")
print(f"{compared - differ} of {compared} slices of 7 pieces or more equal to the published "
      f"rows; {unpublished} not published")
sys.exit(0 if compared > 0 and differ == 0 and unpublished == 0 else 1)
EOF
