# What the drills share (sourced, not run): the binary, a daemon on a data directory, its
# answers read from JSON, and a command's exit status, peak memory and time.
#
# A drill sets `tmp` (its temporary directory) and `f` (the command with its --config and
# --data-dir) before it calls these.

# The binary: $FANORONA_BIN, else the release build (built now).
drill_bin() {
    if [ -n "${FANORONA_BIN:-}" ]; then
        echo "$FANORONA_BIN"
    else
        cargo build --release --quiet && echo "$PWD/target/release/fanorona"
    fi
}

# Starts `"${f[@]}" daemon` in the background (its stderr to $tmp/daemon.log), sets `daemon`
# to its pid and returns once its socket ($1) accepts a connection.
start_daemon() {
    local socket=$1
    "${f[@]}" daemon 2>>"$tmp/daemon.log" &
    daemon=$!
    for _ in $(seq 200); do
        python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$socket" 2>/dev/null && return
        sleep 0.05
    done
    echo "the daemon did not start" >&2
    tail -5 "$tmp/daemon.log" >&2
    exit 1
}

# Reads JSON on stdin and prints v$1 (a Python subscript such as '["id"]'); '?' if it cannot.
field() { python3 -c "import json,sys; v=json.load(sys.stdin); print(v$1)" 2>/dev/null || echo '?'; }

# A session's status as JSON ('{}' if there is no answer).
status() { "${f[@]}" session status "$1" --json 2>/dev/null || echo '{}'; }

# Seconds since $1 (a `date +%s.%N`), with $2 appended (`> 90` asks whether it is past 90).
elapsed() { python3 -c "print(round($(date +%s.%N) - $1, 1) ${2:-})"; }

# Runs a command with at most $1 seconds, then sets `code` (its exit status; 124 if it was
# stopped), `peak` (its peak resident memory, MiB), `took` (seconds) and `said` (the last
# line it wrote to stderr, else to stdout, cut to 150 characters).
measure() {
    local limit=$1
    shift
    local t0
    t0=$(date +%s.%N)
    set +e
    /usr/bin/time -f '%M' -o "$tmp/time.out" timeout "$limit" "$@" >"$tmp/measure.out" 2>"$tmp/measure.err"
    code=$?
    set -e
    took=$(elapsed "$t0")
    peak=$(( $(tail -1 "$tmp/time.out" | tr -dc 0-9) / 1024 ))
    said=$({ grep -v '^Command exited' "$tmp/measure.err" || tail -1 "$tmp/measure.out"; } | tail -1 | cut -c1-150)
}

# Process $1's memory field $2 (VmRSS, VmHWM) in MiB.
rss() { awk -v k="$2:" '$1 == k { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
