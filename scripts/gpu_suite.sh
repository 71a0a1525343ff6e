#!/usr/bin/env bash
# The whole GPU suite in one command, on the GPU machine, from the repository root:
#   scripts/gpu_suite.sh [OUT_DIR] [quick|checks]
# Needs build-device/ from scripts/build_for_device.sh (B=DIR: another such folder). Runs the gpu-labelled tests, every example
# and its fixed twin under `cuscope profile` + `cuscope analyze`, the window checks, the overhead measurements and
# the long run, the kernel-metrics comparison with ncu, the top-down suite, and writes the logs and
# the known-work trace under OUT_DIR (default gpu-results). "quick" leaves out the long run, the ncu
# comparison and the top-down suite (what a change to linking or start-up needs, in ~5 minutes);
# "checks" leaves out the overhead measurements too (the tests, examples and window, stack and
# capture checks only: for a device call that measures cost with the interleaved scripts of
# bench/gpu/ beside it).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results}
quick=${2:-}
mkdir -p "$out"
B=${B:-$PWD/build-device}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
lib="$B/lib/libcuscope.so"
cli="$B/bin/cuscope"
tmp=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
"$cli" info

echo "== gpu-labelled tests (collector_gpu_test)"
"$B/bin/collector_gpu_test" --gtest_output=xml:"$out/gpu_tests.xml" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Actual|Which is|cuscope:" | head -80
echo "== GPU counter samplers (gpu_counters_gpu_test)"
"$B/bin/gpu_counters_gpu_test" --gtest_output=xml:"$out/gpu_counters_tests.xml" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Which is|busy median" | head -40

echo "== a program with its own protobuf (Debian's shared one), cuscope preloaded with a driver present"
CUSCOPE_QUIET=1 CUSCOPE_OUTPUT="$tmp/protobuf_host" LD_PRELOAD="$lib" "$B/bin/protobuf_host" "$lib"
echo "exit $?; libraries cuscope needs: $(readelf -d "$lib" | grep -o 'NEEDED.*' | tr -s ' ' | tr '\n' ' ')"

echo "== the known-work trace that ships in traces/"
"$cli" profile -q -f -o "$out/h200_known_work" -- "$B/examples/example_known_work" | tail -3
"$cli" dump --limit 5 "$out/h200_known_work.cuscope" | tail -5

echo "== examples: symptom and fixed twin, top finding each"
run_example() {
  local name=$1; shift
  local trace="$tmp/${name}_$(echo "$*" | tr -c 'a-z0-9' '_')"
  "$cli" profile -q -f -o "$trace" -- "$B/examples/example_$name" "$@" | head -1
  "$cli" analyze "$trace.cuscope" > "$trace.txt" 2>&1
  echo "-- $name $* :"; grep -m4 -E "^\s*\[?(error|warning|info)|^ *[0-9]+\.|Nothing wrong" "$trace.txt" || head -8 "$trace.txt"
}
for ex in launch_overhead sync_every_step pageable_copies legacy_default_stream event_wait_stall; do
  run_example "$ex"
  if [ "$ex" = launch_overhead ]; then run_example "$ex" --fixed=fused; run_example "$ex" --fixed=graph
  else run_example "$ex" --fixed; fi
done
# PyTorch: a .item() read-back after every step, and its twin that reads back once per 100 steps.
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  for variant in "" --fixed; do
    trace="$tmp/torch_item_sync$(echo "$variant" | tr -c 'a-z0-9\n' '_')"
    "$cli" profile -q -f -o "$trace" -- python3 examples/torch_item_sync.py $variant | tail -1
    "$cli" analyze "$trace.cuscope" > "$trace.txt" 2>&1
    echo "-- torch_item_sync $variant :"; grep -m4 -E "^\s*\[?(error|warning|info)|^ *[0-9]+\.|Nothing wrong" "$trace.txt" || head -8 "$trace.txt"
  done
fi
# The traces travel too, so the analyses can be redone off the GPU machine.
tar -C "$tmp" -czf "$out/example_analyses.tgz" $(cd "$tmp" && ls *.txt *.cuscope)

