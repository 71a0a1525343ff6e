#!/usr/bin/env bash
# Runs the CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, clang 14,
# built by scripts/asan_build.sh; every test but the gpu-labelled ones) and the concurrency stress
# tests under ThreadSanitizer (build-tsan/, GCC, ctest label "stress"). Any report fails the test
# that triggered it.
#
#   scripts/sanitize.sh [asan|tsan|all]     (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
jobs="${BUILD_JOBS:-$(nproc)}"
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
# ThreadSanitizer's build (GCC). At -O1 with the sanitizers GCC 12 reports -Wmaybe-uninitialized
# inside libstdc++'s <regex>: off for it (the Release build keeps it).
tsan_flags=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1 -Wno-maybe-uninitialized" -DCUSCOPE_WERROR=ON
            -DCUSCOPE_BUILD_BENCH=OFF -DCUSCOPE_BUILD_EXAMPLES=OFF -DCUSCOPE_BUILD_GPU_TESTS=OFF -DCUSCOPE_UNITY_TESTS=ON)

# Tests that preload libcuscope.so into a program built without the sanitizer: the sanitizer's
# runtime must be the first library of a process, which such a program cannot give it.
# MetricConfigTest, PmSamplingConfigTest: CUPTI's host API dlopens libnvperf_host.so with RTLD_DEEPBIND, which
# AddressSanitizer's runtime refuses (it aborts the process); those tests run in the plain suite.
uninstrumented_hosts='^(InjectTest|InstallTest|MetricConfigTest|PmSamplingConfigTest)\.'

if [ "$which" = all ] || [ "$which" = asan ]; then
  echo "cuscope: AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ (clang 14)"
  scripts/asan_build.sh
  (cd build-asan &&
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --output-on-failure -j"$(nproc)" -LE gpu -E "$uninstrumented_hosts" --timeout 900)
fi

if [ "$which" = all ] || [ "$which" = tsan ]; then
  echo "cuscope: ThreadSanitizer build of the stress tests in build-tsan/"
  cmake -S . -B build-tsan "${tsan_flags[@]}" -DCUSCOPE_SANITIZE=thread >/dev/null
  targets=(core_stress_test)
  # Where the CUDA Toolkit is: the Session test (it needs libcuscope.so) and the collector's
  # lifecycle and control-socket tests (CUPTI faked).
  if cmake --build build-tsan --target help | grep session_stress_test >/dev/null; then
    targets+=(session_stress_test collector_lifecycle_test collector_control_test)
  fi
  cmake --build build-tsan -j"$jobs" --target "${targets[@]}"
  (cd build-tsan &&
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    ctest --output-on-failure -L stress --timeout 900)
fi
