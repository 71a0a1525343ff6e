#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests labelled "gpu" report
# themselves skipped on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/install_chromium.sh  # the browser test of `cuscope report`
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
cd ..
# Hardening (docs/hardening.md): the suite under sanitizers, then a short bounded fuzzing run.
scripts/sanitize.sh
scripts/fuzz.sh 30
