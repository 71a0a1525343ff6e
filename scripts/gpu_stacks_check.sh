#!/usr/bin/env bash
# Call stacks at launch (--stacks) on the GPU machine, from the repository root, after
# scripts/build_for_device.sh:  scripts/gpu_stacks_check.sh OUT_DIR
# A C++ example's launches must name its main() as their launch site; a PyTorch program sampled
# one launch in 100 must run to its end with stacks in its trace; and what a stack costs per
# launch (the launch loop bench, 100,000 launches, none/first:5/every:100/all, and all with
# libgcc's unwinder, 3 rounds); Python
# frames: each kernel of a three-function PyTorch program attributed to its function, 16 launching
# threads, a CUDA graph captured in Python (share of GPU time attributed), and what stacks with
# Python frames cost per PyTorch kernel.
# Prints each figure and "stacks check: N failed" at the end; traces stay in OUT_DIR/stacks.
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_stacks_check.sh OUT_DIR}
mkdir -p "$OUT/stacks"; OUT=$(cd "$OUT" && pwd)/stacks
B=${B:-$PWD/build-device}; export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
cli=$B/bin/cuscope
lib=$B/lib/libcuscope.so
failed=0
check() {  # check WHAT OK(0|1)
  if [ "$2" -eq 1 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=$((failed + 1)); fi
}

echo "== launch_overhead --stacks first:5"
$cli profile -f --stacks first:5 -o "$OUT/launch_overhead" -- "$B/examples/example_launch_overhead" --steps 2000 \
  >/dev/null 2> "$OUT/launch_overhead.err"
check "stacks are walked by libunwind (no line about libunwind.so.8)" \
  $(grep -q 'libunwind.so.8' "$OUT/launch_overhead.err" && echo 0 || echo 1)
table=$($cli stats --report cuda_kern_stack_sum "$OUT/launch_overhead.cuscope" 2>&1)
echo "$table" | head -8
rows=$(grep -c 'tiny_step\|init_kernel' <<<"$table")
check "each kernel's first launches carry a stack" $(( rows >= 2 ))
check "the launch site is the example's main" $(grep -q 'main\|example_launch_overhead+0x' <<<"$table" && echo 1 || echo 0)
check "the launch site names its source line (the example's line table)" \
  $(grep -q 'main (launch_overhead.cu:[0-9]' <<<"$table" && echo 1 || echo 0)

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== PyTorch --stacks every:100"
  timeout 120 $cli profile -q -f --stacks every:100 -o "$OUT/torch" -- python3 examples/torch_top_down.py --steps 300 \
    >/dev/null 2>&1
  rc=$?
  table=$($cli stats --report cuda_kern_stack_sum "$OUT/torch.cuscope" 2>&1)
  echo "$table" | head -8 | cut -c1-200
  check "PyTorch ran to its end with stacks" $(( rc == 0 ))
  check "PyTorch's sampled launches are grouped by launch site" $(( $(wc -l <<<"$table") > 4 ))

  # Python frames: each kernel attributed to the Python function that launched it.
  echo "== Python launch sites (examples/torch_launch_sites.py --stacks first:20)"
  timeout 120 $cli profile -q -f --stacks first:20 -o "$OUT/sites" -- python3 examples/torch_launch_sites.py --steps 200 \
    > "$OUT/sites.txt" 2>&1
  rc=$?
  table=$($cli stats --kernel-names demangled --report cuda_kern_stack_sum "$OUT/sites.cuscope" 2>&1)
  echo "$table" | head -12 | cut -c1-300
  check "the launch-sites program ran to its end" $(( rc == 0 ))
  site_of() { grep "$1 (torch_launch_sites.py:" <<<"$table" | grep -ci "$2"; }
  check "the multiply kernel is attributed to scale()" $(( $(site_of scale mul) > 0 ))
  check "the add kernel is attributed to shift()" $(( $(site_of shift add) > 0 ))
  check "the reduction is attributed to total()" $(( $(site_of total reduce) > 0 ))
  check "no kernel of scale() is attributed elsewhere" $(( $(grep -ci "mul" <<<"$table") == $(site_of scale mul) ))
  # The same program with libgcc's unwinder: the same launch sites.
  timeout 120 $cli profile -q -f --stacks first:20 --unwinder libgcc -o "$OUT/sites_libgcc" -- \
    python3 examples/torch_launch_sites.py --steps 200 > /dev/null 2>&1
  table_gcc=$($cli stats --kernel-names demangled --report cuda_kern_stack_sum "$OUT/sites_libgcc.cuscope" 2>&1)
  sites() { grep -o '[A-Za-z_]* (torch_launch_sites.py:[0-9]*)' | sort -u | tr '\n' ' '; }
  echo "sites, libunwind: $(sites <<<"$table")"
  echo "sites, libgcc:    $(sites <<<"$table_gcc")"
  check "libunwind and libgcc find the same launch sites" \
    $([ -n "$(sites <<<"$table")" ] && [ "$(sites <<<"$table")" = "$(sites <<<"$table_gcc")" ] && echo 1 || echo 0)

  echo "== 16 Python threads launching, --stacks all"
  timeout 180 $cli profile -q -f --stacks all -o "$OUT/sites16" -- python3 examples/torch_launch_sites.py --steps 100 \
    --threads 16 > "$OUT/sites16.txt" 2>&1
  rc=$?
  tail -1 "$OUT/sites16.txt"
  table=$($cli stats --kernel-names demangled --report cuda_kern_stack_sum "$OUT/sites16.cuscope" 2>&1)
  echo "$table" | head -3 | cut -c1-260
  check "16 launching threads: no hang, exit 0" $(( rc == 0 ))
  check "16 launching threads: every function attributed" $(( $(site_of scale mul) > 0 && $(site_of shift add) > 0 && $(site_of total reduce) > 0 ))

  echo "== a CUDA graph captured in Python and replayed (--graph --steps 2000)"
  timeout 120 $cli profile -q -f --stacks first:1 -o "$OUT/graph" -- python3 examples/torch_launch_sites.py --graph \
    --steps 2000 > "$OUT/graph.txt" 2>&1
  rc=$?
  table=$($cli stats --report cuda_kern_stack_sum "$OUT/graph.cuscope" 2>&1)
  echo "$table" | head -10 | cut -c1-260
  attributed=$(grep -o '[0-9.]*% of the GPU kernel time has a launch site' <<<"$table" | cut -d% -f1)
  in_range=$(grep -o '[0-9.]*% also an NVTX range' <<<"$table" | cut -d% -f1)
  echo "graph replays: ${attributed:-?}% of kernel time attributed to a source line, ${in_range:-?}% also to an NVTX range"
  check "graph replays: the program ran to its end" $(( rc == 0 ))
  check "graph replays: > 95% of GPU time attributed to a line and an NVTX range" \
    $(python3 -c "print(int(${in_range:-0} > 95 and ${attributed:-0} > 95))")
fi

# "all/libgcc": every launch's stack walked by libgcc's unwinder instead of libunwind's.
echo "== what a stack costs per launch (launch_overhead_bench, 100000 launches, 3 rounds)"
for round in 1 2 3; do
  "$B/bench/launch_overhead_bench" --mode plain | tail -1
  for s in none first:5 every:100 all all/libgcc; do
    unwinder=libunwind
    [ "$s" = all/libgcc ] && unwinder=libgcc
    CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$OUT/cost" CUSCOPE_STACKS=${s%/libgcc} \
      CUSCOPE_UNWINDER=$unwinder CUDA_INJECTION64_PATH="$lib" \
      "$B/bench/launch_overhead_bench" --mode plain | tail -1 | sed "s|mode=plain|stacks=$s|"
  done
done
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== what a stack with Python frames costs (bench/gpu/torch_overhead.py, 20000 kernels, 3 reps, 2 rounds)"
  for round in 1 2; do
    python3 bench/gpu/torch_overhead.py --reps 3 --mode plain | tail -1
    for s in none every:100 all all/libgcc; do
      unwinder=libunwind
      [ "$s" = all/libgcc ] && unwinder=libgcc
      CUSCOPE_QUIET=1 CUSCOPE_FORCE_OVERWRITE=1 CUSCOPE_OUTPUT="$OUT/torch_cost" CUSCOPE_STACKS=${s%/libgcc} \
        CUSCOPE_UNWINDER=$unwinder CUDA_INJECTION64_PATH="$lib" python3 bench/gpu/torch_overhead.py --reps 3 \
        --mode plain | tail -1 | sed "s|mode=plain|stacks=$s|"
    done
  done
fi
echo "stacks check: $failed failed"
