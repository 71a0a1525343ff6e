#!/usr/bin/env bash
# Short programs that exit while GPU counters run: each configuration REPS times, the exit status
# of every run counted. A program must exit as it would without cuscope (status 0); a crash at
# exit is printed with the crashing thread's frames (tests/tools/backtrace_on_crash.cc, preloaded).
#   scripts/gpu_exit_check.sh [OUT_DIR] [REPS]
# EXIT_PROGRAMS / EXIT_CONFIGS (comma-separated names) choose a subset. The output of a failed run
# is kept in OUT_DIR.
# On the GPU machine, from the repository root, after scripts/build_for_device.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results/exit}
reps=${2:-5}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# Each configuration is the environment an injected run gets (what `cuscope profile` sets).
configs=(
  "lean|CUSCOPE_GPU_METRICS_DEVICES=all"
  "all|CUSCOPE_KINDS=all CUSCOPE_GPU_METRICS_DEVICES=all"
  "kernel|CUSCOPE_KINDS=kernel CUSCOPE_GPU_METRICS_DEVICES=all"
  "monitor|CUSCOPE_MODE=monitor CUSCOPE_GPU_METRICS_DEVICES=all"
  "monitor-nocounters|CUSCOPE_MODE=monitor"
  "lean-nocounters|"
)
failures=0
IFS=, read -r -a programs <<< "${EXIT_PROGRAMS:-known_work,launch_overhead,sync_every_step}"
for program in "${programs[@]}"; do
  for entry in "${configs[@]}"; do
    name=${entry%%|*}
    [ -n "${EXIT_CONFIGS:-}" ] && [[ ",$EXIT_CONFIGS," != *",$name,"* ]] && continue
    read -r -a cenv <<< "${entry#*|}"
    codes=()
    for rep in $(seq 1 "$reps"); do
      log=$tmp/${program}_${name}_$rep.log
      env "${cenv[@]}" LD_PRELOAD="$B/lib/libbacktrace_on_crash.so" CUDA_INJECTION64_PATH="$B/lib/libcuscope.so" CUSCOPE_FORCE_OVERWRITE=1 \
        CUSCOPE_OUTPUT="$tmp/trace" timeout 120 "$B/examples/example_$program" > "$log" 2>&1
      rc=$?
      codes+=("$rc")
      if [ $rc -ne 0 ]; then
        failures=$((failures + 1))
        cp "$log" "$out/"
        echo "-- $program $name run $rep: exit $rc"
        sed -n '/== backtrace_on_crash/,$p' "$log" | head -40
        tail -n 2 "$log"
      fi
    done
    echo "$program $name: exits ${codes[*]}"
  done
done
echo "== $failures failed runs"
