// Reader throughput: decoding a launch-heavy trace (kernels with their launch calls) from memory.
#include <benchmark/benchmark.h>

#include "lib/core/chunk_builder.h"
#include "lib/core/trace_format.h"
#include "lib/core/trace_reader.h"

namespace cuscope {
namespace {

std::string LaunchHeavyTrace(int chunks, int kernels_per_chunk) {
  std::string out(core::kTraceMagic);
  v1::Block b;
  b.mutable_header()->set_format_version(core::kFormatVersion);
  core::AppendFramedBlock(b, &out);
  core::ChunkBuilder builder([](v1::ApiDomain, uint32_t) { return std::string("cudaLaunchKernel_v7000"); });
  const char* names[] = {"elementwise_add", "elementwise_mul", "reduce_sum", "gemm"};
  uint64_t t = 1'764'000'000'000'000'000ull, corr = 1;
  for (int c = 0; c < chunks; ++c) {
    for (int i = 0; i < kernels_per_chunk; ++i, ++corr) {
      t += 4400 + (i % 17) * 13;
      core::ApiActivity a;
      a.start = t - 3000;
      a.end = t - 500;
      a.domain = v1::API_DOMAIN_RUNTIME;
      a.callback_id = 211;
      a.pid = 1;
      a.tid = 2;
      a.correlation_id = corr;
      builder.Add(a);
      core::KernelActivity k;
      k.start = t;
      k.end = t + 700 + (i % 11) * 7;
      k.correlation_id = corr;
      k.stream = 7;
      k.config.name = names[i % 4];
      k.config.grid_x = 64 << (i % 4);
      k.config.block_x = 256;
      builder.Add(k);
    }
    v1::Block cb;
    builder.TakeChunk(cb.mutable_chunk());
    core::AppendFramedBlock(cb, &out);
  }
  return out;
}

void BM_ReadLaunchHeavyTrace(benchmark::State& state) {
  const int chunks = 50, per_chunk = 10000;
  const std::string bytes = LaunchHeavyTrace(chunks, per_chunk);
  core::DecodedChunk c;
  for (auto _ : state) {
    auto reader = core::TraceReader::FromBytes(bytes);
    uint64_t records = 0;
    while (*(*reader)->Next(&c)) records += c.record_count();
    benchmark::DoNotOptimize(records);
  }
  // Records = kernels + API calls.
  state.SetItemsProcessed(state.iterations() * chunks * per_chunk * 2);
  state.counters["file_bytes_per_launch"] = static_cast<double>(bytes.size()) / (chunks * per_chunk);
}
BENCHMARK(BM_ReadLaunchHeavyTrace)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cuscope
