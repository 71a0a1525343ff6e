#!/usr/bin/env bash
# Installs Debian's `chromium` if no Chromium binary is on PATH. Only the browser test of
# `cuscope report` (tests/report, ctest -R report_browser) needs it: that test loads a generated
# report in headless Chromium and checks the rendered page; without a browser it reports itself
# skipped. Needs root (or sudo) and the Debian package archive.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then
    echo "cuscope: $(command -v "$b") is installed"
    exit 0
  fi
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "cuscope: installing chromium (for the report browser test)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium
