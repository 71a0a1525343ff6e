#!/usr/bin/env bash
# What a change did to cuscope's cost: two builds of it (BEFORE and AFTER, build folders from
# scripts/build_for_device.sh) on tiny PyTorch kernels (bench/gpu/torch_overhead.py), in trace
# mode (the default, lean) and monitor mode, against the plain run. Rounds interleaved, each in a
# seeded random order, pinned to COST_CPUS (default 0-3). Prints each variant's median us per
# kernel and the median (and spread) of its per-round difference to plain, then after against
# before per mode.
#
# On the GPU machine, from the repository root:
#   bench/gpu/before_after_cost.sh BEFORE_DIR AFTER_DIR [--rounds N] [--kernels N] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
[ $# -ge 2 ] || { echo "usage: before_after_cost.sh BEFORE_DIR AFTER_DIR [--rounds N] [--kernels N] [--out DIR]" >&2; exit 2; }
before=$(realpath "$1") after=$(realpath "$2"); shift 2
rounds=7 kernels=60000 out=before-after
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "before_after_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
for b in "$before" "$after"; do
  [ -e "$b/lib/libcuscope.so" ] || { echo "before_after_cost.sh: no $b/lib/libcuscope.so" >&2; exit 2; }
done
mkdir -p "$out"
pin=(taskset -c "${COST_CPUS:-0-3}")
variants=(plain before-trace after-trace before-monitor after-monitor)
: > "$out/cost.txt"
for round in $(seq 1 "$rounds"); do
  mapfile -t order < <(python3 -c 'import random,sys; r=random.Random(int(sys.argv[1])); v=sys.argv[2:]; r.shuffle(v); print("\n".join(v))' "$round" "${variants[@]}")
  for v in "${order[@]}"; do
    case $v in
      before-*) b=$before ;;
      after-*) b=$after ;;
    esac
    case $v in
      plain) venv=() ;;
      *-trace) venv=(LD_LIBRARY_PATH="$b/lib" CUDA_INJECTION64_PATH="$b/lib/libcuscope.so" CUSCOPE_QUIET=1
                     CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$out/${v}_$round.cuscope") ;;
      *-monitor) venv=(LD_LIBRARY_PATH="$b/lib" CUDA_INJECTION64_PATH="$b/lib/libcuscope.so" CUSCOPE_QUIET=1
                       CUSCOPE_MODE=monitor CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$out/${v}_$round.cuscope") ;;
    esac
    us=$(env "${venv[@]}" "${pin[@]}" python3 bench/gpu/torch_overhead.py --workload tiny --kernels "$kernels" --reps 3 \
           2> "$out/err_$v" | grep -o 'median_us_per_kernel=[0-9.]*' | cut -d= -f2)
    [ -z "$us" ] && sed -n '1,5p' "$out/err_$v"
    echo "workload=tiny round=$round variant=$v us_per_kernel=${us:-failed}" | tee -a "$out/cost.txt"
  done
done
python3 bench/gpu/summarise_overhead.py --metric us_per_kernel --baseline plain \
  --variants "$(IFS=,; echo "${variants[*]}")" \
  --pair after-trace=before-trace --pair after-monitor=before-monitor "$out/cost.txt"
