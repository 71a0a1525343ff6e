#!/usr/bin/env bash
# What each way of collecting costs per kernel, on two workloads: PyTorch (40,000 tiny ATen kernels
# per repetition, bench/gpu/torch_overhead.py) and the raw CUDA launch loop
# (launch_overhead_bench). Variants: plain; bare CUPTI (libbare_cupti_injection.so) with kernel
# only, kernel+memcpy+memset+sync, the lean selection, every kind, and kernel with a subscriber;
# cuscope with the same selections, its default (lean) and monitor mode; torch.profiler (PyTorch
# only). Chosen by MATRIX_VARIANTS only: bare-lean-kinds (the lean kinds, no API call),
# bare-lean-callback (the lean calls timed by a callback instead of API records), and its halves
# bare-lean-runtime-callback and bare-lean-driver-callback (only the runtime's, only the driver's
# lean calls timed), bare-lean-driver (API records of the driver's lean calls only). Rounds are
# interleaved and each round runs the variants in a seeded random order, so that
# drift (clocks, temperature) touches every variant alike. The measurements go to OUT/matrix.txt and
# bench/gpu/summarise_overhead.py prints a table per workload.
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/overhead_matrix.sh [--rounds N] [--quick] [--torch-reps R] [--launch-reps R]
#                                [--kernels N] [--launches N] [--seed S] [--out DIR]
# Each run's wall time is in matrix.txt (wall_s): tune --torch-reps / --launch-reps from it. On the
# H100 (5 Dec) a round of five variants and torch.profiler on both workloads took ~39 s at
# --torch-reps 2 --launch-reps 2, so the whole default set (13 variants) takes ~14 minutes at 7
# rounds: past one 10-minute device call; name a subset with MATRIX_VARIANTS there.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh

rounds=7 torch_reps=3 launch_reps=3 kernels=40000 launches=100000 seed=1 out=overhead-matrix
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --quick) rounds=3 ;;
    --torch-reps) torch_reps=$2; shift ;;
    --launch-reps) launch_reps=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --launches) launches=$2; shift ;;
    --seed) seed=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "overhead_matrix.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

