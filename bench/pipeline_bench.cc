// Translate + encode + write throughput of the collector's writer path, on one core, with
// fabricated CUPTI kernel records shaped like a launch-heavy trace.
#include <unistd.h>

#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "lib/core/chunk_builder.h"
#include "lib/core/trace_writer.h"
#include "lib/cupti/translate.h"

namespace cuscope {
namespace {

constexpr int kRecordsPerBuffer = 19000;  // what a 4 MiB CUPTI buffer holds

std::vector<CUpti_ActivityKernel10> FabricatedKernels() {
  static const char* names[] = {
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
      "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffEEjfLi4EEEEEvT1_",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off",
      "_Z11tiny_kernelPi"};
  std::vector<CUpti_ActivityKernel10> v(kRecordsPerBuffer);
  uint64_t t = 1'764'000'000'000'000'000ull;
  for (int i = 0; i < kRecordsPerBuffer; ++i) {
    auto& k = v[i];
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    t += 4400 + (i % 17) * 13;
    k.start = t;
    k.end = t + 700 + (i % 11) * 7;
    k.streamId = 7 + (i % 2);
    k.correlationId = 1000 + 3 * i;
    k.gridX = 64 << (i % 4);
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.name = names[i % 4];
  }
  return v;
}

void BM_TranslateEncodeWrite(benchmark::State& state) {
  const auto records = FabricatedKernels();
  const std::string path = "/tmp/cuscope_pipeline_bench_" + std::to_string(::getpid()) + ".cuscope";
  auto writer = core::TraceWriter::Create(path, true);
  if (!writer.ok()) {
    state.SkipWithError("cannot create the output file");
    return;
  }
  (*writer)->WriteHeader(v1::Header()).IgnoreError();
  core::ChunkBuilder builder([](v1::ApiDomain, uint32_t) { return std::string("api"); });
  v1::Chunk chunk;
  for (auto _ : state) {
    for (const auto& r : records) {
      const void* bytes = &r;
      cupti::TranslateActivity(*static_cast<const CUpti_Activity*>(bytes), builder);
    }
    builder.TakeChunk(&chunk);
    if (!(*writer)->WriteChunk(chunk).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(state.iterations() * kRecordsPerBuffer);
  state.counters["bytes_per_kernel"] =
      static_cast<double>((*writer)->bytes_written()) / static_cast<double>(state.iterations() * kRecordsPerBuffer);
  (*writer)->Close().IgnoreError();
  ::unlink(path.c_str());
}
BENCHMARK(BM_TranslateEncodeWrite)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cuscope
