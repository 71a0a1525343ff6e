#!/usr/bin/env bash
# The whole GPU suite in one command, on the GPU machine, from the repository root:
#   scripts/gpu_suite.sh [OUT_DIR]
# Needs build-device/ from scripts/build_for_device.sh. Runs the gpu-labelled tests, then the
# overhead measurements, and writes logs and a summary under OUT_DIR (default ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results}
mkdir -p "$out"
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
export CUSCOPE_LIBRARY="$B/lib/libcuscope.so"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"

echo "== gpu-labelled tests"
(cd "$B" && ctest -L gpu --output-on-failure --timeout 300) 2>&1 | tee "$out/gpu_tests.log" | tail -25

echo "== launch overhead: plain / bare CUPTI / cuscope, 100000 launches, 5 reps each, 3 rounds"
for round in 1 2 3; do
  "$B/bench/launch_overhead_bench" --mode plain | tail -1
  "$B/bench/launch_overhead_bench" --mode bare-cupti | tail -1
  CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT=/tmp/overhead_cuscope CUDA_INJECTION64_PATH="$CUSCOPE_LIBRARY" \
    "$B/bench/launch_overhead_bench" --mode plain | tail -1 | sed 's/mode=plain/mode=cuscope/'
done 2>&1 | tee "$out/launch_overhead.log"

echo "== PyTorch 20000 tiny kernels: plain / torch.profiler / cuscope"
for round in 1 2; do
  python3 bench/gpu/torch_overhead.py --mode plain | tail -1
  python3 bench/gpu/torch_overhead.py --mode torch-profiler 2>/dev/null | tail -1
  CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT=/tmp/torch_cuscope CUDA_INJECTION64_PATH="$CUSCOPE_LIBRARY" \
    python3 bench/gpu/torch_overhead.py --mode plain | tail -1 | sed 's/mode=plain/mode=cuscope/'
done 2>&1 | tee "$out/torch_overhead.log"

echo "== long run: 5,000,000 launches under cuscope (cap 128 MiB)"
/usr/bin/env time -v true >/dev/null 2>&1 && TIMEV="/usr/bin/env time -v" || TIMEV=""
CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT=/tmp/long_run CUDA_INJECTION64_PATH="$CUSCOPE_LIBRARY" \
  $TIMEV "$B/bench/launch_overhead_bench" --mode plain --launches 1000000 --reps 5 2>&1 | tail -30 | tee "$out/long_run.log"
"$B/bin/cuscope" dump --limit 0 /tmp/long_run.cuscope >/dev/null
ls -l /tmp/long_run.cuscope | tee -a "$out/long_run.log"
