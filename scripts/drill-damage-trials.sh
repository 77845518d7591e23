#!/usr/bin/env bash
# The damage trials: one file of a store holding three sessions damaged at random, twenty
# times, on a real daemon, and what became of each session.
#
# The store is made once: three sessions of a 5x5 position with its middle row empty (about
# 8 s of search each: PN², PN² with a second level of 500 nodes, PN² with df-pn)
# each solved a little, a backup taken into the daemon's backup directory, then each solved
# a little more, and the daemon stopped. Each trial copies that store, damages one file of
# it (a record file of a session's tree in three trials of four, else one of sled's own
# files: its log, its config, a snapshot), by changing a few bytes or cutting it short, then
# starts the daemon, resumes the three sessions and waits for them to end.
#
# A trial passes when every session the damage did not reach is solved with the value a
# trial without damage gives, and the damaged one either goes on from the backup and is
# solved with that value, or is shown `damaged` with what to do. Printed as a table: the
# trial, what was damaged (and whose), what happened, the work lost.
# Usage: scripts/drill-damage-trials.sh [TRIALS] [SEED]   (FANORONA_BIN=PATH uses that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/drill.sh
bin=$(drill_bin)
trials=${1:-20}
RANDOM=${2:-1}
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
printf 'checkpoint_interval = "100ms"\nlog_level = "info"\nbackup_every = "off"\n' >"$tmp/config.toml"
use() {
    data=$1
    f=("$bin" --config "$tmp/config.toml" --data-dir "$data")
}
stop_daemon() { kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; }
state() { status "$1" | field '["state"]'; }
# Starts the daemon on $data; fails if it exits or does not listen within 20 s.
try_start() {
    "${f[@]}" daemon 2>>"$tmp/daemon.log" &
    daemon=$!
    for _ in $(seq 400); do
        python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$data/daemon.sock" 2>/dev/null && return 0
        kill -0 "$daemon" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# Session ids 1 to 3 and how each is solved.
pos="BBBBB/BBBBB/...../WWWWW/WWWWW w"
kinds=("$pos" "$pos --second-level 500" "$pos --algo pn2-dfpn")

echo "making the store: three 5x5 sessions, each solved a little, a backup, a little more"
use "$tmp/base"
start_daemon "$data/daemon.sock"
for k in "${kinds[@]}"; do
    read -r -a words <<<"${k#"$pos"}"
    id=$("${f[@]}" session start "$pos" "${words[@]}" --json | field '["id"]')
    sleep 1
    "${f[@]}" session pause "$id" >/dev/null || true
done
mkdir -p "$data/backups"
"${f[@]}" store backup "$data/backups/backup-1" >/dev/null
for id in 1 2 3; do
    "${f[@]}" session resume "$id" >/dev/null || true
    sleep 1
    "${f[@]}" session pause "$id" >/dev/null || true
done
sleep 0.5
stop_daemon
for id in 1 2 3; do
    printf '  session %s (%s): %s checkpoints, %s\n' "$id" "${kinds[id-1]}" \
        "$("${f[@]}" session status "$id" --json | field '["checkpoints"]')" \
        "$("${f[@]}" session status "$id" --json | field '["state"]')"
done
echo "  store: $(du -sh "$data/store" | cut -f1), $(ls "$data/store/records" | wc -l) record files; backup: $(du -sh "$data/backups" | cut -f1)"
# Checkpoints and solving seconds of each session in the store, and in the backup.
mapfile -t now < <(for id in 1 2 3; do "${f[@]}" session status "$id" --json | python3 -c "import json,sys; v=json.load(sys.stdin); print(v['checkpoints'], v['state'])"; done)
mapfile -t then < <(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); [print(s['checkpoints']) for s in sorted(m['sessions'], key=lambda s: s['id'])]" "$data/backups/backup-1/backup.json")
# The sessions the damage can reach: those not solved yet (a solved one's tree is not read
# again).
open_ids=()
for id in 1 2 3; do [[ ${now[id-1]} == *solved ]] || open_ids+=("$id"); done
[ ${#open_ids[@]} -gt 0 ] || { echo "every session was solved before the damage: nothing to try"; exit 1; }
# The work a session goes back on from the backup, in checkpoints.
back() { echo "session $1: $(( ${now[$1-1]%% *} - ${then[$1-1]} )) checkpoints"; }

# Runs the daemon on a copy of the base store (damaged by "$@" first), resumes the sessions,
# and waits until none runs; sets `states`, `values`, `said` (what the daemon's log says of
# damage, a restore or a put-back) and `lost`.
trial() {
    rm -rf "$tmp/t"
    cp -a "$tmp/base" "$tmp/t"
    use "$tmp/t"
    "$@"
    : >"$tmp/daemon.log"
    if ! try_start; then
        states="the daemon did not start: $(grep -v '^ ' "$tmp/daemon.log" | tail -1 | cut -c1-120)"
        values="" said="" lost=""
        return
    fi
    for id in 1 2 3; do "${f[@]}" session resume "$id" >/dev/null 2>&1 || true; done
    local t0
    t0=$(date +%s.%N)
    while [[ "$(state 1) $(state 2) $(state 3)" =~ running|queued|waiting|pausing ]] && [ "$(elapsed "$t0" "> 180")" = False ]; do
        sleep 0.3
    done
    states="$(state 1) $(state 2) $(state 3)"
    errors=()
    for id in 1 2 3; do errors+=("$(status "$id" | field '["error"]')"); done
    values="$(status 1 | field '["value"]') $(status 2 | field '["value"]') $(status 3 | field '["value"]')"
    stop_daemon
    certs=$(ls "$data/certificates" 2>/dev/null | grep -c '\.cert\.gz$' || true)
    [ -z "${KEEP:-}" ] || cp "$tmp/daemon.log" "$tmp/daemon-$RANDOM.log"
    said=$(grep -oE "put back from the backup|restored from the backup|marked damaged|damaged; no backup|no certificate: the session store is damaged" "$tmp/daemon.log" | sort | uniq -c | sed 's/^ *//' | paste -sd, - || true)
    lost=""
    if grep -q "restored from the backup" "$tmp/daemon.log"; then
        lost="every session back to the backup: $(for id in 1 2 3; do back "$id"; done | paste -sd, -)"
    fi
    for id in $(grep -oE "session [0-9]+: its records were damaged; put back" "$tmp/daemon.log" | awk '{print $2}' | tr -d :); do
        lost="${lost:+$lost, }$(back "$id")"
    done
}

echo "a trial without damage"
trial true
expected=$values
echo "  states: $states; values: $expected"
[ "$states" = "solved solved solved" ] || { echo "the undamaged trial did not solve all three"; exit 1; }

# Damages one file: $1 = the file, $2 = flip or cut.
damage() {
    local file=$1 how=$2 size
    size=$(stat -c %s "$file")
    if [ "$how" = cut ]; then
        truncate -s $(( (RANDOM * 32768 + RANDOM) % (size > 0 ? size : 1) )) "$file"
    else
        for _ in 1 2 3; do
            printf "\\x$(printf %02x $((RANDOM % 255 + 1)))" |
                dd of="$file" bs=1 seek=$(( (RANDOM * 32768 + RANDOM) % size )) conv=notrunc status=none
        done
    fi
}

# The session whose record is in record file $1 (its key's first 8 bytes).
owner() { python3 -c "import sys; b=open(sys.argv[1],'rb').read(); n=int.from_bytes(b[8:12],'big'); print(int.from_bytes(b[24:32],'big') if len(b)>=32 and n>=8 else '?')" "$1" 2>/dev/null || echo '?'; }

printf '\n%-5s | %-46s | %-60s | %s\n' trial "damaged" "what happened (sessions 1 2 3; the daemon's log)" "work lost"
failed=0
for t in $(seq "$trials"); do
    how=$([ $((RANDOM % 2)) = 0 ] && echo flip || echo cut)
    if [ $((t % 4)) = 0 ]; then
        mapfile -t files < <(cd "$tmp/base/store" && ls -p | grep -v / | grep -v '\.generating$')
        file=${files[RANDOM % ${#files[@]}]}
        whose="the store's own"
        path=store/$file
    else
        # A record file of an unsolved session, taken in turn.
        target=${open_ids[t % ${#open_ids[@]}]}
        mapfile -t files < <(cd "$tmp/base/store/records" && for r in *; do [ "$(owner "$r")" = "$target" ] && echo "$r"; done)
        file=${files[RANDOM % ${#files[@]}]}
        whose="session $target's"
        path=store/records/$file
    fi
    trial damage "$tmp/t/$path" "$how"
    # The verdict: every session solved with the undamaged value, or the damaged one shown
    # damaged with what to do.
    verdict=pass
    read -r -a st <<<"$states"
    read -r -a va <<<"$values"
    read -r -a ex <<<"$expected"
    for i in 0 1 2; do
        if [ "${st[i]:-}" = solved ] && [ "${va[i]:-}" = "${ex[i]}" ]; then continue; fi
        if [ "${st[i]:-}" = damaged ] && [ "$whose" = "session $((i + 1))'s" ] \
            && grep -q "session delete" <<<"${errors[i]:-}"; then continue; fi
        verdict=FAIL
    done
    # A tree found damaged by its certificates' writer is put back and solved again.
    unmended=$(( $(grep -c "no certificate: the session store is damaged" "$tmp/daemon.log" || true) - $(grep -c "put back from the backup" "$tmp/daemon.log" || true) ))
    [ "$unmended" -le 0 ] || verdict=FAIL
    [ "$verdict" = pass ] || failed=$((failed + 1))
    printf '%-5s | %-46s | %-60s | %s\n' "$t $verdict" "$whose $path, $how" \
        "${states}${said:+; $said}" "${lost:-none}"
done
echo
[ "$failed" = 0 ] && echo "every trial passed: each undamaged session solved with its value, each damaged one went on from the backup or was named" \
    || { echo "$failed of $trials trials FAILED"; exit 1; }
