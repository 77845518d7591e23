#!/usr/bin/env bash
# A whole cluster on this machine: a NATS server (JetStream, a fresh token), a daemon whose
# config hands second-level searches to it, and N workers. Everything lives under DIR (by
# default ./cluster-local): the server's streams, the token, the config, the daemon's data
# and every log, readable by this user alone. A daemon that exits by itself (a crash, kill -9)
# is started again and resumes from its checkpoints (at least every 30 s while jobs are
# out); the server and the workers go on meanwhile. Ctrl-C stops them all (the daemon
# checkpoints first).
#
#   scripts/cluster-local.sh N [DIR] [-- worker options such as --db DIR]
#
# Then, in another terminal (the script prints these with DIR filled in):
#   fanorona --config DIR/config.toml session start 5x5 --algo pn2-dfpn
#   fanorona --config DIR/config.toml session status 1
#   fanorona --config DIR/config.toml cluster status
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:?usage: scripts/cluster-local.sh N [DIR] [-- worker options]}
shift
dir=./cluster-local
if [[ $# -gt 0 && $1 != -- ]]; then
    dir=$1
    shift
fi
[[ ${1:-} == -- ]] && shift
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "N must be a number of workers, not '$n'" >&2; exit 2; }

scripts/install-nats.sh
cargo build --release --quiet
bin=$PWD/target/release/fanorona
umask 077
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[[ -s $dir/nats.token ]] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/nats.token"
port=${NATS_PORT:-4222}
printf 'authorization { token: "%s" }\n' "$(cat "$dir/nats.token")" > "$dir/nats.conf"
if [[ ! -e $dir/config.toml ]]; then
    cat > "$dir/config.toml" <<EOF
data_dir = "data"
threads = 2
checkpoint_interval = "30s"

[cluster]
nats = "nats://127.0.0.1:$port"
token_file = "nats.token"
jobs = $((2 * n))
EOF
fi

pids=()
stopping=$dir/.stopping
rm -f "$stopping"
stop() {
    touch "$stopping"
    # Workers first (they finish their jobs), then the daemon (it checkpoints), then the server.
    for p in "${pids[@]:2}"; do kill -TERM "$p" 2>/dev/null || true; done
    [[ ${#pids[@]} -ge 2 ]] && kill -TERM "${pids[1]}" 2>/dev/null || true
    wait "${pids[@]:1}" 2>/dev/null || true
    kill -TERM "${pids[0]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

/usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -sd "$dir/nats" -c "$dir/nats.conf" \
    > "$dir/nats.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
# The daemon, started again whenever it exits but for Ctrl-C.
(
    while :; do
        "$bin" --config "$dir/config.toml" daemon 2>> "$dir/daemon.log" &
        daemon=$!
        trap 'kill -TERM $daemon 2>/dev/null; wait $daemon; exit 0' TERM
        rc=0
        wait "$daemon" || rc=$?
        [[ -e $stopping ]] && exit 0
        echo "cluster-local: the daemon exited ($rc); starting it again in 2 s" | tee -a "$dir/daemon.log" >&2
        sleep 2
    done
) &
pids+=($!)
export FANORONA_NATS_TOKEN
FANORONA_NATS_TOKEN=$(cat "$dir/nats.token")
for i in $(seq "$n"); do
    "$bin" worker --config "$dir/config.toml" --nats "nats://127.0.0.1:$port" --name "w$i" "$@" \
        2>> "$dir/worker-$i.log" &
    pids+=($!)
done
cat <<EOF
nats-server on 127.0.0.1:$port, a daemon and $n workers; logs in $dir. Ctrl-C stops them.
  $bin --config $dir/config.toml session start 5x5 --algo pn2-dfpn
  $bin --config $dir/config.toml session status 1
  $bin --config $dir/config.toml cluster status
EOF
# Until Ctrl-C, or the server stops (nothing goes on without it).
wait "${pids[0]}" || echo "cluster-local: nats-server stopped (see $dir/nats.log)" >&2
