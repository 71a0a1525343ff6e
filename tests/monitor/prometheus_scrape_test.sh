#!/usr/bin/env bash
# A real Prometheus server (Debian's `prometheus`) scrapes the metrics endpoint, fed fabricated
# figures by fake_monitor_source, every 500 ms; PromQL through its HTTP API checks what it stored:
# the scrape works (up == 1), totals are exact, the rate is what the source published.
#   prometheus_scrape_test.sh PATH/TO/fake_monitor_source
# Exit 77 (skipped) without a prometheus binary, except under CI=true, where that is a failure.
set -euo pipefail
source_bin=$1
intervals=40 period_ms=100  # fake_monitor_source: 0.25 s busy per interval, 10 intervals a second

if ! command -v prometheus >/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "prometheus_scrape_test: no prometheus binary; scripts/install_deps.sh installs Debian's prometheus" >&2
    exit 1
  fi
  echo "prometheus_scrape_test: no prometheus binary: skipped"
  exit 77
fi

work=$(mktemp -d)
source_pid="" prom_pid=""
cleanup() {
  [ -z "$source_pid" ] || kill "$source_pid" 2>/dev/null || true
  [ -z "$prom_pid" ] || kill "$prom_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "prometheus_scrape_test: $*" >&2
  echo "--- prometheus log:" >&2
  tail -20 "$work/prometheus.log" >&2 || true
  exit 1
}

"$source_bin" "$intervals" "$period_ms" >"$work/source.out" &
source_pid=$!
for _ in $(seq 50); do
  grep -q '^port=' "$work/source.out" && break
  sleep 0.1
done
source_port=$(sed -n 's/^port=//p' "$work/source.out")
[ -n "$source_port" ] || fail "fake_monitor_source printed no port"

prom_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<YAML
global: {scrape_interval: 500ms, scrape_timeout: 500ms}
scrape_configs:
  - job_name: cuscope
    static_configs: [{targets: ["127.0.0.1:$source_port"]}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!

# An instant query's value (the first series), or nothing.
query() {
  python3 - "$prom_port" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
try:
    result = json.load(urllib.request.urlopen(url, timeout=2))["data"]["result"]
except Exception:
    result = []
print(result[0]["value"][1] if result else "")
PY
}
# Polls a query until its value satisfies a Python condition on v, for up to $2 seconds.
wait_for() {  # promql seconds condition
  local value=""
  for _ in $(seq $(($2 * 5))); do
    value=$(query "$1")
    if [ -n "$value" ] && python3 -c "import sys; v = float(sys.argv[1]); sys.exit(0 if ($3) else 1)" "$value"; then
      echo "ok: $1 = $value"
      return 0
    fi
    sleep 0.2
  done
  fail "$1 = '${value}', wanted $3"
}

ready=""
for _ in $(seq 100); do
  if python3 -c "import sys, urllib.request; urllib.request.urlopen('http://127.0.0.1:$prom_port/-/ready', timeout=1)" 2>/dev/null; then
    ready=yes
    break
  fi
  kill -0 "$prom_pid" 2>/dev/null || fail "prometheus exited"
  sleep 0.2
done
[ -n "$ready" ] || fail "prometheus not ready after 20 s"

wait_for 'up{job="cuscope"}' 10 'v == 1'
kill -USR1 "$source_pid"  # start publishing
wait_for 'cuscope_monitor_intervals_total' 15 "v == $intervals"
wait_for 'cuscope_gpu_busy_seconds_total{device="0"}' 2 "abs(v - $intervals * 0.25) < 1e-9"
wait_for 'cuscope_kernel_gpu_seconds_total{device="0",kernel="ns::gemm",grid="128x1x1",block="256x1x1"}' 2 \
  "abs(v - $intervals * 0.2) < 1e-9"
wait_for 'sum(cuscope_copy_bytes_total{kind="htod"})' 2 "v == $intervals * 1048576"
wait_for 'cuscope_gpu_idle_seconds_total{device="0",cause="sync"}' 2 "abs(v - $intervals * 0.75) < 1e-9"
wait_for 'cuscope_gpu_power_watts{device="0"}' 2 'v == 300'
# Busy time grew by 0.25 s every 100 ms while publishing: 2.5 busy seconds a second.
wait_for 'max_over_time(rate(cuscope_gpu_busy_seconds_total{device="0"}[2s])[20s:250ms])' 2 '1.25 <= v <= 5'
echo "prometheus_scrape_test: passed"
