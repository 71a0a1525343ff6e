#!/usr/bin/env bash
# Configures build-asan/ and builds the targets named (all of them without arguments): clang 14,
# AddressSanitizer + UndefinedBehaviorSanitizer, and libFuzzer's coverage hooks in every library.
# The sanitized test suite (scripts/sanitize.sh asan) and the fuzzers (scripts/fuzz.sh) run from
# this one build: a second sanitized build of the same sources cost CI a quarter of its time.
#
#   scripts/asan_build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${BUILD_JOBS:-$(nproc)}"
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
# A build-asan/ configured with another compiler (GCC, before) cannot be switched in place.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-14$' build-asan/CMakeCache.txt; then
  echo "cuscope: build-asan/ was configured with another compiler: starting it afresh"
  rm -rf build-asan
fi
# -O1: sanitized code runs slower; -O1 keeps the suite quick and the reports readable. The tests
# labelled gpu are not built: a sanitized run leaves them out.
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" \
  -DCUSCOPE_WERROR=ON -DCUSCOPE_SANITIZE=address,undefined -DCUSCOPE_BUILD_FUZZERS=ON -DCUSCOPE_UNITY_TESTS=ON \
  -DCUSCOPE_BUILD_BENCH=OFF -DCUSCOPE_BUILD_EXAMPLES=OFF -DCUSCOPE_BUILD_GPU_TESTS=OFF >/dev/null
if (($#)); then
  cmake --build build-asan -j"$jobs" --target "$@"
else
  cmake --build build-asan -j"$jobs"
fi
