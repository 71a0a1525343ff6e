#!/usr/bin/env bash
# Windows that open while the program runs, on the GPU machine, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_window_check.sh OUT_DIR
# Lean collection (the default) in a --delay window must record the launch calls of the window's
# kernels, and a one-run top-down after a delay must find its window's kernels on the timeline.
# Prints each figure and "window check: N failed" at the end; the traces stay in OUT_DIR/window.
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_window_check.sh OUT_DIR}
mkdir -p "$OUT/window"; OUT=$(cd "$OUT" && pwd)/window
B=$PWD/build-device; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
failed=0
check() {  # check WHAT OK(0|1)
  if [ "$2" -eq 1 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=$((failed + 1)); fi
}
# Column 3 of cuda_api_sum's / cuda_gpu_kern_sum's rows: instances.
instances() { awk -v name="$2" '$NF == name {gsub(",", "", $3); print $3}' <<<"$1" | head -1; }

echo "== launch_overhead, lean, --delay 0.3 --duration 0.3"
$cli profile -q -f --delay 0.3 --duration 0.3 -o "$OUT/delayed_lean" -- "$B/examples/example_launch_overhead" --steps 200000 >/dev/null
api=$($cli stats --report cuda_api_sum "$OUT/delayed_lean.cuscope")
kern=$($cli stats --report cuda_gpu_kern_sum "$OUT/delayed_lean.cuscope")
echo "$api" | head -6
launches=$(instances "$api" cudaLaunchKernel); kernels=$(awk 'NR > 3 && $3 ~ /^[0-9,]+$/ {gsub(",", "", $3); n += $3} END {print n + 0}' <<<"$kern")
echo "launch calls ${launches:-0}, kernels $kernels"
check "the delayed window records its launch calls" $(( ${launches:-0} > 1000 ))
check "launch calls and kernels agree within 1%" $(( ${launches:-0} * 100 >= kernels * 99 && kernels * 100 >= ${launches:-0} * 99 ))

echo "== PyTorch, --top-down --delay 2 --duration 0.5"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  timeout 90 $cli profile -q -f --top-down --delay 2 --duration 0.5 -o "$OUT/torch_top_down_delayed" -- \
    python3 examples/torch_top_down.py --steps 3000 | tail -2
  analysis=$($cli analyze "$OUT/torch_top_down_delayed.cuscope" 2>&1)
  echo "$analysis" | head -12
  echo "$analysis" | grep -A12 -m1 "^Top-down" || true
  api=$($cli stats --report cuda_api_sum "$OUT/torch_top_down_delayed.cuscope")
  echo "$api" | head -6
  timeline=$($cli stats --report cuda_gpu_kern_sum "$OUT/torch_top_down_delayed.cuscope" |
             awk 'NR > 3 && $3 ~ /^[0-9,]+$/ {gsub(",", "", $3); n += $3} END {print n + 0}')
  echo "kernels on the timeline: $timeline"
  check "the top-down's window kernels are on the timeline" $(( timeline > 100 ))
  check "the top-down's window records launch calls" $(( $(instances "$api" cudaLaunchKernel | sed 's/^$/0/') > 100 ))
else
  echo "no PyTorch with CUDA here: skipped"
fi
echo "window check: $failed failed"
