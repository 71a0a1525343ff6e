#!/usr/bin/env bash
# The one-run top-down and GPU counters over time, measured on the GPU machine, from the
# repository root:
#   scripts/top_down_suite.sh [OUT_DIR] [--quick|--sampling]
# Needs build-device/ (scripts/build_for_device.sh), ncu and PyTorch.
#   1. `cuscope profile --top-down` on a PyTorch transformer block (examples/torch_top_down.py):
#      its wall time, its report, and its checksum against a plain run;
#   2. the two-run workflow on the same program (a timeline run, then ncu on the same hot kernels,
#      sol+occupancy+stalls, --clock-control none) with its wall time, and the kernel metrics of
#      both compared (scripts/compare_ncu.py);
#   3. GPU counter sampling at the default rate: wall time with it off and on, medians of 5 runs
#      each, on a launch-heavy program (example_launch_overhead) and a GEMM-heavy one
#      (torch_top_down: its own ms per step too, over all steps and over the steady second half);
#   4. PM-sampled SM activity against the Range Profiler's sm__throughput on a long steady kernel
#      (example_kernel_internals --kernel fma_chains; scripts/pm_vs_range.py).
# --quick runs 1 only, --sampling 3 and 4 only.
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

if [ "$quick" != --sampling ]; then
  echo "== 1. one run: cuscope profile --top-down --delay 1 --duration 1"
  timed plain "${prog[@]}"
  timed top_down "$cli" profile -f -o "$out/top_down" --top-down --delay 1 --duration 1 -- "${prog[@]}"
  grep -h "checksum\|ms_per_step" "$out/plain.log" "$out/top_down.log"
  grep -h "^cuscope:" "$out/top_down.log"
  "$cli" analyze "$out/top_down.cuscope" > "$out/top_down_analysis.txt" 2>&1
  cat "$out/top_down_analysis.txt" | cut -c1-200 | head -90
  grep -A16 "^GPU counters:" "$out/top_down_analysis.txt" | cut -c1-200
  "$cli" stats --report gpu_metrics "$out/top_down.cuscope" 2>&1 | cut -c1-160 | head -30
  "$cli" dump "$out/top_down.cuscope" | grep -E "^(metrics|hot|top-down|window)" > "$out/top_down.dump"
  grep -E "^(hot|top-down)" "$out/top_down.dump" | cut -c1-200
fi

if [ "$quick" = "" ]; then
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
  echo "compare_ncu exit $?"
  grep -A12 "^## Verdicts" "$out/top_down_vs_ncu.md" | cut -c1-200
  grep -E "values within" "$out/top_down_vs_ncu.md"
fi

if [ "$quick" = "" ] || [ "$quick" = --sampling ]; then

  echo "== 3. GPU counter sampling at the default rate: off vs on, 5 runs each, alternating"
  median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  rm -f "$out"/sampling_*.all_seconds "$out"/sampling_*.ms_per_step "$out"/sampling_*.ms_per_step_second_half
  launchy=("$B/examples/example_launch_overhead" --steps 200000)
  gemmy=("$python" examples/torch_top_down.py --steps 4000)
  for prog_name in launch gemm; do
    if [ $prog_name = launch ]; then p=("${launchy[@]}"); else p=("${gemmy[@]}"); fi
    for i in 1 2 3 4 5; do
      for mode in off on; do
        devices=none; [ $mode = on ] && devices=all
        timed "sampling_${prog_name}_${mode}_$i" "$cli" profile -f -o "$out/sampling_${prog_name}_$mode" \
          --gpu-metrics-devices $devices -- "${p[@]}" > /dev/null
        for field in ms_per_step ms_per_step_second_half; do
          grep -ho "$field=[0-9.]*" "$out/sampling_${prog_name}_${mode}_$i.log" | sed 's/.*=//' \
            >> "$out/sampling_${prog_name}_${mode}.$field"
        done
        cat "$out/sampling_${prog_name}_${mode}_$i.seconds" >> "$out/sampling_${prog_name}_${mode}.all_seconds"
      done
    done
    off=$(median < "$out/sampling_${prog_name}_off.all_seconds"); on=$(median < "$out/sampling_${prog_name}_on.all_seconds")
    awk -v n=$prog_name -v a="$off" -v b="$on" \
      'BEGIN { if (a > 0) printf "sampling cost, %s: wall median off %.3f s, on %.3f s, added %+.3f s (%+.1f%%)\n", n, a, b, b - a, 100 * (b - a) / a; else print "sampling cost, " n ": no runs" }'
    for field in ms_per_step ms_per_step_second_half; do
      if [ -s "$out/sampling_${prog_name}_off.$field" ] && [ -s "$out/sampling_${prog_name}_on.$field" ]; then
        awk -v n=$prog_name -v f=$field -v a="$(median < "$out/sampling_${prog_name}_off.$field")" \
          -v b="$(median < "$out/sampling_${prog_name}_on.$field")" \
          -v offs="$(tr '\n' ' ' < "$out/sampling_${prog_name}_off.$field")" \
          -v ons="$(tr '\n' ' ' < "$out/sampling_${prog_name}_on.$field")" \
          'BEGIN { if (a > 0) printf "sampling cost, %s: %s median off %.4f, on %.4f (%+.2f%%); off: %s; on: %s\n", n, f, a, b, 100 * (b - a) / a, offs, ons }'
      fi
    done
    "$cli" stats --report gpu_metrics "$out/sampling_${prog_name}_on.cuscope" 2>&1 | cut -c1-160 | head -24
  done
  grep -h "^cuscope:" "$out"/sampling_*_on_1.log | sort | uniq -c | head

  echo "== 4. PM sampling vs the Range Profiler on a long steady kernel (fma_chains)"
  "$cli" profile -f -o "$out/pm_fma" --gpu-metrics-devices all -- "$ki" --iterations 1000 --kernel fma_chains \
    > "$out/pm_fma.log" 2>&1
  "$cli" profile -f -o "$out/range_fma" --metrics sol,occupancy -k fma_chains --launch-count 3 -- "$ki" --iterations 20 \
    --kernel fma_chains > "$out/range_fma.log" 2>&1
  "$cli" dump "$out/pm_fma.cuscope" > "$out/pm_fma.dump"
  "$cli" dump "$out/range_fma.cuscope" > "$out/range_fma.dump"
  for pm_metric in sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed \
                   sm__cycles_active.avg.pct_of_peak_sustained_elapsed \
                   sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed; do
    "$python" scripts/pm_vs_range.py --samples "$out/pm_fma.dump" --range "$out/range_fma.dump" --kernel fma_chains \
      --pm-metric "$pm_metric"
  done
  "$python" scripts/pm_vs_range.py --samples "$out/pm_fma.dump" --range "$out/range_fma.dump" --kernel fma_chains \
    --pm-metric sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed \
    --range-metric sm__warps_active.avg.pct_of_peak_sustained_active
  rm -f "$out"/*.dump.tmp "$out"/sampling_*_[1-5].log
fi

rm -f "$out"/*.ncu-rep
