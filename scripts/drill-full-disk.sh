#!/usr/bin/env bash
# The full-disk drill: a daemon solves a board on a small tmpfs that is filled up under it,
# then given space back, three times over:
#   1. filled while it runs: `session status` must say at once that checkpoints fail, and
#      the daemon must write its checkpoint again by itself once space is back;
#   2. filled, then SIGTERM: the daemon must exit non-zero, saying the final checkpoint
#      failed, and the next start (with space back) must open the store and resume;
#   3. filled, then SIGKILL: the same;
# and the value at the end must equal an uninterrupted in-memory solve's.
# Needs root (it mounts a tmpfs). Usage: sudo scripts/drill-full-disk.sh [BOARD] [MiB] [DB_DIR]
# (defaults: 9x3, a 2 GiB tmpfs, tables to 5 pieces built in a temporary directory: a solve
# of about a minute whose store keeps growing (a second level of 300 nodes makes a large
# first-level tree), so that sled needs new space soon after the disk is filled).
set -euo pipefail
cd "$(dirname "$0")/.."
board=${1:-9x3}
size=${2:-2048}
db=${3:-}
[ "$(id -u)" = 0 ] || { echo "the drill mounts a tmpfs: run it as root" >&2; exit 2; }
source scripts/lib/drill.sh
bin=$(drill_bin)
tmp=$(mktemp -d)
mnt=$tmp/disk
mkdir "$mnt"
mount -t tmpfs -o size="${size}m" tmpfs "$mnt"
trap 'kill -9 $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; umount "$mnt" 2>/dev/null || true; rm -rf "$tmp"' EXIT
printf 'second_level = "300"\ncheckpoint_interval = "200ms"\nlog_level = "info"\n' >"$tmp/config.toml"
f=("$bin" --config "$tmp/config.toml" --data-dir "$mnt/data")
failing() { status "$id" | field '.get("checkpoint_failure") is not None'; }
# Fills the disk (the filler's last write fails with ENOSPC) and frees it.
fill() { dd if=/dev/zero of="$mnt/filler" bs=1M status=none 2>/dev/null || true; sync; }
free() { rm -f "$mnt/filler"; }
# Frees the disk to $1 MiB free: the filler shrunk to leave that much.
free_to() {
    local avail
    avail=$(( $(stat -f -c '%a * %S' "$mnt") ))
    truncate -s "$(( $(stat -c %s "$mnt/filler") - ($1 << 20) + avail ))" "$mnt/filler"
    sync
}
# Waits until `failing` says $1 (True or False), at most $2 s, else fails saying $3; sets
# `waited` to the seconds it took.
await_failing() {
    local t0
    t0=$(date +%s.%N)
    until [ "$(failing)" = "$1" ]; do
        sleep 0.1
        [ "$(elapsed "$t0" "> $2")" = True ] && bad "$3"
    done
    waited=$(elapsed "$t0")
}
ok() { echo "  OK: $*"; }
bad() { echo "  FAILED: $*"; echo "  the daemon's log ends:"; tail -5 "$tmp/daemon.log" | cut -c1-300; exit 1; }

if [ -z "$db" ]; then
    db=$tmp/tables
    "$bin" db build --board "$board" --pieces 5 --db "$db" >/dev/null
fi
reference=$("${f[@]}" solve "$board" --no-store --algo pn2 --db "$db" --json 2>/dev/null | field '["value"]')
echo "uninterrupted: $board is a $reference"
start_daemon "$mnt/data/daemon.sock"
id=$("${f[@]}" session start "$board" --db "$db" --json | field '["id"]')
until [ "$(status "$id" | field '["checkpoints"]')" -ge 3 ] 2>/dev/null; do sleep 0.1; done

echo "1. the disk fills while the session runs"
fill
await_failing True 90 "status never said checkpoints fail"
echo "  status after $waited s: $(status "$id" | field '["checkpoint_failure"]["message"]') (store poisoned: $(status "$id" | field '["checkpoint_failure"]["poisoned"]'))"
on_disk=$(status "$id" | field '["checkpoints"]')
sleep 3
[ "$(status "$id" | field '["checkpoints"]')" = "$on_disk" ] && ok "status keeps saying checkpoint $on_disk, the one on disk" \
    || bad "status's checkpoint count moved while the disk was full"
# The room it asks stays what it asked first however long the disk stays full; given that
# (and 1 MiB), not more, it goes on by itself.
need=$(status "$id" | field '["checkpoint_failure"]["message"]' | grep -oE 'needs [0-9]+ MiB' | grep -oE '[0-9]+')
sleep 20
later=$(status "$id" | field '["checkpoint_failure"]["message"]' | grep -oE 'needs [0-9]+ MiB' | grep -oE '[0-9]+')
[ -n "$need" ] && [ "$later" = "$need" ] && ok "it asks $need MiB, and still $later MiB 20 s later" \
    || bad "the room asked went from ${need:-?} to ${later:-?} MiB"
free_to $((need + 1))
echo "  freed to $(( $(stat -f -c '%a * %S' "$mnt") >> 20 )) MiB free"
await_failing False 150 "the daemon did not recover with $((need + 1)) MiB free"
ok "space back to the bound: checkpoint written again by itself after $waited s (checkpoint $(status "$id" | field '["checkpoints"]'))"
free

for how in TERM KILL; do
    echo "$([ $how = TERM ] && echo 2 || echo 3). the disk fills, then SIG$how"
    until [ "$(status "$id" | field '["state"]')" = solved ] || [ "$(status "$id" | field '["checkpoints"]')" -gt "$on_disk" ]; do sleep 0.1; done
    fill
    until [ "$(failing)" = True ] || [ "$(status "$id" | field '["state"]')" = solved ]; do sleep 0.1; done
    kill -$how "$daemon"
    set +e; wait "$daemon"; code=$?; set -e
    if [ $how = TERM ]; then
        if [ "$(status "$id" | field '["state"]')" = solved ]; then
            echo "  (solved before the disk filled)"
        elif [ "$code" != 0 ]; then
            ok "exit status $code: $(grep -h 'final checkpoint' "$tmp/daemon.log" | tail -1 | cut -c1-160)"
        else
            bad "SIGTERM with the final checkpoint failed exited 0"
        fi
    fi
    free
    start_daemon "$mnt/data/daemon.sock"
    [ "$(status "$id" | field '["state"]')" != '?' ] && ok "the store opens after the SIG$how on a full disk (checkpoint $(status "$id" | field '["checkpoints"]'))" \
        || bad "the store does not open: $("${f[@]}" session status "$id" 2>&1 | tail -1)"
done

until [ "$(status "$id" | field '["state"]')" = solved ]; do sleep 0.2; done
value=$(status "$id" | field '["value"]')
echo "after the drill: $value"
[ "$value" = "$reference" ] && echo "same value: OK" || { echo "DIFFERENT VALUE"; exit 1; }
