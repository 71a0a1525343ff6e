#!/usr/bin/env bash
# Where the duty cycle's cost floor comes from: on tiny PyTorch kernels, what a session costs that
# records ~1% of the time, beside what CUPTI itself costs for the same switching. Variants, rounds
# interleaved in a seeded random order, pinned to DUTY_CPUS (default 0-3):
#   plain          no collector
#   bare-idle      the bare collector subscribed, nothing enabled (BARE_CUPTI_KINDS= BARE_CUPTI_SUBSCRIBE=1)
#   bare-toggle-1  the bare collector with cuscope's lean kinds and timed calls switched on for
#                  1.25 ms every 125 ms (BARE_CUPTI_TOGGLE), buffers discarded
#   bare-full      the same kinds and calls all the time
#   fixed-1        cuscope monitor mode at a fixed 1% duty cycle (8 windows a second: 16 switches)
#   fixed-1-w1     the same in one window a second (2 switches: CUSCOPE_DUTY_WINDOWS=1)
#   fixed-1-w32    the same in 32 windows a second (64 switches)
#   fixed-10-w1    10% in one window a second
#   recorded-once  1% of a 60 s interval in one window: recording at the start (the session's first
#                  window, through the program's warm-up) and off for the rest of the run
#   bare-once-start  the bare collector's lean kinds and timed calls on from the injection (before
#                  the program's context) for 1 s, then off for good (BARE_CUPTI_ONCE=0,1000)
#   bare-once-live   the same switched on 4 s after the injection, into the running loop, for 10 ms,
#                  then off for good (BARE_CUPTI_ONCE=4000,10): with a loop longer than 4 s, whether
#                  switching on into a live context leaves a cost behind
#   bare-once-start-kernel, bare-once-live-kernel
#                  the same two with the kernel kind alone, no timed calls (BARE_CUPTI_KINDS=kernel):
#                  whether what stays after the switch off comes with the kernel records or the calls
#   bare-once-live-detach, bare-once-live-kernel-detach
#                  bare-once-live and bare-once-live-kernel with CUPTI detached once the window is
#                  off (BARE_CUPTI_DETACH=1: flushed, unsubscribed, cuptiFinalize): whether what
#                  stays leaves with CUPTI, the way a duty cycle could shed it
#   bare-cycle-1, bare-cycle-1-detach
#                  the bare collector's lean kinds and timed calls on for 10 ms in every second
#                  (BARE_CUPTI_CYCLE=1000,10), and the same with CUPTI detached after every window
#                  and attached again before the next: what a duty cycle that detaches would cost
#   bare-once-live-detach-exit, bare-cycle-1-detach-exit
#                  the same detaching at the exit of the program's next runtime call, as CUPTI
#                  recommends (BARE_CUPTI_DETACH=exit), not from the injection's own thread
#   bare-cycle-8, bare-cycle-8-detach, bare-cycle-8-detach-exit
#                  8 windows a second of 1 ms (BARE_CUPTI_CYCLE=125,1), as cuscope's 1% duty cycle
#                  switches: attached throughout, detached from its own thread, at a call's exit
#   monitor-full   cuscope monitor mode recording all the time
# Each run's stderr is kept in OUT/err_VARIANT_ROUND; the bare collector's detach timings, every
# run's, are gathered in OUT/detach_times.txt as the runs go.
# Prints, through bench/gpu/summarise_overhead.py, each variant's median us per kernel, the median
# (and spread) of its per-round difference to plain, and cuscope's against the bare twin's.
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/duty_floor_probe.sh [--rounds N] [--kernels N] [--out DIR] [--seed N] [--variants V,V,...]
# (default variants: plain bare-idle bare-toggle-1 bare-full fixed-1 monitor-full)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
rounds=7 kernels=60000 out=duty-floor seed=1 chosen=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --out) out=$2; shift ;;
    --seed) seed=$2; shift ;;
    --variants) IFS=, read -r -a chosen <<< "$2"; shift ;;
    -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
    *) echo "duty_floor_probe.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
