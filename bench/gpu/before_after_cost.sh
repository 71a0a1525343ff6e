#!/usr/bin/env bash
# What a change did to cuscope's cost: two builds of it (BEFORE and AFTER, build folders from
# scripts/build_for_device.sh) on tiny PyTorch kernels (bench/gpu/torch_overhead.py), in trace
# mode (the default, lean) and monitor mode, against the plain run. Rounds interleaved
# (bench/gpu/interleaved_rounds.sh), pinned to COST_CPUS (default 0-3). Prints each variant's
# median us per kernel and the median (and spread) of its per-round difference to plain, then
# after against before per mode. --references adds, in the same rounds, the bare collector with the
# kernel kind alone (AFTER_DIR's bench/libbare_cupti_injection.so: CUPTI's own floor) and
# torch.profiler, so that one run gives the whole PyTorch row of the cost matrix for both builds.
#
# On the GPU machine, from the repository root:
#   bench/gpu/before_after_cost.sh BEFORE_DIR AFTER_DIR [--rounds N] [--kernels N] [--out DIR] [--seed S]
#                                  [--references]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh
[ $# -ge 2 ] || { echo "usage: before_after_cost.sh BEFORE_DIR AFTER_DIR [--rounds N] [--kernels N] [--out DIR] [--seed S] [--references]" >&2; exit 2; }
before=$(realpath "$1") after=$(realpath "$2"); shift 2
rounds=7 kernels=60000 out=before-after seed=1 references=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --out) out=$2; shift ;;
    --seed) seed=$2; shift ;;
    --references) references=1 ;;
    *) echo "before_after_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
for b in "$before" "$after"; do
  [ -e "$b/lib/libcuscope.so" ] || { echo "before_after_cost.sh: no $b/lib/libcuscope.so" >&2; exit 2; }
done
mkdir -p "$out"
results=$out/cost.txt
: > "$results"
pin=(taskset -c "${COST_CPUS:-0-3}")
variants=(plain before-trace after-trace before-monitor after-monitor)
if [ "$references" = 1 ]; then
  [ -e "$after/bench/libbare_cupti_injection.so" ] ||
    { echo "before_after_cost.sh: no $after/bench/libbare_cupti_injection.so for --references" >&2; exit 2; }
  variants+=(bare-kernel torch.profiler)
fi

# One run: WORKLOAD (tiny) VARIANT ROUND.
run_one() {
  local workload=$1 v=$2 round=$3 b venv=() us mode=plain
  case $v in
    before-*) b=$before ;;
    after-*) b=$after ;;
    bare-kernel) venv=(CUDA_INJECTION64_PATH="$after/bench/libbare_cupti_injection.so" BARE_CUPTI_KINDS=kernel) ;;
    torch.profiler) mode=torch-profiler ;;
  esac
  if [ -n "${b:-}" ]; then
    venv=(LD_LIBRARY_PATH="$b/lib" CUDA_INJECTION64_PATH="$b/lib/libcuscope.so" CUSCOPE_QUIET=1
          CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$out/${v}_$round.cuscope")
    [ "${v#*-}" = monitor ] && venv+=(CUSCOPE_MODE=monitor)
  fi
  us=$(env "${venv[@]}" "${pin[@]}" python3 bench/gpu/torch_overhead.py --mode "$mode" --workload "$workload" --kernels "$kernels" \
         --reps 3 2> "$out/err_$v" | grep -o 'median_us_per_kernel=[0-9.]*' | cut -d= -f2)
  [ -z "$us" ] && report_failed_run "$v, round $round" 1 "$out/err_$v"
  record_run "workload=$workload round=$round variant=$v us_per_kernel=${us:-failed}"
}

run_interleaved_rounds "$rounds" "$seed" run_one "${variants[@]/#/tiny:}"
reference=()
[ "$references" = 1 ] && reference=(--reference torch.profiler)
python3 bench/gpu/summarise_overhead.py --metric us_per_kernel --baseline plain "${reference[@]}" \
  --variants "$(IFS=,; echo "${variants[*]}")" \
  --pair after-trace=before-trace --pair after-monitor=before-monitor "$results"
