#!/usr/bin/env bash
# Builds the libFuzzer targets in build-asan/ (scripts/asan_build.sh: clang 14, AddressSanitizer and
# UndefinedBehaviorSanitizer, the build the sanitized test suite runs from) and runs each for
# SECONDS (default 60), starting from the seed corpus in tests/fuzz/corpus.
#
#   scripts/fuzz.sh [SECONDS]
#
# FUZZ_TARGETS="trace_reader analyzer export control_request" picks targets; FUZZ_CORPUS_DIR keeps the growing corpus
# somewhere else (default build-asan/fuzz/corpus). A crash, a hang (over 10 s on one input), an
# allocation over 512 MB or a resident size over 2 GB fails the run; the input is left in
# build-asan/fuzz/artifacts/TARGET/ — copy it to tests/fuzz/regressions/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(${FUZZ_TARGETS:-trace_reader analyzer export control_request})

scripts/asan_build.sh $(printf 'fuzz_%s ' "${targets[@]}")

corpus_root="${FUZZ_CORPUS_DIR:-build-asan/fuzz/corpus}"
status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$corpus_root/$t"
  artifacts="build-asan/fuzz/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  log="build-asan/fuzz/fuzz_$t.log"
  # The control socket's requests have seeds of their own; the trace targets share the traces'.
  if [ "$t" = control_request ]; then
    seeds=(tests/fuzz/corpus_control)
  else
    seeds=(tests/fuzz/corpus tests/fuzz/regressions)
  fi
  echo "cuscope: fuzzing $t for ${seconds}s (log $log)"
  rc=0
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "build-asan/bin/fuzz_$t" "$corpus" "${seeds[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  runs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" | tail -1 || true)
  summary+=("$t: ${runs:-?} executions in ${seconds}s, exit $rc")
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "cuscope: fuzz_$t failed; the input is in $artifacts/:"
    ls "$artifacts"
    grep -E "ERROR|SUMMARY|check failed|Test unit written" "$log" | head -20 || true
  fi
done
printf 'cuscope: %s\n' "${summary[@]}"
exit "$status"
