# A private nats-server for a script: JetStream on a file store under DIR, on a free loopback
# port, with a random token kept in owner-only files (never on a command line).
# start_nats DIR: sets nats_url, nats_pid and nats_token (the token's file is DIR/token);
# returns once the server takes connections. The caller stops it (kill -TERM $nats_pid).
start_nats() {
    local dir=$1 port
    nats_token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
    (umask 077 && printf '%s' "$nats_token" > "$dir/token" &&
        printf 'authorization { token: "%s" }\n' "$nats_token" > "$dir/nats.conf")
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    nats_url=nats://127.0.0.1:$port
    /usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -c "$dir/nats.conf" -sd "$dir/nats" \
        > "$dir/nats.log" 2>&1 &
    nats_pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nats-server did not start on port $port (its log: $dir/nats.log)" >&2
    return 1
}

# cluster_bench_setup: what the cluster's measuring scripts share. Installs nats-server if
# missing, builds the release binary (bin), makes a scratch directory (work) removed at the
# end (kept, and named, when KEEP is set) with every process whose id the script adds to pids, and an empty config there
# (common: every run takes the defaults, none of this machine's settings).
cluster_bench_setup() {
    scripts/install-nats.sh
    cargo build --release --quiet
    bin=$PWD/target/release/fanorona
    work=$(mktemp -d)
    pids=()
    trap cluster_bench_cleanup EXIT
    : > "$work/config.toml"
    common=(--config "$work/config.toml")
}

cluster_bench_cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ -n ${KEEP:-} ]]; then
        echo "kept: $work" >&2
    else
        rm -rf "$work"
    fi
}
