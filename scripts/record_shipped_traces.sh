#!/usr/bin/env bash
# Records the traces that ship in traces/<gpu>/ (h100 or h200) with today's defaults, on the GPU machine, from the
# repository root (needs build-device/ from scripts/build_for_device.sh and PyTorch):
#   scripts/record_shipped_traces.sh OUT_DIR
# Each symptom example and its fixed twin (the README's and docs/examples' programs), PyTorch with
# launch stacks down to Python lines and a replayed CUDA graph inside NVTX steps, a monitor-mode run
# (monitor intervals), a kernel-metrics run with the roofline set, a one-run top-down, and a flight
# recorder snapshot. OUT_DIR/<gpu>/ then holds the traces, OUT_DIR/<gpu>/*.txt each one's analysis.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/record_shipped_traces.sh OUT_DIR}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o -i -E 'h100|h200|a100|l40s|b200' | head -1 |
      tr 'A-Z' 'a-z')
mkdir -p "$OUT/${gpu:-gpu}"; OUT=$(cd "$OUT" && pwd)
T=$OUT/${gpu:-gpu}
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
cli=$B/bin/cuscope
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$cli" version 2>/dev/null || "$cli" --version

record() {  # record NAME [profile options...] -- program...
  local name=$1; shift
  echo "== $name: cuscope profile $*"
  "$cli" profile -q -f -o "$T/$name" "$@" > "$T/$name.out" 2>&1
  echo "exit $?; $(tail -1 "$T/$name.out")"
}

for ex in launch_overhead sync_every_step pageable_copies legacy_default_stream event_wait_stall; do
  record "$ex" -- "$B/examples/example_$ex"
  if [ "$ex" = launch_overhead ]; then
    record "${ex}_fixed_fused" -- "$B/examples/example_$ex" --fixed=fused
    record "${ex}_fixed_graph" -- "$B/examples/example_$ex" --fixed=graph
  else
    record "${ex}_fixed" -- "$B/examples/example_$ex" --fixed
  fi
done
record known_work -- "$B/examples/example_known_work"
record torch_item_sync -- python3 examples/torch_item_sync.py
record torch_item_sync_fixed -- python3 examples/torch_item_sync.py --fixed
# Launch stacks, native and Python, for kernels launched directly and from a replayed CUDA graph
# whose capture sits inside NVTX "step" ranges.
record torch_launch_sites_stacks --stacks first:20 -- python3 examples/torch_launch_sites.py --steps 200
record torch_graph_steps_stacks --stacks first:20 -- python3 examples/torch_launch_sites.py --steps 200 --graph
# Monitor mode: intervals instead of every record.
CUSCOPE_MONITOR_INTERVAL=0.5 record torch_monitor --mode monitor -- python3 examples/torch_item_sync.py --steps 6000
# Kernel metrics with the roofline set, and the one-run top-down.
record torch_gemm_roofline --metrics roofline -- python3 examples/torch_gemm.py --iterations 3
record torch_top_down --top-down --duration 2 -- python3 examples/torch_top_down.py --steps 12000
# A flight recorder snapshot, taken through the C API at the end of an injected PyTorch loop.
cat > "$T/flight_snapshot.py" <<'PY'
import ctypes, os, torch
x = torch.randn(1 << 20, device="cuda")
for i in range(3000):
    with torch.cuda.nvtx.range("step"):
        x = x * 1.0001 + 0.0001
torch.cuda.synchronize()
snapshot = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).cuscope_snapshot
snapshot.argtypes = [ctypes.c_char_p, ctypes.c_double]
print("snapshot rc", snapshot(os.environ["SNAPSHOT"].encode(), 0.0))
PY
echo "== flight_snapshot"
SNAPSHOT=$T/torch_flight_snapshot.cuscope CUDA_INJECTION64_PATH=$B/lib/libcuscope.so CUSCOPE_MODE=flight \
  CUSCOPE_FLIGHT_SPAN=5 python3 "$T/flight_snapshot.py" 2>&1 | tail -2
rm -f "$T/flight_snapshot.py"

for t in "$T"/*.cuscope; do
  "$cli" analyze "$t" > "${t%.cuscope}.txt" 2>&1
  printf '%-40s %8s bytes  %s\n' "$(basename "$t")" "$(stat -c %s "$t")" "$(grep -m1 -E '^ *1\.|Nothing wrong' "${t%.cuscope}.txt")"
done