use_device_build overhead_matrix.sh "$out" matrix.txt
cuscope_env=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/trace")
# The environment that makes each variant, into the array venv (torch.profiler is a mode of the
# PyTorch script instead), and the workload's extra arguments into vargs: a "-late" variant opens
# its collector's window with cudaProfilerStart after the warm-up (the CUDA context made) and keeps
# it for every repetition, where the others turn on with the injection, before the context. The
# bare collector's variants take more suffixes, each a change to how CUPTI collects: "-ctx" turns
# on at the first context's creation (after the context, before the first kernel), "-pinned" keeps
# CUPTI's timestamps in pinned host memory, "-devbuf32m" gives them a 32 MiB device buffer (CUPTI's
# default ~3.2 MB), "-sharedbuf" one activity buffer for all threads, "-ascuscope" sets what
# cuscope sets besides the kinds (system thread ids, a 500 ms flush period, a subscriber) so that
# bare-lean-ascuscope against cuscope-lean is cuscope's own work alone, "-latency" asks for the
# kernel records' queued/submitted timestamps (bare-lean-pinned-late: suffixes combine, outermost
# last). bare-lean-nolaunch records the lean calls but the kernel launches. cuscope's variants
# take "-noqueue" (CUSCOPE_QUEUE_TIMES=0, no queue times); cuscope-light is the light set
# (kernel,memcpy,memset,nvtx,overhead: no API call, no synchronization record), cuscope-light+memory
# adds the allocation records.
set_variant_env() {
  vargs=()
  case $1 in
    *-late) set_variant_env "${1%-late}"; vargs=(--window-after-warmup)
            case $1 in
              bare-*) venv+=(BARE_CUPTI_GATE=profiler) ;;
              cuscope-*) venv+=(CUSCOPE_CAPTURE_RANGE=cudaProfilerApi) ;;
              *) echo "overhead_matrix.sh: no variant $1" >&2; exit 2 ;;
            esac ;;
    bare-*-ctx) set_variant_env "${1%-ctx}"; venv+=(BARE_CUPTI_GATE=context) ;;
    bare-*-pinned) set_variant_env "${1%-pinned}"; venv+=(BARE_CUPTI_HOST_PINNED=1) ;;
    bare-*-devbuf32m) set_variant_env "${1%-devbuf32m}"; venv+=(BARE_CUPTI_DEVICE_BUFFER=33554432) ;;
    bare-*-sharedbuf) set_variant_env "${1%-sharedbuf}"; venv+=(BARE_CUPTI_PER_THREAD_BUFFERS=0) ;;
    bare-*-latency) set_variant_env "${1%-latency}"; venv+=(BARE_CUPTI_LATENCY=1) ;;
    bare-*-ascuscope) set_variant_env "${1%-ascuscope}"
                      venv+=(BARE_CUPTI_SYSTEM_TIDS=1 BARE_CUPTI_FLUSH_PERIOD_MS=500 BARE_CUPTI_SUBSCRIBE=1) ;;
    plain|torch.profiler) venv=() ;;
    bare-kernel) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel) ;;
    bare-kernel+copies+sync) venv=(CUDA_INJECTION64_PATH="$bare" "BARE_CUPTI_KINDS=kernel,memcpy,memset,sync") ;;
    bare-lean) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_API=lean) ;;
    bare-lean-kinds) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds") ;;
    bare-lean-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_CALLBACK=lean) ;;
    bare-lean-runtime-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_CALLBACK=runtime-lean) ;;
    bare-lean-driver-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_CALLBACK=driver-lean) ;;
    bare-lean-nolaunch) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_API=lean-nolaunch) ;;
    bare-light) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel,memcpy,memset,nvtx,overhead) ;;
    bare-light-nolaunch-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel,memcpy,memset,nvtx,overhead
                                        BARE_CUPTI_CALLBACK=lean-nolaunch) ;;
    bare-light-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel,memcpy,memset,nvtx,overhead
                               BARE_CUPTI_CALLBACK=lean) ;;
    bare-light+memory-callback) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel,memcpy,memset,nvtx,overhead,memory
                                      BARE_CUPTI_CALLBACK=lean) ;;
    bare-lean-driver) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS="$lean_kinds" BARE_CUPTI_API=driver-lean) ;;
    bare-all) venv=(CUDA_INJECTION64_PATH="$bare") ;;
    bare-subscribe) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel BARE_CUPTI_SUBSCRIBE=1) ;;
    cuscope-kernel) venv=("${cuscope_env[@]}" CUSCOPE_KINDS=kernel) ;;
    cuscope-kernel+copies+sync) venv=("${cuscope_env[@]}" "CUSCOPE_KINDS=kernel,memcpy,memset,sync") ;;
    cuscope-lean) venv=("${cuscope_env[@]}") ;;
    cuscope-lean-records) venv=("${cuscope_env[@]}" CUSCOPE_LEAN_CALLS=records) ;;
    cuscope-*-noqueue) set_variant_env "${1%-noqueue}"; venv+=(CUSCOPE_QUEUE_TIMES=0) ;;
    cuscope-kernel-queue) venv=("${cuscope_env[@]}" CUSCOPE_KINDS=kernel CUSCOPE_QUEUE_TIMES=1) ;;
    cuscope-light) venv=("${cuscope_env[@]}" "CUSCOPE_KINDS=kernel,memcpy,memset,nvtx,overhead") ;;
    cuscope-light+memory) venv=("${cuscope_env[@]}" "CUSCOPE_KINDS=kernel,memcpy,memset,nvtx,overhead,memory") ;;
    cuscope-all) venv=("${cuscope_env[@]}" CUSCOPE_KINDS=all) ;;
    cuscope-monitor) venv=("${cuscope_env[@]}" CUSCOPE_MODE=monitor) ;;
    *) echo "overhead_matrix.sh: no variant $1" >&2; exit 2 ;;
  esac
}
# cuscope's default records its lean calls by callback: its bare twin is bare-light+memory-callback
# (the same kinds, the lean calls timed by callback); bare-lean is the twin of cuscope-lean-records.
common=(plain bare-kernel bare-kernel+copies+sync bare-lean bare-light+memory-callback bare-all bare-subscribe
        cuscope-kernel cuscope-kernel+copies+sync cuscope-lean cuscope-lean-records cuscope-all cuscope-monitor)
