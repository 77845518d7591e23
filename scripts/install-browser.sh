#!/usr/bin/env bash
# Installs what the browser tests drive: Debian's chromium and its chromedriver
# (/usr/bin/chromium, /usr/bin/chromedriver). Does nothing when both are there.
set -euo pipefail
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi
echo "installing chromium and chromium-driver (Debian packages) for the browser tests" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
/usr/bin/chromium --version >&2
