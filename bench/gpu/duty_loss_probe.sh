#!/usr/bin/env bash
# Looks for the duty cycle's lost kernel records: monitor mode at a fixed duty (CUSCOPE_DUTY_CYCLE)
# on tiny kernels, run after run, and per run, interval by interval, the launch calls timed against
# the kernels recorded (raw counts in the observed windows), the sample windows and CUPTI's drops,
# with whatever cuscope printed on stderr (not quiet). A run whose intervals time launches but hold
# no kernels after the warm-up is the defect (seen about one tiny round in three on an H100).
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/duty_loss_probe.sh [--runs N] [--duty PERCENT | --budget PERCENT] [--interval S] [--kernels N]
#                                [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
runs=6 duty=8 budget="" interval=0.5 kernels=60000 out=duty-loss
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --duty) duty=$2; shift ;;
    --budget) budget=$2; shift ;;
    --interval) interval=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "duty_loss_probe.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
B=$PWD/${DUTY_BUILD:-build-device}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
for r in $(seq 1 "$runs"); do
  if [ -n "$budget" ]; then setting=(CUSCOPE_OVERHEAD_BUDGET="$budget"); name=budget$budget
  else setting=(CUSCOPE_DUTY_CYCLE="$duty"); name=duty$duty; fi
  trace=$out/tiny_${name}_$r
  echo "== run $r (${setting[*]}, interval $interval s)"
  env CUDA_INJECTION64_PATH="$B/lib/libcuscope.so" CUSCOPE_MODE=monitor CUSCOPE_FORCE_OVERWRITE=1 \
    CUSCOPE_OUTPUT="$trace" CUSCOPE_MONITOR_INTERVAL="$interval" "${setting[@]}" \
    python3 bench/gpu/torch_overhead.py --workload tiny --kernels "$kernels" --reps 3 > "$trace.log" 2> "$trace.err"
  echo "exit $? $(grep -o 'kernels_launched=[0-9]*' "$trace.log" | tail -1)"
  sed -n '1,12p' "$trace.err"
  "$B/bin/cuscope" export --format sqlite --no-findings -f -o "$trace.sqlite" "$trace.cuscope" > /dev/null 2>&1 || {
    echo "export failed"; continue; }
  python3 - "$trace.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT i.id, (i."end" - i.start) / 1e6, i.launchCalls, i.observed / 1e6, i.sampleWindows,
                            i.recordsDropped, i.lateRecords, i.estimated, coalesce(sum(d.kernels), 0),
                            coalesce(sum(d.busy), 0) / 1e6, coalesce(sum(d.observed), 0) / 1e6
                     FROM CUSCOPE_MONITOR_INTERVALS i LEFT JOIN CUSCOPE_MONITOR_DEVICES d ON d.intervalId = i.id
                     GROUP BY i.id ORDER BY i.id""").fetchall()
print("interval   ms  launchCalls  observed_ms  windows  dropped  late  estimated  kernels  busy_ms  dev_observed_ms")
for r in rows:
    print("%8d %5.0f %12s %12.2f %8s %8s %5s %10s %8s %8.2f %8.2f" % r)
empty = [r[0] for r in rows if (r[2] or 0) > 1000 and r[8] == 0]
print("intervals timing launches without kernels:", empty or "none")
PY
done
