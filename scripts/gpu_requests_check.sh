#!/usr/bin/env bash
# Requests on the GPU (docs/production.md, "Requests in a server"): what a scope costs its thread; the inference server
# with one route's requests queued behind another's long kernels (--interference) and without
# (the negative control), traced and analyzed; each request's GPU time against its span and the
# server's own latency, and the requests' GPU time against the kernels'; monitor mode's request
# histograms on /metrics and in `cuscope status`; and what monitor mode with requests costs the
# server (requests on against off, interleaved rounds, closed loop).
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   scripts/gpu_requests_check.sh [--rounds N] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rounds=5 out=${OUT:-/tmp}/requests
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "gpu_requests_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
B=${B:-$PWD/build-device}
S=$B/examples/example_inference_server
C=$B/bin/cuscope
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
mkdir -p "$out"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

echo "== what a scope costs its thread"
"$B/bench/request_scope_cost" 200000 7 || fail "request_scope_cost"

serve() {  # name, extra server flags...
  local name=$1; shift
  "$S" --workers 2 --duration 4 --warmup 1 --cuscope trace --output "$out/$name" --request-log "$out/$name.csv" \
    "$@" > "$out/$name.txt" 2> "$out/$name.err" || fail "$name: server exit $? ($(tail -2 "$out/$name.err"))"
  cat "$out/$name.txt"
  "$C" analyze "$out/$name.cuscope" > "$out/${name}_analyze.txt" 2>&1
  "$C" stats -r req_sum "$out/$name.cuscope"
  "$C" stats -r req_rows --format csv "$out/$name.cuscope" > "$out/${name}_rows.csv"
  "$C" stats -r req_sum --format csv "$out/$name.cuscope" > "$out/${name}_sum.csv"
  "$C" stats -r cuda_gpu_kern_sum --format csv "$out/$name.cuscope" > "$out/${name}_kern.csv"
  python3 - "$out/$name" <<'PY' || failures=$((failures + 1))
import csv, sys
base = sys.argv[1]
rows = list(csv.DictReader(open(base + "_rows.csv")))
log = {int(r["id"]): float(r["service_ms"]) for r in csv.DictReader(open(base + ".csv"))}
sums = list(csv.DictReader(open(base + "_sum.csv")))
kern = list(csv.DictReader(open(base + "_kern.csv")))
bad = [r for r in rows if float(r["GPU (ns)"]) > float(r["Span (ns)"])]
print(f"  {len(rows)} requests in the trace, {len(log)} in the server's log; GPU time > span: {len(bad)}")
joined = [(float(r["Span (ns)"]) / 1e6, log[int(r["Request"])]) for r in rows if int(r["Request"]) in log]
over = [(s, l) for s, l in joined if s > l + 0.05]
diffs = sorted(l - s for s, l in joined)
if diffs:
    print(f"  span vs the server's latency over {len(joined)} requests: server - cuscope median "
          f"{diffs[len(diffs)//2]*1000:.1f} us, max {diffs[-1]*1000:.1f} us; cuscope span above it by > 50 us: {len(over)}")
in_routes = sum(float(r["GPU Sum (ns)"] or 0) for r in sums if r["Route"] != "(outside requests)")
outside = sum(float(r["GPU Sum (ns)"] or 0) for r in sums if r["Route"] == "(outside requests)")
total = sum(float(r["Total Time (ns)"]) for r in kern)
err = abs(in_routes + outside - total) / total if total else 0
print(f"  kernel time {total/1e6:.3f} ms: requests {in_routes/1e6:.3f} ms + outside requests {outside/1e6:.3f} ms "
      f"(difference {100*err:.3f}%)")
ok = not bad and not over and err < 0.01 and len(joined) >= 0.99 * len(log)
print("  OK" if ok else "  FAIL")
sys.exit(0 if ok else 1)
PY
}

echo "== interference: chat requests behind bulk's long kernels"
serve interference --interference
grep -A4 "requests.queued\|requests.slow" "$out/interference_analyze.txt" | head -30
grep -q "requests.queued" "$out/interference_analyze.txt" && grep -q "bulk_spin_kernel" "$out/interference_analyze.txt" \
  || fail "interference: requests.queued naming bulk_spin_kernel not found"
echo "== the negative control: no interference"
serve control
grep "requests\." "$out/control_analyze.txt" && fail "control: a requests finding where none is expected"

echo "== monitor mode: /metrics and cuscope status"
port=19581
"$S" --workers 2 --duration 5 --warmup 1 --interference --cuscope monitor --prometheus "$port" --output "$out/monitor" \
  --linger 3 > "$out/monitor.txt" 2> "$out/monitor.err" &
pid=$!
sleep 5
curl -sf "http://127.0.0.1:$port/metrics" > "$out/metrics.txt" || fail "no /metrics"
grep -E '^cuscope_request_(gpu|queue)_seconds_(count|sum)' "$out/metrics.txt" | head -8
grep -c '^cuscope_request_idle_seconds_bucket' "$out/metrics.txt"
grep -q 'cuscope_request_queue_seconds_count{route="chat"' "$out/metrics.txt" || fail "no request histograms on /metrics"
"$C" status --pid "$pid" | tee "$out/status.txt" | sed -n '1,40p'
grep -q "requests by route" "$out/status.txt" || fail "status shows no requests"
wait "$pid" || fail "monitor server exit $?"

echo "== cost of monitor mode with requests on vs off ($rounds interleaved rounds, closed loop)"
: > "$out/cost.txt"
for r in $(seq 1 "$rounds"); do
  for v in off monitor:on monitor:off; do
    mode=${v%%:*} req=${v##*:}
    [ "$mode" = off ] && req=on
    line=$("$S" --workers 4 --duration 4 --warmup 1 --cuscope "$mode" --output "$out/cost_$r" --requests "$req" --json \
      2>/dev/null)
    rm -f "$out/cost_$r.cuscope"
    echo "$r $v $line" >> "$out/cost.txt"
  done
done
python3 - "$out/cost.txt" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    r, v, js = line.split(" ", 2)
    try:
        d = json.loads(js)
    except Exception:
        continue
    by.setdefault(v, []).append(d)
def med(v, key):
    xs = [d[key] for d in by.get(v, []) if key in d]
    return statistics.median(xs) if xs else float("nan"), (min(xs), max(xs)) if xs else (0, 0)
for v in ("off", "monitor:on", "monitor:off"):
    t, ts = med(v, "throughput_rps"); p, ps = med(v, "p99_ms")
    print(f"  {v:12s} throughput {t:8.1f} req/s (spread {ts[0]:.1f}-{ts[1]:.1f})  p99 {p:7.3f} ms (spread {ps[0]:.3f}-{ps[1]:.3f})  n={len(by.get(v, []))}")
PY
echo "requests check: $failures failure(s)"
exit $((failures > 0))
