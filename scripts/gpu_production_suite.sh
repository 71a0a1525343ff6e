#!/usr/bin/env bash
# The always-on checks on the GPU machine, in one command, from the repository root, after
# scripts/build_for_device.sh:
#   scripts/gpu_production_suite.sh [OUT_DIR] [checks|server|matrix|all]  (default all)
# 1. the gpu-labelled collector tests; 2. lean collection against every call on each example and
# its fixed twin (scripts/lean_check.sh); 3. monitor mode on two examples, with GPU counters, read
# back by `cuscope analyze`; 4. the inference server in monitor mode with a trace window over the
# whole run, its Prometheus endpoint read with curl after the run and checked against the trace
# (scripts/prometheus_vs_trace.py); 5. what cuscope costs the server (bench/gpu/server_overhead.sh)
# and a PyTorch loop (bench/gpu/torch_step_overhead.sh); 6. the per-kernel cost matrix on PyTorch
# and a raw launch loop (bench/gpu/overhead_matrix.sh). The checks begin with short programs exiting
# with the GPU counters on (scripts/gpu_exit_check.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results/production}
part=${2:-all}
mkdir -p "$out"
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
cli="$B/bin/cuscope"
tmp=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

if [ "$part" = checks ] || [ "$part" = all ]; then
echo "== gpu-labelled collector tests"
"$B/bin/collector_gpu_test" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Which is" | tail -40
"$B/bin/session_options_test" 2>&1 | grep -E "^\[ +(FAILED|PASSED) +\]|Failure" | tail -5

echo "== short programs exit cleanly with GPU counters on"
bash scripts/gpu_exit_check.sh "$out/exit" 3 2>&1 | grep -v "^scripts/gpu_exit_check.sh: line"

echo "== lean collection against every call"
bash scripts/lean_check.sh "$out/lean"

echo "== monitor mode on examples"
for ex in sync_every_step launch_overhead; do
  "$cli" profile -q -f --mode monitor --monitor-interval 0.2 --gpu-metrics-devices all -o "$out/monitor_$ex" \
    -- "$B/examples/example_$ex" | tail -1
  "$cli" analyze "$out/monitor_$ex.cuscope" 2>&1 | head -12
  "$cli" stats --report monitor_sum,monitor_kern_sum "$out/monitor_$ex.cuscope" 2>&1 | head -12
  ls -l "$out/monitor_$ex.cuscope" | awk '{print "monitor trace bytes:", $5}'
done

echo "== Prometheus: the server's endpoint against a trace of the same run"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$B/examples/example_inference_server" --workers 4 --rate 300 --warmup 1 --duration 6 --linger 4 \
  --cuscope monitor --prometheus "127.0.0.1:$port" --trace-everything --output "$out/server_monitor" \
  > "$out/server_monitor.txt" 2> "$out/server_monitor.err" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  curl -sf --max-time 1 "http://127.0.0.1:$port/metrics" > "$tmp/scrape" && mv "$tmp/scrape" "$out/server_metrics.txt"
  sleep 0.5
done
wait "$pid"; echo "server exit $?"
cat "$out/server_monitor.txt" "$out/server_monitor.err"
grep -E "^cuscope_(gpu_busy_seconds_total|kernels_total|gpu_idle_seconds_total|monitor_intervals_total|launch_calls_total|sync_wait)" \
  "$out/server_metrics.txt" | head -16
python3 scripts/prometheus_vs_trace.py "$out/server_metrics.txt" "$out/server_monitor.cuscope" "$cli"
"$cli" analyze "$out/server_monitor.cuscope" 2>&1 | head -14

fi

if [ "$part" = server ] || [ "$part" = all ]; then
  echo "== what cuscope costs the server"
  bash bench/gpu/server_overhead.sh --rounds "${SERVER_ROUNDS:-7}" --duration "${SERVER_DURATION:-4}" \
    --out "$out/server"
  echo "== what cuscope costs a PyTorch training-like loop"
  bash bench/gpu/torch_step_overhead.sh --rounds "${STEP_ROUNDS:-7}" --out "$out/steps"
fi

if [ "$part" = matrix ] || [ "$part" = all ]; then
  echo "== cost per kernel: PyTorch and a raw launch loop"
  bash bench/gpu/overhead_matrix.sh --rounds "${MATRIX_ROUNDS:-7}" --out "$out/matrix"
fi
rm -rf "$tmp"
