// What taking a launch's call stack costs the launching thread (--stacks): the unwind at a given
// depth, and the writer's one-time resolution of a new return address.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "lib/process/call_stack.h"
#include "lib/process/elf_build_id.h"

namespace {

// Recurses `depth` frames, then unwinds: a launch made that deep in the program.
__attribute__((noinline)) size_t UnwindAt(int depth) {
  if (depth > 0) {
    const size_t n = UnwindAt(depth - 1);
    benchmark::ClobberMemory();  // keeps the recursion a real call chain
    return n;
  }
  uintptr_t pcs[cuscope::process::kMaxCallStackFrames];
  return cuscope::process::CaptureCallStack(pcs, cuscope::process::kMaxCallStackFrames, 0);
}

// Second argument: 0 libgcc's unwinder, 1 libunwind's (skipped when libunwind.so.8 is missing).
void BM_CaptureCallStack(benchmark::State& state) {
  if (state.range(1) == 1) {
    if (auto st = cuscope::process::UseLibunwind(); !st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      return;
    }
  } else {
    cuscope::process::UseLibgcc();
  }
  size_t frames = 0;
  for (auto _ : state) {
    frames = UnwindAt(static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(frames);
  }
  state.counters["frames"] = static_cast<double>(frames);
  state.SetLabel(state.range(1) == 1 ? "libunwind" : "libgcc");
  cuscope::process::UseLibgcc();
}
BENCHMARK(BM_CaptureCallStack)->ArgsProduct({{8, 24, 60}, {0, 1}});

void BM_ResolveReturnAddress(benchmark::State& state) {
  uintptr_t pcs[4];
  const size_t n = cuscope::process::CaptureCallStack(pcs, 4, 0);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) benchmark::DoNotOptimize(cuscope::process::ResolveReturnAddress(pcs[i]));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_ResolveReturnAddress);

// The build id of a module not yet seen: a walk of the loaded objects under the loader's lock, once
// per module (ResolveReturnAddress keeps it by module).
void BM_BuildIdOfLoadedObjectAt(benchmark::State& state) {
  uintptr_t pcs[1];
  cuscope::process::CaptureCallStack(pcs, 1, 0);
  for (auto _ : state) benchmark::DoNotOptimize(cuscope::process::BuildIdOfLoadedObjectAt(pcs[0]));
}
BENCHMARK(BM_BuildIdOfLoadedObjectAt);

}  // namespace
