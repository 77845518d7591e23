#!/usr/bin/env bash
# Installs what the browser tests drive: Debian's chromium and its chromedriver
# (/usr/bin/chromium, /usr/bin/chromedriver). Does nothing when both are there.
set -euo pipefail
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
source "$(dirname "$0")/lib/apt.sh"
apt_install "the browser tests" chromium chromium-driver
/usr/bin/chromium --version >&2
