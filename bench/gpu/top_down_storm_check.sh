#!/usr/bin/env bash
# Monitor mode's figures through a capture's top-down under a launch storm: a PyTorch loop of tiny
# kernels (bench/gpu/torch_overhead.py, ~14 s), injected in monitor mode, is asked from outside for
# `cuscope capture --duration 1 --top-down=2` after 5 s, while it launches ~140,000 kernels a second.
# Per run: the capture's line, and from the monitor's trace, interval by interval, the kernels
# counted, the records dropped (by CUPTI, at the buffer cap included) and the late ones; then the
# kernels counted over the run against those the program launched. Nothing may be dropped and the
# two counts must agree (the monitor records everything by default; under a duty cycle the count
# is an estimate with its bound).
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/top_down_storm_check.sh [--runs N] [--kernels N] [--reps R] [--out DIR]
# Extra settings for the monitored program pass through the environment (CUSCOPE_OVERHEAD_BUDGET).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
runs=2 kernels=400000 reps=5 out=top-down-storm
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --reps) reps=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "top_down_storm_check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
B=$PWD/${DUTY_BUILD:-build-device}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
cli=$B/bin/cuscope
failed=0
for r in $(seq 1 "$runs"); do
  trace=$out/storm_$r
  echo "== run $r"
  CUDA_INJECTION64_PATH="$B/lib/libcuscope.so" CUSCOPE_MODE=monitor CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$trace" \
    python3 bench/gpu/torch_overhead.py --workload tiny --kernels "$kernels" --reps "$reps" > "$trace.log" 2> "$trace.err" &
  pid=$!
  sleep 5
  (cd "$out" && "$cli" capture --pid "$pid" --duration 1 --top-down=2 -f -o "capture_$r" 2>&1 | tail -2)
  wait "$pid"; rc=$?
  launched=$(grep -o 'kernels_launched=[0-9]*' "$trace.log" | tail -1 | cut -d= -f2)
  echo "program exit $rc, kernels launched ${launched:-?}"
  sed -n '1,8p' "$trace.err"
  "$cli" analyze "$out/capture_$r.cuscope" 2>&1 | grep -m3 -i "top-down\|hot kernel" || echo "(no top-down in the capture)"
  "$cli" export --format sqlite --no-findings -f -o "$trace.sqlite" "$trace.cuscope" > /dev/null 2>&1 || {
    echo "FAIL run $r: the monitor trace did not export"; failed=$((failed + 1)); continue; }
  python3 - "$trace.sqlite" "${launched:-0}" <<'PY' || failed=$((failed + 1))
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
launched = int(sys.argv[2])
rows = db.execute("""SELECT i.id, i.recordsDropped, i.lateRecords, i.estimated, coalesce(sum(d.kernels), 0)
                     FROM CUSCOPE_MONITOR_INTERVALS i LEFT JOIN CUSCOPE_MONITOR_DEVICES d ON d.intervalId = i.id
                     GROUP BY i.id ORDER BY i.id""").fetchall()
print("interval  dropped  late  estimated  kernels")
for r in rows:
    print("%8d %8s %5s %10s %8s" % r)
dropped = sum(r[1] or 0 for r in rows)
counted = sum(r[4] for r in rows)
# The 200 warm-up kernels run before the session's first interval can start counting: allowed.
ok = dropped == 0 and abs(counted - launched) <= 200
print("%s: %d kernels counted of %d launched (%+d), %d records dropped"
      % ("PASS" if ok else "FAIL", counted, launched, counted - launched, dropped))
sys.exit(0 if ok else 1)
PY
done
echo "top-down storm check: $failed failed"
