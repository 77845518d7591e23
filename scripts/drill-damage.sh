#!/usr/bin/env bash
# The damage drill: what a week-long run meets besides a full disk (drill-full-disk.sh) and
# other users (drill-other-user.sh), each case tried on a real daemon, store and web server:
#   A. a damaged store: its data file cut short at several lengths, an empty unfinished
#      snapshot, the record files of a session's tree deleted, cut short or with a byte
#      flipped, a kept certificate with a byte flipped (scripts/drill-damage-trials.sh damages
#      one file at random in a store of three sessions, with a backup);
#   B. hostile input: a certificate of one 1 GB line, /dev/zero as a certificate, a 100 MB
#      request line and invalid UTF-8 on the daemon's socket, a 50 MB body to the web app, a
#      1 MB position and a name with escape codes on the command line.
# Each case prints what was tried, how it ended (exit status, time, peak memory, the message),
# and what was kept. Exit status 1 if any case failed.
# Usage: scripts/drill-damage.sh   (FANORONA_BIN=PATH uses that binary; no root needed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/drill.sh
bin=$(drill_bin)
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
data=$tmp/data
printf 'checkpoint_interval = "300ms"\nlog_level = "info"\n' >"$tmp/config.toml"
f=("$bin" --config "$tmp/config.toml" --data-dir "$data")
failed=0
ok() { echo "    ok: $*"; }
bad() {
    echo "    FAILED: $*"
    echo "    the daemon's log ends: $(grep -v '^ ' "$tmp/daemon.log" | tail -3 | cut -c1-200)"
    failed=1
}
stop_daemon() { kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true; }
restore() { rm -rf "$data"; cp -a "$tmp/backup" "$data"; }

echo "setting up: a 5x5 session solved for 6 s, then the daemon stopped; the store copied"
start_daemon "$data/daemon.sock"
id=$("${f[@]}" session start 5x5 --json | field '["id"]')
sleep 6
stop_daemon
checkpoints=$(status "$id" | field '["checkpoints"]')
echo "  session $id: $checkpoints checkpoints, store $(du -sh "$data/store" | cut -f1)"
cp -a "$data" "$tmp/backup"

echo "A. a damaged store"
size=$(stat -c %s "$tmp/backup/store/db")
for cut in $((size / 2)) $((size / 3)) 4096 100 0; do
    restore
    truncate -s "$cut" "$data/store/db"
    echo "  tried: the store's data file cut to $cut of $size bytes, then session list"
    measure 60 "${f[@]}" session list
    if [ "$code" = 0 ]; then
        ok "it opened (exit 0, $took s): sled recovered the prefix"
    elif [ "$code" = 1 ] && grep -q "damaged" <<<"$said"; then
        ok "refused in $took s, exit 1: $said"
    else
        bad "exit $code: $said"
    fi
done
restore
echo "  what to do, as the message says: move the store aside and start from a copy"
echo "  kept: the copy taken before opens whole: $(status "$id" | field '["checkpoints"]') checkpoints (of $checkpoints)"
: >"$data/store/snap.00000000000001F0.generating"
echo "  tried: an empty unfinished snapshot beside the store (a full disk leaves one)"
[ "$(status "$id" | field '["checkpoints"]')" = "$checkpoints" ] && ok "the store opens with all $checkpoints checkpoints" \
    || bad "$("${f[@]}" session status "$id" 2>&1 | tail -1)"

