#!/usr/bin/env bash
# The flight recorder on the GPU machine, in one command, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_flight_check.sh OUT_DIR
# The inference server in flight mode with a snapshot every second (each read back by analyze and
# stats), an injected PyTorch loop snapshotted through the C API, the gpu-labelled collector tests,
# and what snapshots cost the server's throughput and latency (bench/gpu/server_overhead.sh).
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_flight_check.sh OUT_DIR}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
B=$PWD/build-device; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
mkdir -p $OUT/flight
echo "== server in flight mode, a snapshot a second"
(cd $OUT/flight && $B/examples/example_inference_server --workers 4 --rate 300 --warmup 1 --duration 4 --cuscope flight --output srv --snapshot-every 1 2>&1 | tail -4)
ls -l $OUT/flight | head
f=$(ls $OUT/flight/srv_snapshot*.cuscope | tail -1)
$cli analyze "$f" 2>&1 | head -16
$cli stats --report cuda_gpu_kern_sum "$f" 2>&1 | head -6
echo "== injected PyTorch in flight mode, snapshot at the end through the C API"
cat > /tmp/snap.py <<'PY'
import ctypes, torch
x = torch.randn(1 << 20, device="cuda")
for i in range(3000):
    x = x * 1.0001 + 0.0001
torch.cuda.synchronize()
lib = ctypes.CDLL(None)
try:
    f = lib.cuscope_snapshot
except AttributeError:
    import os
    f = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).cuscope_snapshot
f.argtypes = [ctypes.c_char_p, ctypes.c_double]
print("snapshot rc", f(b"/tmp/torch_snap.cuscope", 0.0))
PY
CUDA_INJECTION64_PATH=$B/lib/libcuscope.so CUSCOPE_MODE=flight CUSCOPE_FLIGHT_SPAN=5 python3 /tmp/snap.py 2>&1 | tail -3
$cli stats --report cuda_gpu_kern_sum /tmp/torch_snap.cuscope 2>&1 | head -5
echo "== gpu tests"
timeout 200 $B/bin/collector_gpu_test 2>&1 | grep -E "^\[ +(FAILED|PASSED) +\]|Failure|Expected|Which is" | tail -12
echo "== what snapshots cost the server"
SERVER_VARIANTS=off,flight,flight+snapshots timeout 250 bash bench/gpu/server_overhead.sh --rounds 3 --duration 4 --out $OUT/server 2>&1 | tail -22