# MATRIX_VARIANTS="plain,bare-kernel,..." runs a subset (plain first), when device time is short.
# What the lean cost is made of, PyTorch only (~7 min on an H200 with --rounds 7 --torch-reps 2):
#   MATRIX_WORKLOADS=pytorch MATRIX_VARIANTS=plain,cuscope-lean,cuscope-lean-late,bare-lean,\
#   bare-lean-late,bare-lean-ctx,bare-lean-pinned,bare-lean-devbuf32m,bare-lean-ascuscope,bare-kernel,\
#   bare-kernel-late bench/gpu/overhead_matrix.sh --rounds 7 --torch-reps 2
if [ -n "${MATRIX_VARIANTS:-}" ]; then IFS=, read -r -a common <<< "$MATRIX_VARIANTS"; fi
# torch.profiler is PyTorch's own and always runs there: named here, it would run twice on PyTorch
# and as a second plain run on the launch loop.
for i in "${!common[@]}"; do [ "${common[$i]}" = torch.profiler ] && unset 'common[i]'; done
common=("${common[@]}")
# bare-light is cuscope's light set (kernel,memcpy,memset,nvtx,overhead) bare; with
# -nolaunch-callback it also times by callback the lean calls but the kernel launches (no per-kernel
# call has a callback); with -callback every lean call, the launches too; bare-light+memory-callback
# adds the allocation records.
# MATRIX_CPUS=2-5 runs every variant under taskset on those CPUs (same cores for all: less spread
# from where the process lands).
pin=()
if [ -n "${MATRIX_CPUS:-}" ]; then pin=(taskset -c "$MATRIX_CPUS"); fi
# MATRIX_WORKLOADS=pytorch or launch runs one workload only (default both).
workloads=${MATRIX_WORKLOADS:-pytorch,launch}
case ,$workloads, in *,pytorch,*|*,launch,*) ;; *) echo "overhead_matrix.sh: MATRIX_WORKLOADS: pytorch and/or launch" >&2; exit 2 ;; esac
runs=()
if [[ ,$workloads, == *,pytorch,* ]]; then for v in "${common[@]}" torch.profiler; do runs+=("pytorch:$v"); done; fi
if [[ ,$workloads, == *,launch,* ]]; then for v in "${common[@]}"; do runs+=("launch:$v"); done; fi

# Runs one workload under one variant; appends its line to $results, or says why not.
run_one() {
  local workload=$1 variant=$2 round=$3 log=$tmp/run.log value start_ns wall_s
  local -a cmd venv vargs
  set_variant_env "$variant"
  if [ "$workload" = pytorch ]; then
    local mode=plain
    [ "$variant" = torch.profiler ] && mode=torch-profiler
    cmd=(python3 bench/gpu/torch_overhead.py --mode "$mode" --kernels "$kernels" --reps "$torch_reps" "${vargs[@]}")
  else
    cmd=("$B/bench/launch_overhead_bench" --mode plain --launches "$launches" --reps "$launch_reps" "${vargs[@]}")
  fi
  start_ns=$(date +%s%N)
  env "${venv[@]}" "${pin[@]}" "${cmd[@]}" > "$log" 2> "$tmp/run.err"
  local rc=$?
  wall_s=$(awk -v ns=$(( $(date +%s%N) - start_ns )) 'BEGIN { printf "%.1f", ns / 1e9 }')
  if [ "$workload" = pytorch ]; then
    value=$(grep -o 'median_us_per_kernel=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
  else
    value=$(grep -o 'median_ns_per_launch=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
    [ -n "$value" ] && value=$(awk -v ns="$value" 'BEGIN { printf "%.4f", ns / 1000 }')
  fi
  if [ $rc -ne 0 ] || [ -z "$value" ]; then
    report_failed_run "round $round $workload $variant" "$rc" "$tmp/run.err" "$log"
    return
  fi
  local line="workload=$workload variant=$variant round=$round us_per_kernel=$value wall_s=$wall_s"
  record_run "$line"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
echo "== $rounds rounds x ${#runs[@]} runs: PyTorch $kernels kernels x $torch_reps reps, launch loop $launches x $launch_reps reps"
run_interleaved_rounds "$rounds" "$seed" run_one "${runs[@]}"
python3 bench/gpu/summarise_overhead.py "$results" --metric us_per_kernel --baseline plain \
  --reference torch.profiler --pair cuscope-lean=bare-light+memory-callback --pair cuscope-lean-records=bare-lean \
  --pair cuscope-monitor=bare-light+memory-callback --pair bare-subscribe=bare-kernel \
  --variants "$(IFS=,; echo "${common[*]:1},torch.profiler")" | tee "$out/summary.txt"