# The store keeps each chunk and patch of a session's tree in a record file of its own
# (store/records/); the drill keeps no backup, so the session is named damaged, with what to
# do, and the daemon goes on with the others.
for how in deleted "cut short" "a byte flipped"; do
    restore
    for rec in "$data"/store/records/*; do
        case $how in
            deleted) rm "$rec" ;;
            "cut short") truncate -s $(( $(stat -c %s "$rec") / 2 )) "$rec" ;;
            *) printf '\xff' | dd of="$rec" bs=1 seek=$(( $(stat -c %s "$rec") - 100 )) conv=notrunc status=none ;;
        esac
    done
    echo "  tried: each of the store's $(ls "$tmp/backup/store/records" | wc -l) record files (the session tree's chunks and patches) $how, then the daemon"
    start_daemon "$data/daemon.sock"
    t0=$(date +%s.%N)
    until [ "$(status "$id" | field '["state"]')" != running ] || [ "$(elapsed "$t0" "> 20")" = True ]; do sleep 0.2; done
    state=$(status "$id" | field '["state"]')
    if [ "$state" = damaged ] && status "$id" | field '["error"]' | grep -q "session delete"; then
        ok "session $id damaged after $(elapsed "$t0") s: $(status "$id" | field '["error"]' | cut -c1-220)"
    elif [ "$state" = running ] || [ "$state" = solved ]; then
        bad "session $id $state: the damage went unseen"
    else
        bad "session $id is $state: $(status "$id" | field '["error"]' | cut -c1-150)"
    fi
    # A new session beside the damaged one solves; the daemon neither stops nor restarts
    # itself in a loop (a restart mends no damage).
    other=$("${f[@]}" session start 3x5 --json | field '["id"]')
    t0=$(date +%s.%N)
    until [[ $(status "$other" | field '["state"]') =~ solved|failed ]] || [ "$(elapsed "$t0" "> 60")" = True ]; do sleep 0.2; done
    case $(status "$other" | field '["state"]') in
        solved) ok "a new 3x5 session beside it solved ($(status "$other" | field '["value"]'))" ;;
        *) bad "a new 3x5 session is $(status "$other" | field '["state"]'): $(status "$other" | field '["error"]' | cut -c1-150)" ;;
    esac
    grep -q "restarting to reopen" "$tmp/daemon.log" && bad "the daemon restarted itself over damage" \
        || ok "the daemon (pid $daemon) went on answering, no restart"
    : >"$tmp/daemon.log"
    stop_daemon
done

restore
start_daemon "$data/daemon.sock"
"${f[@]}" session pause "$id" >/dev/null
cert_session=$("${f[@]}" session start 3x5 --json | field '["id"]')
t0=$(date +%s.%N)
until ls "$data"/certificates/session-"$cert_session".*.cert.gz >/dev/null 2>&1 && [ "$(status "$cert_session" | field '["state"]')" = solved ] \
    || [ "$(elapsed "$t0" "> 120")" = True ]; do sleep 0.2; done
sleep 1
cert=$(ls "$data"/certificates/session-"$cert_session".*.cert.gz | head -1)
printf '\x00' | dd of="$cert" bs=1 seek=$(( $(stat -c %s "$cert") / 2 )) conv=notrunc status=none
echo "  tried: a byte of session $cert_session's kept certificate $(basename "$cert") flipped, then session certificate"
measure 60 "${f[@]}" session certificate "$cert_session" "$tmp/out.cert.gz"
[ "$code" != 0 ] && ok "exit $code in $took s: $said" || bad "handed out as verified (exit 0)"

echo "B. hostile input"
head -c 1G /dev/zero | tr '\0' 'a' | gzip -1 >"$tmp/one-line.cert.gz"
echo "  tried: verify a certificate of one 1 GB line ($(du -h "$tmp/one-line.cert.gz" | cut -f1) gzipped)"
measure 120 "$bin" verify "$tmp/one-line.cert.gz"
[ "$code" = 2 ] && [ "$peak" -lt 200 ] && ok "exit 2 in $took s, peak $peak MiB: $said" || bad "exit $code, $took s, peak $peak MiB: $said"
echo "  tried: verify /dev/zero"
measure 120 "$bin" verify /dev/zero
[ "$code" = 2 ] && [ "$peak" -lt 200 ] && ok "exit 2 in $took s, peak $peak MiB: $said" || bad "exit $code, $took s, peak $peak MiB: $said"

before=$(rss "$daemon" VmRSS)
ask() {
    python3 - "$data/daemon.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
line = {"huge": b"{" + b"a" * 100_000_000, "latin1": b"{\"protocol\":1,\"request\":{\"command\":\"list\",\"x\":\"\xe9\"}}\n"}[sys.argv[2]]
try:
    s.sendall(line)
except OSError as e:
    pass
print(s.makefile("rb").readline()[:150].decode("utf-8", "replace").strip() or "(closed with no answer)")
PY
}
echo "  tried: a 100 MB request line on the daemon's socket"
answer=$(ask huge 2>&1 || true)
grep -q '"ok":false' <<<"$answer" && ok "answered: $answer" || bad "answer: $answer"
echo "  tried: a request with invalid UTF-8"
answer=$(ask latin1 2>&1 || true)
grep -q '"ok":false' <<<"$answer" && ok "answered: $answer" || bad "answer: $answer"
after=$(rss "$daemon" VmRSS)
[ "$(status "$id" | field '["id"]')" = "$id" ] && ok "the daemon still answers; resident memory $before MiB before, $after MiB after" \
    || bad "the daemon stopped answering"

("${f[@]}" serve --bind 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.log") &
for _ in $(seq 200); do grep -q '^serving on' "$tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
link=$(sed -n 's/^serving on //p' "$tmp/serve.out")
serve=$(pgrep -f -n -- "--data-dir $data serve")
head -c 50M /dev/zero | tr '\0' ' ' >"$tmp/body"
echo "  tried: a 50 MB body posted to the web app's /api/sessions"
code=$(curl -s -o "$tmp/web.out" -w '%{http_code}' -H "x-token: ${link##*token=}" -H 'Content-Type: application/json' \
    --data-binary @"$tmp/body" "${link%%/\?token=*}/api/sessions" || true)
[ "$code" = 413 ] && ok "HTTP 413 ($(cut -c1-100 "$tmp/web.out")); server peak $(rss "$serve" VmHWM) MiB" || bad "HTTP $code"

echo "  tried: session start with a 100 kB position (the most one argument can hold is 128 kB)"
measure 30 "${f[@]}" session start "$(head -c 100K /dev/zero | tr '\0' 'W')"
[ "$code" = 2 ] && ok "exit 2 in $took s: ${said:0:120}" || bad "exit $code: $said"
echo "  tried: session start with a name holding escape codes"
measure 30 "${f[@]}" session start 3x3 --name $'\e[31mred\e[0m'
[ "$code" = 2 ] && ok "exit 2: $said" || bad "exit $code: $said"
[ "$(status "$id" | field '["checkpoints"]')" -ge "$checkpoints" ] && echo "kept: session $id has its $checkpoints checkpoints or more" \
    || bad "session $id lost checkpoints"

[ "$failed" = 0 ] && echo "every case survived" || { echo "SOME CASES FAILED"; exit 1; }
