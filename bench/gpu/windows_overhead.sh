#!/usr/bin/env bash
# What each collector costs per kernel, read inside one process: the workload alternates plain
# stretches with collected ones (bench/gpu/torch_overhead.py --mode windows, launch_overhead_bench
# --mode windows), so that the difference is taken between stretches that share the process's
# cores, memory placement and clocks. Across processes on the shared GPU machine the plain run
# alone varies by 1.6x; within one process the stretches follow each other by a second.
#
# Collectors: torch.profiler (PyTorch only, toggled by the script), cuscope (injected, its window
# on cudaProfilerStart: CUSCOPE_CAPTURE_RANGE=cudaProfilerApi) with its default lean collection
# and with kernel records only, and the bare CUPTI collector (bench/gpu/bare_cupti_injection.cc,
# BARE_CUPTI_GATE=profiler) with the same selections, and with the lean calls timed by a driver
# callback instead. Each (workload, collector) process runs ROUNDS times, the processes in a seeded
# random order per round; bench/gpu/summarise_windows.py takes the median over the processes of
# each process's median added time, and the ratios the cost targets are stated in.
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/windows_overhead.sh [--rounds N] [--stretches S] [--kernels N] [--launches N]
#                                 [--seed S] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh

rounds=3 stretches=9 kernels=20000 launches=30000 seed=1 out=windows-overhead
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --stretches) stretches=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --launches) launches=$2; shift ;;
    --seed) seed=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "windows_overhead.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

use_device_build windows_overhead.sh "$out" windows.txt
cuscope_env=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/trace"
             CUSCOPE_CAPTURE_RANGE=cudaProfilerApi)
bare_env=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_GATE=profiler)
set_collector_env() {
  case $1 in
    torch.profiler) venv=() ;;
    cuscope-lean) venv=("${cuscope_env[@]}") ;;
    cuscope-kernel) venv=("${cuscope_env[@]}" CUSCOPE_KINDS=kernel) ;;
    bare-kernel) venv=("${bare_env[@]}" BARE_CUPTI_KINDS=kernel) ;;
    bare-lean) venv=("${bare_env[@]}" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_API=lean) ;;
    bare-lean-driver) venv=("${bare_env[@]}" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_API=driver-lean) ;;
    bare-lean-driver-callback) venv=("${bare_env[@]}" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_CALLBACK=driver-lean) ;;
    *) echo "windows_overhead.sh: no collector $1" >&2; exit 2 ;;
  esac
}
torch_collectors=(torch.profiler cuscope-lean cuscope-kernel bare-kernel bare-lean bare-lean-driver bare-lean-driver-callback)
launch_collectors=(cuscope-lean bare-kernel bare-lean bare-lean-driver-callback)
if [ -n "${WINDOWS_COLLECTORS:-}" ]; then
  IFS=, read -r -a torch_collectors <<< "$WINDOWS_COLLECTORS"
  mapfile -t launch_collectors < <(printf '%s\n' "${torch_collectors[@]}" | grep -v '^torch.profiler$')
fi
runs=()
for c in "${torch_collectors[@]}"; do runs+=("pytorch:$c"); done
for c in "${launch_collectors[@]}"; do runs+=("launch:$c"); done

run_one() {
  local workload=$1 collector=$2 round=$3 log=$tmp/run.log line
  local -a cmd venv
  if [ "$workload" = pytorch ]; then
    local arm=window
    [ "$collector" = torch.profiler ] && arm=torch.profiler
    cmd=(python3 bench/gpu/torch_overhead.py --mode windows --arms "$arm" --kernels "$kernels" --reps "$stretches"
         --seed "$((seed * 100 + round))")
  else
    cmd=("$B/bench/launch_overhead_bench" --mode windows --launches "$launches" --reps "$stretches")
  fi
  set_collector_env "$collector"
  env "${venv[@]}" "${cmd[@]}" > "$log" 2> "$tmp/run.err"
  local rc=$?
  line=$(grep '^mode=windows' "$log" | tail -1)
  if [ $rc -ne 0 ] || [ -z "$line" ]; then
    report_failed_run "round $round $workload $collector" "$rc" "$tmp/run.err" "$log"
    return
  fi
  if [ "$workload" = launch ]; then  # ns per launch, as µs per kernel
    line=$(awk '{ for (i = 1; i <= NF; ++i) { split($i, kv, "=");
      if (kv[1] ~ /_ns_per_launch$|^added_m/) { sub(/_ns_per_launch$/, "_us_per_kernel", kv[1]); $i = kv[1] "=" sprintf("%.4f", kv[2] / 1000) } } print }' <<< "$line")
  fi
  record_run "workload=$workload collector=$collector round=$round $line"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
echo "== $rounds rounds x ${#runs[@]} processes: PyTorch $stretches stretches of $kernels kernels, launch loop $stretches of $launches"
run_interleaved_rounds "$rounds" "$seed" run_one "${runs[@]}"
python3 bench/gpu/summarise_windows.py "$results" | tee "$out/summary.txt"
