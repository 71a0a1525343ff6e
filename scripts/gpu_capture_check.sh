#!/usr/bin/env bash
# Capture from outside on the GPU machine, in one command, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_capture_check.sh OUT_DIR [ROUNDS]
# The inference server under load in monitor mode (cuscope ps, status, a 3 s capture whose kernel
# rate is checked against the status figures) and in flight mode (a snapshot and a window), an
# injected PyTorch loop captured while it runs, then what back-to-back captures cost the server's
# throughput and latency (bench/gpu/server_overhead.sh, ROUNDS interleaved rounds, default 3).
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_capture_check.sh OUT_DIR [ROUNDS]}
ROUNDS=${2:-3}
mkdir -p "$OUT/capture"; OUT=$(cd "$OUT" && pwd)
ROOT=$PWD
B=$ROOT/build-device; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
cd "$OUT/capture"

# Waits (up to $2 s) until process $1 is listed by cuscope ps.
wait_listed() {
  for _ in $(seq 1 $(($2 * 10))); do
    $cli ps | awk '{print $1}' | grep -qx "$1" && return 0
    sleep 0.1
  done
  echo "process $1 never appeared in cuscope ps"; return 1
}

echo "== server in monitor mode under load, asked from outside"
$B/examples/example_inference_server --workers 4 --rate 300 --warmup 0 --duration 12 --cuscope monitor \
  > server_monitor.txt 2>&1 &
S=$!
wait_listed $S 30
sleep 3
$cli ps
$cli status --pid $S --format json > status_before.json
$cli capture --pid $S --duration 3 -o srv_window | tee capture_line.txt; echo "capture exit ${PIPESTATUS[0]}"
$cli status --pid $S --format json > status_after.json
$cli status --pid $S
wait $S; tail -3 server_monitor.txt
$cli analyze srv_window.cuscope 2>&1 | head -14
# The window's kernels per second against the status figures' (intervals of 1 s closed between the
# two status calls): the same traffic, seen two ways.
python3 - <<'PY'
import json, re
b, a = json.load(open("status_before.json")), json.load(open("status_after.json"))
kernels = lambda s: sum(int(d.get("kernels", 0)) for d in s.get("devices", []))
intervals = int(a["intervals"]) - int(b["intervals"])
status_rate = (kernels(a) - kernels(b)) / max(intervals, 1)
n = int(re.search(r": (\d+) kernels", open("capture_line.txt").read()).group(1))
trace_rate = n / 3.0
print("kernels/s: status %.0f over %d intervals, capture window %.0f (%d kernels in 3 s): ratio %.3f %s" %
      (status_rate, intervals, trace_rate, n, trace_rate / status_rate,
       "OK" if abs(trace_rate / status_rate - 1) < 0.1 else "MISMATCH"))
PY

echo "== server in flight mode: a snapshot of the ring, then a window"
$B/examples/example_inference_server --workers 4 --rate 300 --warmup 0 --duration 10 --cuscope flight --output srvf \
  > server_flight.txt 2>&1 &
S=$!
wait_listed $S 30
sleep 3
$cli capture --pid $S --snapshot -o srv_ring; echo "capture exit $?"
$cli capture --pid $S --duration 2 -o srv_next; echo "capture exit $?"
$cli capture --pid $S --duration 40 -o srv_too_long; echo "capture exit $? (refused: longer than the span)"
wait $S; tail -3 server_flight.txt
$cli stats --report cuda_gpu_kern_sum srv_ring.cuscope 2>&1 | head -5

echo "== injected PyTorch in monitor mode, captured while it runs"
cat > loop.py <<'PY'
import time, torch
x = torch.randn(1 << 20, device="cuda")
w = torch.randn(1024, 1024, device="cuda")
end = time.time() + 14
while time.time() < end:
    for _ in range(50):
        x = x * 1.0001 + 0.0001
        y = w @ w
    torch.cuda.synchronize()
print("loop done", float(x[0]))
PY
CUDA_INJECTION64_PATH=$B/lib/libcuscope.so CUSCOPE_MODE=monitor CUSCOPE_OUTPUT= python3 loop.py > torch.txt 2>&1 &
P=$!
wait_listed $P 60
$cli status --pid $P | head -4
$cli capture --pid $P --duration 2 -o torch_window; echo "capture exit $?"
wait $P; cat torch.txt | tail -3
$cli analyze torch_window.cuscope 2>&1 | head -14
$cli ps

echo "== flight triggers in an injected PyTorch loop: a slow NVTX step, then an idle GPU"
cat > steps.py <<'PY'
import time, torch
x = torch.randn(1 << 22, device="cuda")
for i in range(80):
    torch.cuda.nvtx.range_push("train_step")
    for _ in range(200):
        x = x * 1.0001 + 0.0001
    if i == 40:
        time.sleep(0.4)  # one slow step
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
time.sleep(6)  # the GPU idles
print("steps done", float(x[0]))
PY
CUDA_INJECTION64_PATH=$B/lib/libcuscope.so CUSCOPE_MODE=flight CUSCOPE_OUTPUT=steps CUSCOPE_FLIGHT_STEP_THRESHOLD=0.25 \
  CUSCOPE_FLIGHT_STEP_RANGE=train_step CUSCOPE_FLIGHT_IDLE_SHARE=95 CUSCOPE_FLIGHT_IDLE_SECONDS=3 python3 steps.py 2>&1 | tail -5
ls -l steps_snapshot*.cuscope
for f in steps_snapshot*.cuscope; do $cli stats --report nvtx_sum "$f" 2>&1 | head -6; done

echo "== what back-to-back captures cost the server"
cd "$ROOT"
SERVER_VARIANTS=off,monitor,monitor+captures timeout 300 bash bench/gpu/server_overhead.sh --rounds "$ROUNDS" \
  --duration 4 --out "$OUT/capture_cost" 2>&1 | tail -22
