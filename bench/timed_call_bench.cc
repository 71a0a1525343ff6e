// What lean collection adds to a program's call on the program's thread: the call timer's entry and
// exit (CUPTI's clock read at each, the call's frame on the thread's stack) and the record queued
// for the writer under the pipeline's lock, with the writer thread draining, encoding and writing
// them as it does in a session. Threads share one pipeline, so the lock's contention shows as
// threads are added. Runs without a GPU (CUPTI's clock and callback names need no device).
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>
#include <cupti.h>

#include "lib/settings/config.h"
#include "lib/core/trace_writer.h"
#include "lib/cupti/call_timer.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/trace_pipeline.h"

namespace cuscope {
namespace {

// One pipeline with its writer running, for every benchmark and thread of the process.
struct Harness {
  Harness() {
    config.output = "/tmp/cuscope_timed_call_bench_" + std::to_string(::getpid()) + ".cuscope";
    auto writer = core::TraceWriter::Create(config.output, true);
    if (!writer.ok()) return;
    pipeline = std::make_unique<cupti::TracePipeline>(config, cupti::RealCuptiApi(), *std::move(writer), v1::Header(),
                                                      [](const std::string&) {}, cupti::TracePipeline::Hooks{});
    if (!pipeline->StartWriting().ok()) {
      pipeline.reset();
      return;
    }
    timer = std::make_unique<cupti::CallTimer>(
        cupti::RealCuptiApi(),
        [this](const core::ApiActivity* call, const core::SyncRecord* sync) { pipeline->QueueTimedCall(call, sync); },
        /*sync_records=*/true);
  }
  ~Harness() {
    if (pipeline == nullptr) return;
    pipeline->FinishWriting();
    (void)pipeline->Close();
    ::unlink(config.output.c_str());
  }
  settings::Config config;
  std::unique_ptr<cupti::TracePipeline> pipeline;
  std::unique_ptr<cupti::CallTimer> timer;
};

Harness& TheHarness() {
  static Harness harness;
  return harness;
}

// One runtime call's entry and exit through the timer, each iteration with a new correlation id
// (each thread its own range).
void RuntimeCalls(benchmark::State& state, CUpti_CallbackId cbid) {
  Harness& h = TheHarness();
  if (h.timer == nullptr) {
    state.SkipWithError("no pipeline (cannot write to /tmp)");
    return;
  }
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  uint32_t correlation = static_cast<uint32_t>(state.thread_index()) << 24;
  for (auto _ : state) {
    data.correlationId = ++correlation;
    data.callbackSite = CUPTI_API_ENTER;
    h.timer->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, data, true);
    data.callbackSite = CUPTI_API_EXIT;
    h.timer->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, data, true);
  }
  state.SetItemsProcessed(state.iterations());
}

// A kernel launch through the runtime: cudaLaunchKernel, timed and queued.
void BM_TimedLaunchCall(benchmark::State& state) {
  RuntimeCalls(state, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
}
BENCHMARK(BM_TimedLaunchCall)->Threads(1)->Threads(2)->Threads(4)->Threads(8)->UseRealTime();

// A call the timer does not time (cudaGetDevice): what every other call of the program pays when
// its callback reaches cuscope for another reason.
void BM_UntimedCall(benchmark::State& state) {
  RuntimeCalls(state, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
}
BENCHMARK(BM_UntimedCall);

}  // namespace
}  // namespace cuscope
