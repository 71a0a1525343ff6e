#!/usr/bin/env bash
# What switching the collection on and off mid-run does, measured under the bare collector and
# under cuscope: (1) BARE_CUPTI_TOGGLE windows on tiny kernels and a replayed graph: how long the
# switches take and from when to when a window's kernel records start; (2) the cost floor of monitor
# mode's duty cycle: plain against fixed duty cycles of 1% and 5% and the full recording, rounds
# interleaved, on tiny kernels; each cuscope trace kept for its intervals' estimates.
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/duty_toggle_probe.sh [--rounds N] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
rounds=5 out=duty-probe
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "duty_toggle_probe.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
B=${B:-$PWD/build-device}
bare=$B/bench/libbare_cupti_injection.so lib=$B/lib/libcuscope.so
mkdir -p "$out"
pin=(taskset -c 0-3)
echo "== toggled windows (bare collector, cuscope's lean kinds and timed calls)"
for workload in tiny graph; do
  for window in 5000 1250; do
    echo "-- $workload, a ${window} us window every 125 ms"
    env CUDA_INJECTION64_PATH="$bare" BARE_CUPTI_KINDS=kernel,memcpy,memset,sync,nvtx,memory,overhead \
      BARE_CUPTI_CALLBACK=lean BARE_CUPTI_CHECK=1 BARE_CUPTI_TOGGLE=125000,$window \
      "${pin[@]}" python3 bench/gpu/torch_overhead.py --workload $workload --kernels 60000 --reps 3 2>&1 |
      grep -E "median|toggle|took|record" | grep -v "ids shared\|queued"
  done
done
echo "== cost floor: tiny kernels, $rounds interleaved rounds"
variants=(plain duty1 duty5 full budget2)
for round in $(seq 1 "$rounds"); do
  mapfile -t order < <(python3 -c 'import random,sys; r=random.Random(int(sys.argv[1])); v=sys.argv[2:]; r.shuffle(v); print("\n".join(v))' "$round" "${variants[@]}")
  for v in "${order[@]}"; do
    venv=()
    if [ "$v" != plain ]; then
      venv=(CUDA_INJECTION64_PATH="$lib" CUSCOPE_MODE=monitor CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1
            CUSCOPE_OUTPUT="$out/${v}_$round.cuscope")
      case $v in
        duty1) venv+=(CUSCOPE_DUTY_CYCLE=1) ;;
        duty5) venv+=(CUSCOPE_DUTY_CYCLE=5) ;;
        budget2) venv+=(CUSCOPE_OVERHEAD_BUDGET=2) ;;
      esac
    fi
    us=$(env "${venv[@]}" "${pin[@]}" python3 bench/gpu/torch_overhead.py --workload tiny --kernels 60000 --reps 3 2>"$out/err" |
         grep -o 'median_us_per_kernel=[0-9.]*' | cut -d= -f2)
    echo "round=$round variant=$v us_per_kernel=${us:-failed}" | tee -a "$out/cost.txt"
  done
done
python3 - "$out/cost.txt" <<'PY'
import statistics, sys, collections
by = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = dict(t.split("=") for t in line.split())
    if f["us_per_kernel"] != "failed": by[f["variant"]][f["round"]] = float(f["us_per_kernel"])
plain = by["plain"]
for v, runs in by.items():
    d = [100 * (runs[r] - plain[r]) / plain[r] for r in runs if r in plain]
    print(f"{v:8} median {statistics.median(runs.values()):.3f} us  added {statistics.median(d):+.2f}% ({min(d):+.2f}..{max(d):+.2f})")
PY
