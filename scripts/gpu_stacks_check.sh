#!/usr/bin/env bash
# Call stacks at launch (--stacks) on the GPU machine, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_stacks_check.sh OUT_DIR
# A C++ example's launches must name its main() as their launch site; a PyTorch program sampled
# one launch in 100 must run to its end with stacks in its trace; and what a stack costs per
# launch (the launch loop bench, 100,000 launches, none/first:5/every:100/all, 3 rounds).
# Prints each figure and "stacks check: N failed" at the end; traces stay in OUT_DIR/stacks.
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_stacks_check.sh OUT_DIR}
mkdir -p "$OUT/stacks"; OUT=$(cd "$OUT" && pwd)/stacks
B=$PWD/build-device; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
lib=$B/lib/libcuscope.so
failed=0
check() {  # check WHAT OK(0|1)
  if [ "$2" -eq 1 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=$((failed + 1)); fi
}

echo "== launch_overhead --stacks first:5"
$cli profile -q -f --stacks first:5 -o "$OUT/launch_overhead" -- "$B/examples/example_launch_overhead" --steps 2000 >/dev/null
table=$($cli stats --report cuda_kern_stack_sum "$OUT/launch_overhead.cuscope" 2>&1)
echo "$table" | head -8
rows=$(grep -c 'tiny_step\|init_kernel' <<<"$table")
check "each kernel's first launches carry a stack" $(( rows >= 2 ))
check "the launch site is the example's main" $(grep -q 'main\|example_launch_overhead+0x' <<<"$table" && echo 1 || echo 0)

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== PyTorch --stacks every:100"
  timeout 120 $cli profile -q -f --stacks every:100 -o "$OUT/torch" -- python3 examples/torch_top_down.py --steps 300 \
    >/dev/null 2>&1
  rc=$?
  table=$($cli stats --report cuda_kern_stack_sum "$OUT/torch.cuscope" 2>&1)
  echo "$table" | head -8 | cut -c1-200
  check "PyTorch ran to its end with stacks" $(( rc == 0 ))
  check "PyTorch's sampled launches are grouped by launch site" $(( $(wc -l <<<"$table") > 4 ))
fi

echo "== what a stack costs per launch (launch_overhead_bench, 100000 launches, 3 rounds)"
for round in 1 2 3; do
  "$B/bench/launch_overhead_bench" --mode plain | tail -1
  for s in none first:5 every:100 all; do
    CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$OUT/cost" CUSCOPE_STACKS=$s CUDA_INJECTION64_PATH="$lib" \
      "$B/bench/launch_overhead_bench" --mode plain | tail -1 | sed "s/mode=plain/stacks=$s/"
  done
done
echo "stacks check: $failed failed"
