# shellcheck shell=bash disable=SC2154  # $results is the sourcing script's
# Shared by the overhead scripts (sourced, not run): interleaved rounds of runs and the record of
# their measurement lines.
#
#   run_interleaved_rounds ROUNDS SEED RUN_FUNCTION WORKLOAD:VARIANT...
#       calls `RUN_FUNCTION WORKLOAD VARIANT ROUND` for every entry, round after round, each round
#       in a random order of its own drawn from SEED: drift (clocks, temperature, other load) then
#       touches every variant alike, and the same SEED gives the same order again.
#   record_run LINE
#       appends a measurement line to the file $results and shows it.
#   report_failed_run DESCRIPTION EXIT_STATUS FILE...
#       says on stderr that a run failed, with the last lines of its output FILEs.
#   use_device_build SCRIPT_NAME OUT_DIR RESULTS_FILE
#       sets B (build-device/, or $B), bare, lib and lean_kinds, checks the binaries the overhead
#       scripts run are there, empties OUT_DIR/RESULTS_FILE into $results and makes $tmp (removed at
#       exit).

run_interleaved_rounds() {
  local rounds=$1 seed=$2 run=$3 round entry began
  shift 3
  local -a order
  began=$(date +%s)
  for round in $(seq 1 "$rounds"); do
    mapfile -t order < <(python3 -c 'import random, sys
r = random.Random(int(sys.argv[1])); runs = sys.argv[2:]; r.shuffle(runs); print("\n".join(runs))' \
      "$((seed * 1000 + round))" "$@")
    for entry in "${order[@]}"; do "$run" "${entry%%:*}" "${entry#*:}" "$round"; done
  done
  echo "== $(( $(date +%s) - began )) s; measurements in $results"
}

record_run() {
  echo "$1" >> "$results"
  echo "$1"
}

report_failed_run() {
  local description=$1 status=$2
  shift 2
  echo "$description: failed (exit $status); last lines:" >&2
  tail -n 3 "$@" >&2
}

use_device_build() {
  local script=$1 out_dir=$2 f
  B=${B:-$PWD/build-device}
  bare=$B/bench/libbare_cupti_injection.so
  lib=$B/lib/libcuscope.so
  # The activity kinds of cuscope's default lean collection, for the bare collector's twin of it.
  lean_kinds=kernel,memcpy,memset,sync,nvtx,memory,overhead
  for f in "$bare" "$lib" "$B/bench/launch_overhead_bench"; do
    [ -e "$f" ] || { echo "$script: $f missing (scripts/build_for_device.sh)" >&2; exit 1; }
  done
  mkdir -p "$out_dir"
  results=$out_dir/$3
  : > "$results"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
