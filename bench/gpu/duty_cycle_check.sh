#!/usr/bin/env bash
# Monitor mode under its duty cycle: what it costs and how right its figures stay, on the workloads
# where recording every kernel costs the most (bench/gpu/torch_overhead.py --workload): tiny
# kernels one after another, a CUDA graph of tiny kernels replayed, tiny kernels with an .item()
# per step, and large elementwise kernels. Variants: plain; monitor mode under the governor with a 1%
# budget (monitor-1) and a 3% budget (monitor-3); monitor mode recording all the time (its default,
# monitor-full), whose figures are the reference for the estimated ones of the same round. Rounds
# are interleaved, each in a seeded random order. Costs: medians of the per-round
# differences to plain, as shares of plain. Figures (bench/gpu/duty_cycle_figures.py): the kernels
# counted against those the program launched, and the busy share, top-10 kernels and idle by cause
# against the full recording.
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/duty_cycle_check.sh [--rounds N] [--reps R] [--kernels N] [--workloads a,b]
#                                 [--variants a,b] [--out DIR]
# --variants: of plain, monitor-1, monitor-3, monitor-full (the default: all four) and fixed-P (a fixed
# duty cycle of P%, CUSCOPE_DUTY_CYCLE: what switching costs beside what is recorded); with a
# detach- prefix (detach-monitor-1, detach-monitor-3, detach-fixed-P) the same detaching CUPTI
# between the windows (CUSCOPE_DUTY_DETACH=1), in DUTY_WINDOWS windows an interval (default 2).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh

rounds=5 reps=3 kernels=60000 workloads=tiny,graph,item,large seed=1 out=duty-cycle
variant_list=plain,monitor-1,monitor-3,monitor-full
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --reps) reps=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --workloads) workloads=$2; shift ;;
    --variants) variant_list=$2; shift ;;
    --seed) seed=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "duty_cycle_check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
use_device_build duty_cycle_check.sh "$out" duty.txt
mkdir -p "$out/traces"
IFS=, read -r -a variants <<< "$variant_list"
case ",$variant_list," in *,plain,*) ;; *) echo "duty_cycle_check.sh: --variants needs plain (the baseline)" >&2; exit 2 ;; esac
pin=()
if [ -n "${DUTY_CPUS:-}" ]; then pin=(taskset -c "$DUTY_CPUS"); fi

run_one() {
  local workload=$1 variant=$2 round=$3 log=$tmp/run.log n=$kernels trace=""
  local -a venv=()
  # Large kernels run ~0.2 ms each: fewer of them.
  [ "$workload" = large ] && n=$((kernels / 30))
  if [ "$variant" != plain ]; then
    trace=$out/traces/${workload}_${variant}_${round}.cuscope
    venv=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_MODE=monitor CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1
          CUSCOPE_OUTPUT="$trace")
    local kind=$variant
    if [ "${variant#detach-}" != "$variant" ]; then
      kind=${variant#detach-}
      venv+=(CUSCOPE_DUTY_DETACH=1 CUSCOPE_DUTY_WINDOWS="${DUTY_WINDOWS:-2}")
    fi
    case $kind in
      monitor-1) venv+=(CUSCOPE_OVERHEAD_BUDGET=1) ;;
      monitor-3) venv+=(CUSCOPE_OVERHEAD_BUDGET=3) ;;
      monitor-full) venv+=(CUSCOPE_OVERHEAD_BUDGET=off) ;;
      fixed-*) venv+=(CUSCOPE_DUTY_CYCLE="${kind#fixed-}") ;;
      *) echo "duty_cycle_check.sh: unknown variant $variant" >&2; exit 2 ;;
    esac
  fi
  env "${venv[@]}" "${pin[@]}" python3 bench/gpu/torch_overhead.py --workload "$workload" --kernels "$n" \
    --reps "$reps" > "$log" 2> "$tmp/run.err"
  local rc=$?
  local value launched
  value=$(grep -o 'median_us_per_kernel=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
  launched=$(grep -o 'kernels_launched=[0-9]*' "$log" | tail -1 | cut -d= -f2)
  if [ $rc -ne 0 ] || [ -z "$value" ]; then
    report_failed_run "round $round $workload $variant" "$rc" "$tmp/run.err" "$log"
    return
  fi
  record_run "workload=$workload variant=$variant round=$round us_per_kernel=$value kernels_launched=$launched trace=$trace"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
runs=()
IFS=, read -r -a wl <<< "$workloads"
for w in "${wl[@]}"; do for v in "${variants[@]}"; do runs+=("$w:$v"); done; done
echo "== $rounds rounds x ${#runs[@]} runs: $kernels kernels x $reps reps a run"
run_interleaved_rounds "$rounds" "$seed" run_one "${runs[@]}"
python3 bench/gpu/summarise_overhead.py "$results" --metric us_per_kernel --baseline plain \
  --variants "$(tr , '\n' <<< "$variant_list" | grep -vx plain | paste -sd,)" | tee "$out/summary.txt"
python3 bench/gpu/duty_cycle_figures.py "$results" --cuscope "$B/bin/cuscope" | tee -a "$out/summary.txt"
