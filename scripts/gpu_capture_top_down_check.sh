#!/usr/bin/env bash
# `cuscope capture --top-down` on the GPU machine, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_capture_top_down_check.sh OUT_DIR
# An injected PyTorch program in monitor mode with GPU counters, and the inference server under
# load, each asked from outside for a window and the one-run top-down on its hottest kernels: the
# file must hold the window's kernels, the choice and every profiled launch's metrics; the GPU
# counters over time must sample again afterwards; the program must run on to its end.
# Prints each figure and "capture top-down check: N failed" at the end; files stay in OUT_DIR/capture_top_down.
# B=DIR: another build folder; CAPTURE_CHECK_PARTS=server: the server part only (~20 s, to compare
# builds).
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_capture_top_down_check.sh OUT_DIR}
mkdir -p "$OUT/capture_top_down"; OUT=$(cd "$OUT" && pwd)/capture_top_down
ROOT=$PWD
B=${B:-$ROOT/build-device}; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
failed=0
check() {  # check WHAT OK(0|1)
  if [ "$2" -eq 1 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=$((failed + 1)); fi
}
wait_listed() {  # PID SECONDS
  for _ in $(seq 1 $(($2 * 10))); do
    $cli ps | awk '{print $1}' | grep -qx "$1" && return 0
    sleep 0.1
  done
  echo "process $1 never appeared in cuscope ps"; return 1
}
count() { $cli dump "$1" | grep -c "^$2" ; }
cd "$OUT"

if [ "${CAPTURE_CHECK_PARTS:-all}" = server ]; then
  echo "== injected PyTorch: left out (CAPTURE_CHECK_PARTS=server)"
elif python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== injected PyTorch, monitor mode with GPU counters: capture --duration 1 --top-down"
  # No `timeout` wrapper: `cuscope ps` lists the Python process, whose pid $! must be.
  CUDA_INJECTION64_PATH=$B/lib/libcuscope.so CUSCOPE_MODE=monitor CUSCOPE_OUTPUT= CUSCOPE_GPU_METRICS_DEVICES=all \
    python3 "$ROOT/examples/torch_top_down.py" --steps 200000 > torch.txt 2>&1 &
  P=$!
  wait_listed $P 60
  sleep 3
  before=$($cli capture --pid $P --duration 1 -o torch_before 2>&1 | tail -1); echo "$before"
  start=$(date +%s.%N)
  $cli capture --pid $P --duration 1 --top-down -o torch_top_down 2>&1 | tee capture_line.txt
  echo "capture exit ${PIPESTATUS[0]}, $(python3 -c "print('%.1f' % ($(date +%s.%N) - $start))") s"
  after=$($cli capture --pid $P --duration 1 -o torch_after 2>&1 | tail -1); echo "$after"
  kill $P 2>/dev/null; wait $P 2>/dev/null
  grep 'cuscope:' torch.txt | head -8
  $cli analyze torch_top_down.cuscope 2>&1 | grep -A12 -m1 "^Top-down" | cut -c1-180
  kernels=$(count torch_top_down.cuscope kernel); metrics=$(count torch_top_down.cuscope metrics)
  hot=$(count torch_top_down.cuscope hot)
  c_before=$(count torch_before.cuscope counter); c_td=$(count torch_top_down.cuscope counter)
  c_after=$(count torch_after.cuscope counter)
  echo "top-down file: $kernels kernels, $hot hot-kernel lines, $metrics metric rows; counter rows before $c_before, in the top-down window $c_td, after $c_after"
  check "the window's kernels are in the file" $(( kernels > 1000 ))
  check "three hot kernels were chosen" $(( hot == 3 ))
  check "each hot kernel's launches were profiled (3 x 3)" $(( metrics == 9 ))
  check "the GPU counters sampled before and in the window" $(( c_before > 0 && c_td > 0 ))
  check "the GPU counters sample again after the top-down" $(( c_after > 0 ))
else
  echo "no PyTorch with CUDA here: skipped"
fi

echo "== inference server under load, monitor mode: capture --duration 2 --top-down=2"
$B/examples/example_inference_server --workers 4 --rate 300 --warmup 0 --duration 14 --cuscope monitor \
  > server.txt 2>&1 &
S=$!
wait_listed $S 30
sleep 3
$cli capture --pid $S --duration 2 --top-down=2 -o srv_top_down 2>&1 | tee srv_line.txt; echo "capture exit ${PIPESTATUS[0]}"
wait $S; server_rc=$?
tail -3 server.txt
$cli analyze srv_top_down.cuscope 2>&1 | grep -A10 -m1 "^Top-down" | cut -c1-180
metrics=$(count srv_top_down.cuscope metrics); hot=$(count srv_top_down.cuscope hot)
echo "server top-down: $hot hot-kernel lines, $metrics metric rows, server exit $server_rc"
check "the server's two hot kernels were chosen and profiled" $(( hot == 2 && metrics == 6 ))
check "the server ran to its end" $(( server_rc == 0 ))
echo "capture top-down check: $failed failed"
