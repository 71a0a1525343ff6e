#!/usr/bin/env bash
# Configures and builds cuscope in build/ (Release, warnings as errors).
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
# The collector library links private static abseil, protobuf and RE2 (built once).
if command -v nvcc >/dev/null; then scripts/build_private_deps.sh; fi
# Every test unless the arguments say otherwise (scripts/test.sh builds only some here).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCUSCOPE_WERROR=ON -DCUSCOPE_UNSANITIZABLE_TESTS_ONLY=OFF "$@" >/dev/null
cmake --build build -j"$(nproc)"
