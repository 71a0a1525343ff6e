#!/usr/bin/env bash
# Many ranks on the GPU machine, in one command from the repository root:
#   scripts/gpu_ranks_check.sh [OUT_DIR]
# Needs build-device/ (scripts/build_for_device.sh). On one GPU: torchrun with the gloo backend, 2
# and 4 ranks, NVTX steps, one rank delayed by a known amount of GPU work per step (and a balanced
# run, the negative control): one trace per rank, analyzed together; NCCL on a one-rank
# communicator: what it launches and marks; monitor mode under torchrun: each rank's endpoint
# scraped for its rank label. Writes the analyses and traces under OUT_DIR (default gpu-ranks).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-ranks}
mkdir -p "$out"
B=$PWD/build-device
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared machines
cli="$B/bin/cuscope"
tmp=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'NCCL', torch.cuda.nccl.version())"

# A torchrun job under cuscope: one trace per rank, rank_<N>.cuscope in $dir.
torchrun_job() {
  local dir=$1 ranks=$2; shift 2
  mkdir -p "$dir"
  (cd "$dir" && "$cli" profile -f -o rank_%r -- python3 -m torch.distributed.run --standalone \
      --nproc_per_node="$ranks" "$OLDPWD/examples/torch_ranks.py" "$@" 2>&1 | grep -E "^rank|Error|error|cuscope:" | head -12)
  ls "$dir"/rank_*.cuscope
}

for case in "2 20 1" "4 20 3" "2 0 1"; do
  set -- $case
  ranks=$1 delay=$2 late=$3
  name="gloo_${ranks}ranks_delay${delay}"
  echo "== $name: torchrun --nproc_per_node=$ranks, gloo, rank $late delayed by ${delay} ms of GPU work per step"
  torchrun_job "$tmp/$name" "$ranks" --backend gloo --steps 30 --delay-ms "$delay" --delay-rank "$late"
  "$cli" analyze "$tmp/$name"/rank_*.cuscope > "$out/$name.txt" 2>&1
  grep -E "rank traces|warning|ranks\.|numbers:" "$out/$name.txt" | head -14
  # The delay as the trace measured it: the spin kernel's median on the late rank.
  "$cli" stats --report cuda_gpu_kern_sum --format csv "$tmp/$name/rank_$late.cuscope" 2>/dev/null | grep -i spin | head -2
  "$cli" analyze --format json "$tmp/$name"/rank_*.cuscope > "$out/$name.json" 2>/dev/null
done

echo "== NCCL on a one-rank communicator: kernels, NVTX ranges and payloads"
(cd "$tmp" && NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL "$cli" profile -q -f -o one_rank -- \
    python3 "$OLDPWD/examples/torch_nccl_one_rank.py" > "$out/nccl_one_rank.log" 2>&1)
grep -E "^NCCL [0-9]|NCCL INFO (AllReduce|AllGather|ReduceScatter|Broadcast):" "$out/nccl_one_rank.log" | head -6
"$cli" stats --report nccl_sum "$tmp/one_rank.cuscope"
"$cli" stats --report nvtx_sum "$tmp/one_rank.cuscope" | head -14
"$cli" dump "$tmp/one_rank.cuscope" | grep -E "^nvtx .*NCCL|^payload" | head -12
"$cli" stats --report cuda_gpu_kern_sum "$tmp/one_rank.cuscope" | head -8
# Whether this NCCL build marks its calls with payloads at all (NCCL_NVTX_DISABLE exists from 2.28).
nccl=$(python3 -c "import glob, os, torch; d = os.path.dirname(torch.__file__); print((glob.glob(d + '/../nvidia/nccl/lib/libnccl.so*') + glob.glob(d + '/lib/libnccl*'))[0])" 2>/dev/null)
echo "NCCL library: $nccl; payload schema names in it: $(grep -a -c 'Message size \[bytes\]' "$nccl" 2>/dev/null), NCCL_NVTX_DISABLE: $(grep -a -c NVTX_DISABLE "$nccl" 2>/dev/null)"
"$cli" analyze "$tmp/one_rank.cuscope" | head -12

echo "== monitor mode under torchrun: each rank's endpoint carries its rank"
mkdir -p "$tmp/monitor"
(cd "$tmp/monitor" && "$cli" profile -q --mode monitor --prometheus 0 -- python3 -m torch.distributed.run \
    --standalone --nproc_per_node=2 "$OLDPWD/examples/torch_ranks.py" --backend gloo --steps 10 --seconds 20 \
    > monitor.log 2>&1) &
job=$!
sleep 14  # torchrun starts the ranks after a few seconds; an interval is published about 1.5 s after it ends
"$cli" ps
for pid in $("$cli" ps | awk 'NR > 1 && $4 != "-" { print $1 }'); do
  port=$("$cli" status --pid "$pid" | awk '/Prometheus endpoint/ { print $NF }')
  echo "-- pid $pid, port $port:"
  python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode())" \
    | grep -E "^cuscope_(kernels_total|gpu_busy_seconds_total|monitor_intervals_total)" | head -4
done
wait $job
tar -C "$tmp" -czf "$out/rank_traces.tgz" $(cd "$tmp" && ls -d gloo_* one_rank.cuscope 2>/dev/null)
ls -la "$out"
