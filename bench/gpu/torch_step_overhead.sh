#!/usr/bin/env bash
# What cuscope costs a PyTorch training-like loop: examples/torch_top_down.py (a transformer
# block in half precision), its steady-state time per step (the second half of the steps), plain,
# with cuscope in monitor mode (injected, 1 s intervals, no file), in monitor mode with its
# Prometheus endpoint (nobody scrapes it: the endpoint's own cost), and tracing (lean, the
# default kinds). Rounds are interleaved, the variants of a round in a seeded random order. The
# measurements go to OUT/steps.txt and bench/gpu/summarise_overhead.py prints ms per step:
# medians, spread, ratios to "plain".
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/torch_step_overhead.sh [--rounds N] [--steps N] [--seed S] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh

rounds=7 steps=400 seed=1 out=torch-step-overhead port=19564
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --steps) steps=$2; shift ;;
    --seed) seed=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "torch_step_overhead.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

B=${B:-$PWD/build-device}
lib=$B/lib/libcuscope.so
[ -e "$lib" ] || { echo "torch_step_overhead.sh: $lib missing (scripts/build_for_device.sh)" >&2; exit 1; }
mkdir -p "$out"
results=$out/steps.txt
: > "$results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

variants=(plain monitor monitor+prometheus trace)
runs=()
for v in "${variants[@]}"; do runs+=("torch_top_down:$v"); done
prometheus_runs=0

# Runs the script once; appends its line to $results, or says why not.
run_one() {
  local workload=$1 variant=$2 round=$3 log=$tmp/run.log
  local -a venv=()
  case $variant in
    plain) ;;
    monitor) venv=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_QUIET=1 CUSCOPE_MODE=monitor CUSCOPE_OUTPUT=) ;;
    monitor+prometheus) venv=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_QUIET=1 CUSCOPE_MODE=monitor CUSCOPE_OUTPUT=
                              CUSCOPE_PROMETHEUS="127.0.0.1:$((port + prometheus_runs))")
      prometheus_runs=$((prometheus_runs + 1)) ;;
    trace) venv=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/trace") ;;
  esac
  env "${venv[@]}" python3 examples/torch_top_down.py --steps "$steps" > "$log" 2> "$tmp/run.err"
  local rc=$?
  rm -f "$tmp"/trace*
  local ms checksum
  ms=$(grep -o 'ms_per_step_second_half=[0-9.]*' "$log" | cut -d= -f2)
  checksum=$(grep -o 'checksum=[0-9.e+-]*' "$log" | cut -d= -f2)
  if [ $rc -ne 0 ] || [ -z "$ms" ]; then
    report_failed_run "round $round $variant" "$rc" "$tmp/run.err" "$log"
    return
  fi
  record_run "workload=$workload variant=$variant round=$round ms_per_step=$ms checksum=$checksum"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
echo "== $rounds rounds x ${#runs[@]} runs of examples/torch_top_down.py --steps $steps"
run_interleaved_rounds "$rounds" "$seed" run_one "${runs[@]}"
python3 bench/gpu/summarise_overhead.py "$results" --metric ms_per_step --baseline plain \
  --variants "$(IFS=,; echo "${variants[*]}")" | tee "$out/summary.txt"