B=$PWD/${DUTY_BUILD:-build-device}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
bare=$B/bench/libbare_cupti_injection.so lib=$B/lib/libcuscope.so
pin=(taskset -c "${DUTY_CPUS:-0-3}")
lean=(BARE_CUPTI_KINDS=kernel,memcpy,memset,sync,nvtx,memory,overhead BARE_CUPTI_CALLBACK=lean)
variants=(plain bare-idle bare-toggle-1 bare-full fixed-1 monitor-full)
((${#chosen[@]})) && variants=("${chosen[@]}")
results=$out/cost.txt
: > "$results"
: > "$out/detach_times.txt"
. bench/gpu/interleaved_rounds.sh

# One run of the tiny workload under variant $2 in round $3 (run_interleaved_rounds' order).
run_variant() {
  local workload=$1 v=$2 round=$3 us
  local -a cuscope venv
  cuscope=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_MODE=monitor CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1
           CUSCOPE_OUTPUT="$out/${v}_$round.cuscope")
  case $v in
    plain) venv=() ;;
    bare-idle) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS= BARE_CUPTI_SUBSCRIBE=1) ;;
    # Toggling reads the records (the bare collector checks what each window got), as cuscope does.
    bare-toggle-1) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_TOGGLE=125000,1250 BARE_CUPTI_CHECK=1) ;;
    bare-full) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}") ;;
    bare-once-start) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_ONCE=0,1000) ;;
    bare-once-live) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_ONCE=4000,10) ;;
    bare-once-start-kernel) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel BARE_CUPTI_ONCE=0,1000) ;;
    bare-once-live-kernel) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel BARE_CUPTI_ONCE=4000,10) ;;
    bare-once-live-detach) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_ONCE=4000,10 BARE_CUPTI_DETACH=1) ;;
    bare-once-live-kernel-detach) venv=(CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel BARE_CUPTI_ONCE=4000,10 BARE_CUPTI_DETACH=1) ;;
    bare-cycle-1) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=1000,10) ;;
    bare-cycle-1-detach) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=1000,10 BARE_CUPTI_DETACH=1) ;;
    bare-once-live-detach-exit) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_ONCE=4000,10 BARE_CUPTI_DETACH=exit) ;;
    bare-cycle-1-detach-exit) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=1000,10 BARE_CUPTI_DETACH=exit) ;;
    bare-cycle-8) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=125,1) ;;
    bare-cycle-8-detach) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=125,1 BARE_CUPTI_DETACH=1) ;;
    bare-cycle-8-detach-exit) venv=(CUDA_INJECTION64_PATH="$bare" "${lean[@]}" BARE_CUPTI_CYCLE=125,1 BARE_CUPTI_DETACH=exit) ;;
    fixed-1) venv=("${cuscope[@]}" CUSCOPE_DUTY_CYCLE=1) ;;
    fixed-1-w1) venv=("${cuscope[@]}" CUSCOPE_DUTY_CYCLE=1 CUSCOPE_DUTY_WINDOWS=1) ;;
    fixed-1-w32) venv=("${cuscope[@]}" CUSCOPE_DUTY_CYCLE=1 CUSCOPE_DUTY_WINDOWS=32) ;;
    fixed-10-w1) venv=("${cuscope[@]}" CUSCOPE_DUTY_CYCLE=10 CUSCOPE_DUTY_WINDOWS=1) ;;
    recorded-once) venv=("${cuscope[@]}" CUSCOPE_DUTY_CYCLE=1 CUSCOPE_DUTY_WINDOWS=1 CUSCOPE_MONITOR_INTERVAL=60) ;;
    monitor-full) venv=("${cuscope[@]}") ;;
    *) echo "duty_floor_probe.sh: unknown variant $v" >&2; exit 2 ;;
  esac
  us=$(env "${venv[@]}" "${pin[@]}" python3 bench/gpu/torch_overhead.py --workload "$workload" --kernels "$kernels" \
         --reps 3 2> "$out/err_${v}_$round" | grep -o 'median_us_per_kernel=[0-9.]*' | cut -d= -f2)
  [ -z "$us" ] && report_failed_run "variant $v, round $round" 1 "$out/err_${v}_$round"
  # The detach timings of every run in one file, kept as the runs go (a call cut short keeps them,
  # and one file comes back where many may not).
  if grep -q "detach (" "$out/err_${v}_$round"; then
    { echo "variant=$v round=$round"; grep -A4 "detach (" "$out/err_${v}_$round"; } >> "$out/detach_times.txt"
  fi
  record_run "workload=$workload round=$round variant=$v us_per_kernel=${us:-failed}"
}

run_interleaved_rounds "$rounds" "$seed" run_variant "${variants[@]/#/tiny:}"
# A failed run's line has no number: the summary leaves it out.
python3 bench/gpu/summarise_overhead.py --metric us_per_kernel --baseline plain \
  --variants "$(IFS=,; echo "${variants[*]}")" \
  --pair fixed-1=bare-toggle-1 --pair monitor-full=bare-full "$results"
