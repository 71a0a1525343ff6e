#!/usr/bin/env bash
# What cuscope costs a serving C++ program: example_inference_server under a steady open-loop load
# (fixed rate, Poisson arrivals) and in a closed loop (its capacity), with cuscope off, in monitor
# mode, in monitor mode with its Prometheus endpoint scraped by curl every second, and tracing
# (lean, the default kinds). Rounds are interleaved, the variants of a round in a seeded random
# order. The measurements go to OUT/server.txt and bench/gpu/summarise_overhead.py prints
# throughput and p50/p99 latency: medians, spread, and ratios to "off".
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   bench/gpu/server_overhead.sh [--rounds N] [--quick] [--rate R] [--duration S] [--workers N]
#                                [--port P (the first Prometheus port)] [--seed S] [--out DIR]
# The default (5 rounds, 2 loads, 4 variants, 10 s + 2 s warm-up each) takes ~9 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=bench/gpu/interleaved_rounds.sh
. bench/gpu/interleaved_rounds.sh

rounds=5 rate=300 duration=10 warmup=2 workers=4 port=19464 seed=1 out=server-overhead
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --quick) rounds=3 ;;
    --rate) rate=$2; shift ;;
    --duration) duration=$2; shift ;;
    --workers) workers=$2; shift ;;
    --port) port=$2; shift ;;
    --seed) seed=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "server_overhead.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

B=${B:-$PWD/build-device}
server=$B/examples/example_inference_server
[ -x "$server" ] || { echo "server_overhead.sh: $server missing (scripts/build_for_device.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
mkdir -p "$out"
results=$out/server.txt
: > "$results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

variants=(off monitor monitor+prometheus trace)
# SERVER_VARIANTS="off,flight,flight+snapshots" chooses others: flight keeps the last seconds in
# memory, flight+snapshots also writes a snapshot every 2 s while serving; monitor+captures asks
# the running server for 1 s windows from outside (cuscope capture --pid), one after another.
if [ -n "${SERVER_VARIANTS:-}" ]; then IFS=, read -r -a variants <<< "$SERVER_VARIANTS"; fi
runs=()
for load in open closed; do for v in "${variants[@]}"; do runs+=("$load:$v"); done; done

# Each Prometheus run takes the next port: the last one's may still be held (TIME_WAIT).
prometheus_runs=0
# Scrapes the Prometheus endpoint on port $2 every second while process $1 runs; prints the
# successful scrapes.
scrape_while_running() {
  local pid=$1 port=$2 scrapes=0
  while kill -0 "$pid" 2>/dev/null; do
    curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/metrics" && scrapes=$((scrapes + 1))
    sleep 1
  done
  echo "$scrapes"
}

# Captures 1 s windows of process $1 from outside, one after another, once its warm-up is over;
# prints how many were written.
capture_while_running() {
  local pid=$1 captures=0 n=0
  sleep "$warmup"
  while kill -0 "$pid" 2>/dev/null; do
    n=$((n + 1))
    "$B/bin/cuscope" capture --pid "$pid" --duration 1 -o "$tmp/capture_$n" >/dev/null 2>&1 && captures=$((captures + 1))
  done
  echo "$captures"
}

# Runs the server once; appends its line to $results, or says why not.
run_one() {
  local load=$1 variant=$2 round=$3 log=$tmp/run.json scrapes="" run_port=$((port + prometheus_runs))
  local -a args=(--workers "$workers" --duration "$duration" --warmup "$warmup" --json)
  [ "$load" = open ] && args+=(--rate "$rate")
  case $variant in
    off) ;;
    monitor) args+=(--cuscope monitor --output "$tmp/monitor_%p") ;;
    monitor+prometheus) args+=(--cuscope monitor --output "$tmp/monitor_%p" --prometheus "127.0.0.1:$run_port")
      prometheus_runs=$((prometheus_runs + 1)) ;;
    trace) args+=(--cuscope trace --output "$tmp/trace_%p") ;;
    flight) args+=(--cuscope flight --output "$tmp/flight_%p") ;;
    flight+snapshots) args+=(--cuscope flight --output "$tmp/flight_%p" --snapshot-every 2) ;;
    monitor+captures) args+=(--cuscope monitor --output "$tmp/monitor_%p") ;;
    *) echo "server_overhead.sh: no variant $variant" >&2; exit 2 ;;
  esac
  "$server" "${args[@]}" > "$log" 2> "$tmp/run.err" &
  local pid=$!
  if [ "$variant" = monitor+prometheus ]; then
    scrape_while_running "$pid" "$run_port" > "$tmp/scrapes" &
  fi
  if [ "$variant" = monitor+captures ]; then
    capture_while_running "$pid" > "$tmp/captures" &
  fi
  wait "$pid"
  local rc=$?
  if [ "$variant" = monitor+prometheus ]; then
    wait
    scrapes=" scrapes=$(cat "$tmp/scrapes")"
  fi
  if [ "$variant" = monitor+captures ]; then
    wait
    scrapes=" captures=$(cat "$tmp/captures")"
  fi
  local snapshots
  snapshots=$(ls "$tmp"/flight_* 2>/dev/null | wc -l)
  rm -f "$tmp"/monitor_* "$tmp"/trace_* "$tmp"/flight_* "$tmp"/capture_*
  # {"requests":N,"throughput_rps":X,"p50_ms":X,"p99_ms":X,...} as key=value fields.
  local fields
  fields=$(grep -o '"[a-z0-9_]*":[0-9.]\+' "$log" | tr -d '"' | tr ':' '=' | tr '\n' ' ')
  if [ $rc -ne 0 ] || [ -z "$fields" ]; then
    report_failed_run "round $round $load $variant" "$rc" "$tmp/run.err" "$log"
    return
  fi
  local checksum line
  checksum=$(grep -o '"checksum":"[0-9a-f]*"' "$log" | cut -d'"' -f4)
  line="workload=$load variant=$variant round=$round ${fields}checksum=$checksum$scrapes"
  [ "$variant" = flight+snapshots ] && line="$line snapshot_files=$snapshots"
  record_run "$line"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
echo "== $rounds rounds x ${#runs[@]} runs: $workers workers, open loop at $rate req/s and closed loop, $warmup + $duration s each"
run_interleaved_rounds "$rounds" "$seed" run_one "${runs[@]}"
# The same results whoever watched: one checksum across every run.
checksums=$(grep -o 'checksum=[0-9a-f]*' "$results" | sort -u | wc -l)
[ "$checksums" -le 1 ] && echo "results: one checksum over all runs" || echo "results: $checksums DIFFERENT checksums"
python3 bench/gpu/summarise_overhead.py "$results" --metric throughput_rps --metric p50_ms --metric p99_ms \
  --baseline off --variants "$(IFS=,; echo "${variants[*]}")" | tee "$out/summary.txt"
