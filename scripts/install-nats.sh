#!/usr/bin/env bash
# Installs what the cluster tests start: Debian's NATS server (/usr/sbin/nats-server), run by
# the tests themselves on a free port. Does nothing when it is there.
set -euo pipefail
if [[ -x /usr/sbin/nats-server ]]; then
    exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi
echo "installing nats-server (Debian package) for the cluster tests" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nats-server >/dev/null
/usr/sbin/nats-server --version >&2