if [ "$quick" != checks ]; then
echo "== launch overhead: plain / bare CUPTI / cuscope, 100000 launches, 5 reps each, 3 rounds"
for round in 1 2 3; do
  "$B/bench/launch_overhead_bench" --mode plain | tail -1
  "$B/bench/launch_overhead_bench" --mode bare-cupti | tail -1
  CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/overhead" CUDA_INJECTION64_PATH="$lib" \
    "$B/bench/launch_overhead_bench" --mode plain | tail -1 | sed 's/mode=plain/mode=cuscope/'
done

echo "== launch overhead by activity kinds under cuscope, 100000 launches, 2 rounds"
for round in 1 2; do
  for kinds in kernel kernel,runtime kernel,runtime,driver kernel,memcpy,memset,runtime,sync,nvtx,memory,overhead all; do
    CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/kinds" CUSCOPE_KINDS=$kinds CUDA_INJECTION64_PATH="$lib" \
      "$B/bench/launch_overhead_bench" --mode plain | tail -1 | sed "s/mode=plain/kinds=$kinds/"
  done
  "$B/bench/launch_overhead_bench" --mode plain | tail -1
done

echo "== PyTorch 20000 tiny kernels: plain / torch.profiler (loop; whole region) / bare CUPTI injected / cuscope, 4 rounds of 9 reps"
for round in 1 2 3 4; do
  python3 bench/gpu/torch_overhead.py --reps 9 --mode plain | tail -1
  python3 bench/gpu/torch_overhead.py --reps 9 --mode torch-profiler 2>/dev/null | tail -1
  python3 bench/gpu/torch_overhead.py --reps 9 --mode torch-profiler-region 2>/dev/null | tail -1
  CUDA_INJECTION64_PATH="$B/bench/libbare_cupti_injection.so" \
    python3 bench/gpu/torch_overhead.py --reps 9 --mode plain | tail -1 | sed 's/mode=plain/mode=bare-cupti/'
  CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/torch" CUDA_INJECTION64_PATH="$lib" \
    python3 bench/gpu/torch_overhead.py --reps 9 --mode plain | tail -1 | sed 's/mode=plain/mode=cuscope/'
done
fi

echo "== windows that open while the program runs: lean calls, NVTX capture, own calls, late profilers (scripts/gpu_window_check.sh)"
bash scripts/gpu_window_check.sh "$out" 2>&1 | grep -E "^(PASS|FAIL|window check|==)"

echo "== call stacks at launch (scripts/gpu_stacks_check.sh)"
bash scripts/gpu_stacks_check.sh "$out" 2>&1 | grep -E "^(PASS|FAIL|stacks check|==|stacks=|mode=)"

echo "== cuscope capture --top-down from outside (scripts/gpu_capture_top_down_check.sh)"
bash scripts/gpu_capture_top_down_check.sh "$out" 2>&1 | grep -E "^(PASS|FAIL|capture top-down check|==)"

if [ "$quick" = quick ] || [ "$quick" = checks ]; then
  echo "== $quick: long run, ncu comparison and top-down suite left out"
  exit 0
fi

echo "== long run: 5,000,000 launches, peak resident memory plain vs under cuscope (cap 128 MiB)"
peak() { grep VmHWM "/proc/$1/status" 2>/dev/null; }
for mode in plain cuscope; do
  if [ "$mode" = cuscope ]; then
    export CUDA_INJECTION64_PATH="$lib" CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$tmp/long_run"
  fi
  "$B/bench/launch_overhead_bench" --mode plain --launches 1000000 --reps 5 > "$tmp/long_$mode.txt" 2>&1 &
  pid=$!; hwm=""
  while kill -0 $pid 2>/dev/null; do h=$(peak $pid); [ -n "$h" ] && hwm=$h; sleep 0.5; done
  wait $pid; echo "$mode: exit $? $(tail -1 "$tmp/long_$mode.txt") peak $hwm"
  unset CUDA_INJECTION64_PATH
done
"$cli" stats --report cuda_gpu_kern_sum "$tmp/long_run.cuscope" 2>&1 | head -8
"$cli" dump --limit 0 "$tmp/long_run.cuscope" | tail -3
ls -l "$tmp/long_run.cuscope"

echo "== kernel metrics against ncu --clock-control none (scripts/ncu_compare.sh)"
bash scripts/ncu_compare.sh "$out/ncu" && rm -rf "$out/ncu"
echo "== the one-run top-down, GPU counter sampling cost, PM vs Range Profiler (scripts/top_down_suite.sh)"
bash scripts/top_down_suite.sh "$out/top_down"
