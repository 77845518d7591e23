#!/usr/bin/env bash
# Installs what the cluster tests start: Debian's NATS server (/usr/sbin/nats-server), run by
# the tests themselves on a free port. Does nothing when it is there.
set -euo pipefail
if [[ -x /usr/sbin/nats-server ]]; then
    exit 0
fi
source "$(dirname "$0")/lib/apt.sh"
apt_install "the cluster tests" nats-server
/usr/sbin/nats-server --version >&2
