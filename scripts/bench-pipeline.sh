#!/usr/bin/env bash
# The cluster's pipeline alone: the real master against echo workers (answers at once, no
# search) through one file-backed nats-server on this machine, for 1, 8, 64 and 256 worker
# connections: jobs a second carried, and the processor time a job of the server, the master
# and the workers (from /proc). Everything shares this machine's cores: run it otherwise idle.
#
#   scripts/bench-pipeline.sh [SECONDS] [CONNECTIONS]   (defaults: 10 1,8,64,256)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/nats.sh
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
start_nats "$work"
server=$nats_pid
echo "nats-server $(/usr/sbin/nats-server --version | awk '{print $2}') (file-backed), $(nproc) cores; $(date -u +%FT%TZ)"
"$bin" cluster bench --nats "$nats_url" --token-file "$work/token" \
    --connections "$connections" --seconds "$seconds" --server-pid "$server" "${@:3}"
