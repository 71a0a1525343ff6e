#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests labelled "gpu" report
# themselves skipped on a machine without a GPU (they run on the device: scripts/gpu_suite.sh).
#
# Each test is compiled once: the product, the examples and the benchmarks build in Release (GCC,
# warnings as errors) with only the tests that cannot run under a sanitizer; every other test runs
# in the sanitized build (clang, AddressSanitizer + UndefinedBehaviorSanitizer), whose binaries the
# fuzzers use too. Building the tests twice over, once plain and once sanitized, with a third build
# for the fuzzers, took CI 55 of its 90 minutes. For the whole suite in Release on your machine:
# scripts/build.sh && ctest --test-dir build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/install_chromium.sh  # the browser test of `cuscope report`
# Tests compile in batches (CUSCOPE_UNITY_TESTS, CMakeLists.txt says why) in all three builds.
scripts/build.sh -DCUSCOPE_UNSANITIZABLE_TESTS_ONLY=ON -DCUSCOPE_UNITY_TESTS=ON
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600)
# Hardening (docs/hardening.md): the suite under sanitizers, then a short bounded fuzzing run.
scripts/sanitize.sh
scripts/fuzz.sh 30
