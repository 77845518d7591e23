#!/usr/bin/env bash
# The cluster's pipeline alone: the real master against echo workers (answers at once, no
# search) through one file-backed nats-server on this machine, for 1, 8, 64 and 256 worker
# connections: jobs a second carried, and the processor time a job of the server, the master
# and the workers (from /proc). Everything shares this machine's cores: run it otherwise idle.
#
#   scripts/bench-pipeline.sh [SECONDS] [CONNECTIONS]   (defaults: 10 1,8,64,256)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
connections=${2:-1,8,64,256}
scripts/install-nats.sh
cargo build --release --quiet
bin=$PWD/target/release/fanorona
work=$(mktemp -d)
server=
cleanup() {
    [[ -n $server ]] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
# The token in files only this user reads, never on a command line.
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
(umask 077 && printf '%s' "$token" > "$work/token" &&
    printf 'authorization { token: "%s" }\n' "$token" > "$work/nats.conf")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -c "$work/nats.conf" -sd "$work/nats" \
    > "$work/nats.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
echo "nats-server $(/usr/sbin/nats-server --version | awk '{print $2}') (file-backed), $(nproc) cores; $(date -u +%FT%TZ)"
"$bin" cluster bench --nats "nats://127.0.0.1:$port" --token-file "$work/token" \
    --connections "$connections" --seconds "$seconds" --server-pid "$server" "${@:3}"
