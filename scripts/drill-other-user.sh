#!/usr/bin/env bash
# The other-user drill: a daemon and a web server owned by root (started under umask 000, on
# a data directory made 0777 beforehand, the worst a careless start can do), and a second
# user (uid 65534, nobody) trying the socket, the data directory's files and the web app.
# Each case prints what was tried and whether it was refused or allowed; the exit status is
# 1 if anything was allowed.
# Usage (as root): scripts/drill-other-user.sh
#   FANORONA_BIN=PATH uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run it as root: it needs a second uid" >&2; exit 2; }
other=65534
source scripts/lib/drill.sh
bin=$(drill_bin)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
# The other user may reach the temporary directory: only the data directory stands between.
chmod 755 "$tmp"
data=$tmp/data
mkdir -m 777 "$data"
printf 'log_level = "info"\n' >"$tmp/config.toml"
f=("$bin" --config "$tmp/config.toml" --data-dir "$data")
as_other() { setpriv --reuid="$other" --regid="$other" --clear-groups -- "$@"; }

(umask 000; exec "${f[@]}" daemon 2>"$tmp/daemon.log") &
for _ in $(seq 200); do [ -S "$data/daemon.sock" ] && break; sleep 0.05; done
[ -S "$data/daemon.sock" ] || { echo "the daemon did not start" >&2; cat "$tmp/daemon.log" >&2; exit 1; }
id=$("${f[@]}" session start 3x3 --name "root's" --json | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
(umask 000; exec "${f[@]}" serve --bind 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.log") &
serve=$!
for _ in $(seq 200); do grep -q '^serving on' "$tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
link=$(sed -n 's/^serving on //p' "$tmp/serve.out")
[ -n "$link" ] || { echo "the web server did not start" >&2; cat "$tmp/serve.log" >&2; exit 1; }
base=${link%%/\?token=*}
echo "data directory $(stat -c %a "$data") (made 777), socket $(stat -c %a "$data/daemon.sock"), web.token $(stat -c %a "$data/web.token")"
echo "as uid $other against root's daemon and web app on $base:"

allowed=0
# case WHAT COMMAND...: refused when the command fails as the other user.
case_() {
    local what=$1
    shift
    local out
    if out=$(as_other "$@" 2>&1); then
        echo "  tried: $what ... ALLOWED ($(tr '\n' ' ' <<<"$out" | cut -c1-100))"
        allowed=1
    else
        echo "  tried: $what ... refused ($(tail -n1 <<<"$out" | cut -c1-100))"
    fi
}
# web WHAT METHOD PATH [BODY]: refused unless the answer is 2xx.
web() {
    local what=$1 method=$2 path=$3 body=${4:-}
    local args=(-s -o /dev/null -w '%{http_code}' -X "$method" "$base$path")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' -d "$body")
    local code
    code=$(as_other curl "${args[@]}" || true)
    if [[ $code == 2* ]]; then
        echo "  tried: $what ... ALLOWED (HTTP $code)"
        allowed=1
    else
        echo "  tried: $what ... refused (HTTP $code)"
    fi
}

# A `list` request on the socket, as a client sends it; succeeds only if answered.
ask_socket='import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"{\"protocol\":1,\"request\":{\"command\":\"list\"}}\n")
print(s.makefile().readline()[:80])'
case_ "a list request on the daemon's socket" /usr/bin/python3 -c "$ask_socket" "$data/daemon.sock"
# The socket on its own: the directory opened to search for a moment, as a careless chmod
# would; the socket's own mode must still keep the other user out.
chmod 711 "$data"
case_ "a list request on the socket, the directory opened to search (0711)" \
    /usr/bin/python3 -c "$ask_socket" "$data/daemon.sock"
chmod 700 "$data"
case_ "list the data directory" ls "$data"
case_ "read the web token" cat "$data/web.token"
case_ "read the session's progress log" cat "$data/logs/session-$id.jsonl"
case_ "read the store" cat "$data/store/db"
if as_other test -x "$bin"; then
    case_ "fanorona session list on root's data directory" "${f[@]}" session list
    case_ "fanorona session stop $id on root's data directory" "${f[@]}" session stop "$id"
fi
web "GET /api/sessions without the token" GET /api/sessions
web "POST /api/sessions (start one) without the token" POST /api/sessions '{"target":"5x9"}'
web "POST /api/sessions/$id/stop without the token" POST "/api/sessions/$id/stop" '{}'
web "GET /api/sessions/$id/log without the token" GET "/api/sessions/$id/log"
web "GET /api/sessions with a guessed token" GET "/api/sessions?token=0123456789abcdef0123456789abcdef"
if as_other cat "/proc/$serve/cmdline" | tr '\0' ' ' | grep -q "${link##*token=}"; then
    echo "  tried: find the token in the web server's /proc/$serve/cmdline ... ALLOWED"
    allowed=1
else
    echo "  tried: find the token in the web server's /proc/$serve/cmdline ... refused (not there)"
fi
# The owner, for contrast: the same request with the token.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "x-token: ${link##*token=}" "$base/api/sessions")
echo "as root with the token: GET /api/sessions ... HTTP $code"
[ "$allowed" = 0 ] && echo "every case refused" || echo "SOME CASES ALLOWED"
exit "$allowed"
