#!/usr/bin/env bash
# The one-run top-down and GPU counters over time, measured on the GPU machine, from the
# repository root:
#   scripts/top_down_suite.sh [OUT_DIR] [--quick]
# Needs build-device/ (scripts/build_for_device.sh), ncu and PyTorch.
#   1. `cuscope profile --top-down` on a PyTorch transformer block (examples/torch_top_down.py):
#      its wall time, its report, and its checksum against a plain run;
#   2. the two-run workflow on the same program (a timeline run, then ncu on the same hot kernels,
#      sol+occupancy+stalls, --clock-control none) with its wall time, and the kernel metrics of
#      both compared (scripts/compare_ncu.py);
# --quick runs 1 only. (GPU counters over time: scripts/pm_vs_range.py compares PM-sampled and
# Range-Profiler SM throughput once the collector runs the samplers.)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results}
quick=${2:-}
mkdir -p "$out"
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
lib="$B/lib/libcuscope.so"
cli="$B/bin/cuscope"
ki="$B/examples/example_kernel_internals"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
python=$(command -v python3)
prog=("$python" examples/torch_top_down.py --steps 4000)
seconds() { date +%s.%N; }
timed() {  # timed LABEL COMMAND...: runs it, prints and records its wall time
  local label=$1; shift
  local t0; t0=$(seconds)
  "$@" > "$out/$label.log" 2>&1
  local rc=$?
  local took; took=$(awk -v a="$t0" -v b="$(seconds)" 'BEGIN { printf "%.2f", b - a }')
  echo "$took" > "$out/$label.seconds"
  echo "$label: exit $rc, $took s"
}

echo "== 1. one run: cuscope profile --top-down --delay 1 --duration 1"
timed plain "${prog[@]}"
timed top_down "$cli" profile -f -o "$out/top_down" --top-down --delay 1 --duration 1 -- "${prog[@]}"
grep -h "checksum\|ms_per_step" "$out/plain.log" "$out/top_down.log"
grep -h "^cuscope:" "$out/top_down.log"
"$cli" analyze "$out/top_down.cuscope" > "$out/top_down_analysis.txt" 2>&1
cat "$out/top_down_analysis.txt" | cut -c1-200 | head -90
"$cli" stats --report gpu_metrics "$out/top_down.cuscope" 2>&1 | cut -c1-160 | head -30
"$cli" dump "$out/top_down.cuscope" | grep -E "^(metrics|hot|top-down|window)" > "$out/top_down.dump"
grep -E "^(hot|top-down)" "$out/top_down.dump" | cut -c1-200

if [ "$quick" != --quick ]; then
  echo "== 2. two runs: a timeline run, then ncu on the same hot kernels"
  timed timeline "$cli" profile -f -o "$out/timeline" --delay 1 --duration 1 -- "${prog[@]}"
  names=$(grep "^hot" "$out/top_down.dump" | awk '{print $NF}' | paste -sd'|')
  launches=$(( $(grep -c "^hot" "$out/top_down.dump") * 3 ))
  metrics=$("$cli" metrics --csv sol,occupancy,stalls)
  timed ncu "$ncu" --clock-control none --target-processes all --kernel-name-base mangled -k "regex:^($names)\$" \
    --launch-count "$launches" --metrics "$metrics" -f -o "$out/top_down_ncu" "${prog[@]}"
  "$ncu" --import "$out/top_down_ncu.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
    > "$out/top_down_ncu.csv"
  awk -v one="$(cat "$out/top_down.seconds")" -v a="$(cat "$out/timeline.seconds")" -v b="$(cat "$out/ncu.seconds")" \
    'BEGIN { printf "wall time: one-run top-down %.2f s; two runs %.2f + %.2f = %.2f s; ratio %.2f\n", one, a, b, a + b, one / (a + b) }'
  "$python" scripts/compare_ncu.py --cuscope "$out/top_down.dump" --ncu "$out/top_down_ncu.csv" \
    > "$out/top_down_vs_ncu.md" 2>&1
  echo "compare_ncu exit $?"; grep -iE "within|out of|summary|^\|.*(nvjet|gemm|flash|sm90)" "$out/top_down_vs_ncu.md" | head -30

fi

rm -f "$out"/*.ncu-rep
