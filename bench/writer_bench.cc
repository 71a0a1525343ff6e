// The writer's per-record path through TracePipeline, CUPTI faked: completed buffers of kernel
// records in, chunks out, timed from the writer thread's start to its last chunk, in each mode
// (trace: every record to the file; monitor: every record folded into figures, none to a file;
// monitor with a trace window open: figures and the file; flight: every record to the ring).
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "lib/core/trace_writer.h"
#include "lib/cupti/trace_pipeline.h"
#include "lib/settings/config.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

constexpr int kBuffers = 16;

enum Mode { kTrace = 0, kMonitor = 1, kMonitorWindow = 2, kFlight = 3 };

void FillKernels(uint8_t* buffer, size_t records, uint64_t first_start) {
  static const char* names[] = {
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
      "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffEEjfLi4EEEEEvT1_",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off",
      "_Z11tiny_kernelPi"};
  for (size_t i = 0; i < records; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = first_start + 4400 * i;
    k.end = k.start + 700 + (i % 11) * 7;
    k.streamId = 7 + (i % 2);
    k.correlationId = static_cast<uint32_t>(1000 + 3 * i);
    k.gridX = 64 << (i % 4);
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.name = names[i % 4];
    std::memcpy(buffer + i * testing::FakeCupti::kRecordSlot, &k, sizeof(k));
  }
}

void BM_WriterPerRecord(benchmark::State& state) {
  const auto mode = static_cast<Mode>(state.range(0));
  settings::Config config;
  config.mode = mode == kTrace ? settings::CollectionMode::kTrace
                : mode == kFlight ? settings::CollectionMode::kFlight
                                  : settings::CollectionMode::kMonitor;
  const size_t records = config.buffer_bytes / testing::FakeCupti::kRecordSlot;
  const std::string path = "/tmp/cuscope_writer_bench_" + std::to_string(::getpid()) + ".cuscope";
  testing::FakeCupti cupti;
  uint64_t total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<core::TraceWriter> file;
    if (mode == kTrace || mode == kMonitorWindow) {
      auto writer = core::TraceWriter::Create(path, true);
      if (!writer.ok()) {
        state.SkipWithError("cannot create the output file");
        return;
      }
      file = *std::move(writer);
    }
    auto pipeline = std::make_unique<TracePipeline>(config, cupti, std::move(file), v1::Header(),
                                                    [](const std::string&) {}, TracePipeline::Hooks{});
    std::vector<uint8_t*> buffers;
    for (int b = 0; b < kBuffers; ++b) {
      uint8_t* buffer = pipeline->AcquireBuffer();
      if (buffer == nullptr) {
        state.SkipWithError("the pool gave no buffer");
        return;
      }
      FillKernels(buffer, records, cupti.Timestamp() + 1'000'000ull * b);
      buffers.push_back(buffer);
    }
    if (!pipeline->StartWriting().ok()) {
      state.SkipWithError("no writer thread");
      return;
    }
    if (mode == kMonitorWindow && !pipeline->OpenTraceWindow(0).ok()) {
      state.SkipWithError("no trace window");
      return;
    }
    state.ResumeTiming();
    for (uint8_t* buffer : buffers) pipeline->BufferCompleted(buffer, records * testing::FakeCupti::kRecordSlot);
    pipeline->FinishWriting();
    state.PauseTiming();
    total += records * kBuffers;
    pipeline.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  ::unlink(path.c_str());
}

BENCHMARK(BM_WriterPerRecord)
    ->ArgName("mode")
    ->Arg(kTrace)
    ->Arg(kMonitor)
    ->Arg(kMonitorWindow)
    ->Arg(kFlight)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace cuscope::cupti
