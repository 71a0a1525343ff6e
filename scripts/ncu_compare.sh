#!/usr/bin/env bash
# cuscope's kernel metrics against ncu on the same launches, on the GPU machine, from the
# repository root:
#   scripts/ncu_compare.sh [OUT_DIR]
# Needs build-device/ (scripts/build_for_device.sh), ncu and PyTorch. Profiles the same launches
# with `cuscope profile --metrics sol,occupancy,stalls` and with `ncu --clock-control none`:
#   example_kernel_internals: stream_triad (DRAM-bound), fma_chains (compute-bound),
#                             pointer_chase (low occupancy, latency-bound)
#   examples/torch_gemm.py:   every kernel, the cuBLAS GEMMs among them
# then writes OUT_DIR/ncu_comparison.md (scripts/compare_ncu.py; ncu_comparison_cache_none.md against
# ncu with its cache flush off) and times collecting sol+occupancy for the same kernels with each
# tool. The traces, dumps and ncu CSVs are packed into OUT_DIR.tgz to redo the comparison elsewhere.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results}
mkdir -p "$out"
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
cli="$B/bin/cuscope"
ki="$B/examples/example_kernel_internals"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
python=$(command -v python3)
metrics=$("$cli" metrics --csv sol,occupancy,stalls)
# ncu's own occupancy calculator, to check the theoretical occupancy cuscope computes offline.
launch_metrics=launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__maximum_warps_per_active_cycle_pct,launch__registers_per_thread,launch__occupancy_per_block_size
filter='regex:stream_triad|fma_chains|pointer_chase'
seconds() { date +%s.%N; }
timed() {  # timed LABEL COMMAND...: runs it, prints the wall time
  local label=$1; shift
  local t0; t0=$(seconds)
  "$@" > "$out/$label.log" 2>&1
  local rc=$?
  echo "$label: exit $rc, $(awk -v a="$t0" -v b="$(seconds)" 'BEGIN { printf "%.2f", b - a }') s"
}
echo "ncu: $ncu"

echo "== same launches, sol+occupancy+stalls: cuscope, then ncu --clock-control none"
timed ki_cuscope "$cli" profile -f -o "$out/ki_cuscope" --metrics sol,occupancy,stalls -k "$filter" -- "$ki"
timed ki_ncu "$ncu" --clock-control none --metrics "$metrics,$launch_metrics" -k "$filter" -f -o "$out/ki_ncu" "$ki"
"$ncu" --import "$out/ki_ncu.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled > "$out/ki_ncu.csv"
timed gemm_cuscope "$cli" profile -f -o "$out/gemm_cuscope" --metrics sol,occupancy,stalls --per-kernel-count 0 -- \
  "$python" examples/torch_gemm.py
timed gemm_ncu "$ncu" --clock-control none --target-processes all --metrics "$metrics,$launch_metrics" -f \
  -o "$out/gemm_ncu" "$python" examples/torch_gemm.py
"$ncu" --import "$out/gemm_ncu.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled > "$out/gemm_ncu.csv"
# ncu flushes every cache before each replay pass by default; CUPTI's kernel replay does not. The
# same launches once more with ncu's flush off, to tell that apart from a difference in counting.
"$ncu" --clock-control none --cache-control none --metrics "$metrics" -k "$filter" -f -o "$out/ki_ncu_nocache" "$ki" \
  > "$out/ki_ncu_nocache.log" 2>&1
"$ncu" --import "$out/ki_ncu_nocache.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
  > "$out/ki_ncu_nocache.csv"
"$ncu" --clock-control none --cache-control none --target-processes all --metrics "$metrics" -f \
  -o "$out/gemm_ncu_nocache" "$python" examples/torch_gemm.py > "$out/gemm_ncu_nocache.log" 2>&1
"$ncu" --import "$out/gemm_ncu_nocache.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
  > "$out/gemm_ncu_nocache.csv"
for t in ki gemm; do "$cli" dump --limit 100000 "$out/${t}_cuscope.cuscope" | grep -E "^metrics|^kernel" > "$out/${t}_cuscope.dump"; done
grep -h "checksum" "$out"/ki_*.log "$out"/gemm_*.log
echo "== the analyzer's verdicts on the profiled kernels"
for t in ki gemm; do "$cli" stats --report kern_metrics "$out/${t}_cuscope.cuscope" | cut -c1-220; done

echo "== cost: collecting sol+occupancy for the same kernels, whole-program wall time"
sol_occ=$("$cli" metrics --csv sol,occupancy)
for round in 1 2; do
  timed cost_ki_plain "$ki"
  timed cost_ki_cuscope "$cli" profile -q -f -o "$out/cost_ki" --metrics sol,occupancy -k "$filter" -- "$ki"
  timed cost_ki_ncu "$ncu" --clock-control none --metrics "$sol_occ" -k "$filter" -f -o "$out/cost_ki_ncu" "$ki"
  timed cost_gemm_plain "$python" examples/torch_gemm.py
  timed cost_gemm_cuscope "$cli" profile -q -f -o "$out/cost_gemm" --metrics sol,occupancy --per-kernel-count 0 -- \
    "$python" examples/torch_gemm.py
  timed cost_gemm_ncu "$ncu" --clock-control none --target-processes all --metrics "$sol_occ" -f -o "$out/cost_gemm_ncu" \
    "$python" examples/torch_gemm.py
done

"$python" scripts/compare_ncu.py --cuscope "$out/ki_cuscope.dump" --ncu "$out/ki_ncu.csv" \
  --cuscope "$out/gemm_cuscope.dump" --ncu "$out/gemm_ncu.csv" > "$out/ncu_comparison.md"
"$python" scripts/compare_ncu.py --cuscope "$out/ki_cuscope.dump" --ncu "$out/ki_ncu_nocache.csv" \
  --cuscope "$out/gemm_cuscope.dump" --ncu "$out/gemm_ncu_nocache.csv" > "$out/ncu_comparison_cache_none.md"
for f in ncu_comparison ncu_comparison_cache_none; do echo "-- $f"; sed -n '/^## Summary/,$p' "$out/$f.md"; done
# What comes back: the traces, dumps, CSVs, logs and reports (not ncu's own report files).
tar -C "$out" -czf "$out.tgz" --exclude='*.ncu-rep' --exclude='cost_*.cuscope' .
