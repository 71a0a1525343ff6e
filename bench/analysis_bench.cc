// Analysis throughput on a generated launch-heavy trace of 10 million records (kernels, their
// launch calls, periodic syncs and copies), on one core (run it pinned: `taskset -c 1`), and the
// analyzer's peak memory per record.
//
// Memory is counted by replacing the global allocation functions in this binary: every live byte
// requested through new/delete (not malloc's own overhead). `trace_bytes_per_record` is what is
// live once the trace is built (the loaded trace); `analysis_peak_bytes_per_record` is the highest
// live total reached during one `Analyze` call minus that, i.e. the analyzer's own peak (timeline,
// rule scratch, tables, findings) on top of the trace; `total_peak_bytes_per_record` is trace plus
// analyzer at that peak. `analysis_peak_mib` gives the analyzer's peak in absolute terms.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "lib/analysis/analyzer.h"
#include "lib/analysis/communication.h"
#include "lib/analysis/rules/rules.h"
#include "lib/core/trace.h"

namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void Track(int64_t delta) {
  const int64_t now = g_live_bytes.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

// Each block carries its size in front so that delete can account for it.
void* operator new(size_t size) {
  void* p = std::malloc(size + 16);
  if (p == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(p) = size;
  Track(static_cast<int64_t>(size));
  return static_cast<char*>(p) + 16;
}
void* operator new[](size_t size) { return operator new(size); }
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  char* base = static_cast<char*>(p) - 16;
  Track(-static_cast<int64_t>(*reinterpret_cast<size_t*>(base)));
  std::free(base);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }

namespace {

using cuscope::core::Trace;
namespace v1 = cuscope::v1;


// A dictionary holding a few kernel signatures and the API functions the trace uses.
void DefineNames(Trace& trace) {
  v1::Chunk defs;
  const char* names[] = {"elementwise_add", "elementwise_mul", "gemm_128x128", "reduce_sum",
                         "cudaLaunchKernel_v7000", "cudaStreamSynchronize_v3020", "cudaMemcpyAsync_v3020"};
  for (uint32_t i = 0; i < 7; ++i) {
    auto* s = defs.add_strings();
    s->set_id(i + 1);
    s->set_value(names[i]);
  }
  for (uint32_t i = 0; i < 4; ++i) {
    auto* k = defs.add_kernel_signatures();
    k->set_id(i + 1);
    k->set_name(i + 1);
    k->set_grid_x(128);
    k->set_block_x(256);
  }
  for (uint32_t i = 0; i < 3; ++i) {
    auto* f = defs.add_api_functions();
    f->set_id(i + 1);
    f->set_domain(v1::API_DOMAIN_RUNTIME);
    f->set_callback_id(i + 1);
    f->set_name(i + 5);
  }
  auto* th = defs.add_threads();
  th->set_id(1);
  th->set_pid(1);
  th->set_tid(1);
  (void)trace.dict.Absorb(defs);
}

// Per 1,000 records: 490 kernels with their 490 launches, 10 syncs, 10 copies.
Trace GenerateTrace(uint64_t records) {
  Trace trace;
  DefineNames(trace);
  const uint64_t groups = records / 1000;
  trace.kernels.reserve(groups * 490);
  trace.api_calls.reserve(groups * 500);
  trace.memcpys.reserve(groups * 10);
  uint64_t t = 1'700'000'000'000'000'000ull, corr = 1;
  uint32_t lcg = 12345;
  for (uint64_t g = 0; g < groups; ++g) {
    for (int i = 0; i < 490; ++i) {
      lcg = lcg * 1664525u + 1013904223u;
      const uint64_t duration = 2000 + (lcg >> 20);  // 2-6 us
      trace.api_calls.push_back({t, t + 3000, corr, 1, 1, 0});
      trace.kernels.push_back({t + 4000, t + 4000 + duration, corr, 1 + (lcg >> 30), 7, 0, 0, 0});
      ++corr;
      t += 4000 + duration + (lcg >> 22);
      if (i % 49 == 48) {
        trace.api_calls.push_back({t, t + 20000, corr++, 2, 1, 0});
        cuscope::core::MemcpyRecord m;
        m.start = t + 1000;
        m.end = t + 9000;
        m.copy_kind = v1::COPY_KIND_DTOH;
        m.src_kind = v1::MEMORY_KIND_DEVICE;
        m.dst_kind = v1::MEMORY_KIND_PINNED;
        m.bytes = 1 << 20;
        m.stream = 7;
        m.correlation_id = corr;
        m.async = true;
        trace.api_calls.push_back({t, t + 500, corr++, 3, 1, 0});
        trace.memcpys.push_back(m);
        t += 21000;
      }
    }
  }
  return trace;
}

void BM_AnalyzeTrace(benchmark::State& state) {
  const Trace trace = GenerateTrace(static_cast<uint64_t>(state.range(0)));
  const uint64_t records = trace.record_count();
  const int64_t trace_bytes = g_live_bytes.load();
  cuscope::analysis::AnalyzeOptions options;
  for (auto _ : state) {
    g_peak_bytes.store(g_live_bytes.load());
    cuscope::analysis::Analysis analysis = cuscope::analysis::Analyze(trace, options);
    benchmark::DoNotOptimize(analysis.findings.data());
  }
  const double peak = static_cast<double>(g_peak_bytes.load());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
  state.counters["records"] = static_cast<double>(records);
  // The trace in memory, and the analyzer's own peak on top of it.
  state.counters["trace_bytes_per_record"] = static_cast<double>(trace_bytes) / static_cast<double>(records);
  state.counters["analysis_peak_bytes_per_record"] = (peak - static_cast<double>(trace_bytes)) / static_cast<double>(records);
  state.counters["total_peak_bytes_per_record"] = peak / static_cast<double>(records);
  state.counters["analysis_peak_mib"] = (peak - static_cast<double>(trace_bytes)) / (1024.0 * 1024.0);
  state.counters["trace_mib"] = static_cast<double>(trace_bytes) / (1024.0 * 1024.0);
}
// The figure of record: 10 million records. The 1 million one is quick to run under a profiler
// (--benchmark_filter=BM_AnalyzeTrace/1000000).
// The communication rule alone (comm.exposed: every kernel's name parsed once per signature, NCCL's
// kernels joined to their calls, interval sets per device), on the same trace: its share of the
// whole analysis above.
void BM_CommunicationRule(benchmark::State& state) {
  const Trace trace = GenerateTrace(static_cast<uint64_t>(state.range(0)));
  const cuscope::analysis::Timeline timeline = cuscope::analysis::Timeline::Build(trace);
  for (auto _ : state) {
    benchmark::DoNotOptimize(cuscope::analysis::CommunicationRule(timeline, cuscope::analysis::Thresholds()));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.record_count()));
}

// NCCL's kernels joined to their calls when no call encloses their launches (a CUDA graph replay
// launches outside every NCCL range): `n` short NCCL calls on one thread, then `n` NCCL kernels
// launched after them. Each lookup walks at most the ranges' nesting, never back over the calls:
// the time grows with n, not with n squared.
Trace NcclCallsThenKernels(uint64_t n) {
  Trace trace;
  v1::Chunk defs;
  const char* names[] = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cudaGraphLaunch_v10000", "NCCL", "ncclAllReduce"};
  for (uint32_t i = 0; i < 4; ++i) {
    auto* str = defs.add_strings();
    str->set_id(i + 1);
    str->set_value(names[i]);
  }
  auto* k = defs.add_kernel_signatures();
  k->set_id(1);
  k->set_name(1);
  auto* f = defs.add_api_functions();
  f->set_id(1);
  f->set_domain(v1::API_DOMAIN_RUNTIME);
  f->set_callback_id(1);
  f->set_name(2);
  auto* th = defs.add_threads();
  th->set_id(1);
  th->set_tid(1);
  (void)trace.dict.Absorb(defs);
  uint64_t t = 1'000'000'000;
  for (uint64_t i = 0; i < n; ++i, t += 1000) {
    trace.nvtx.push_back({t, v1::NVTX_KIND_RANGE_START, i + 1, 1, 4, 3});
    trace.nvtx.push_back({t + 500, v1::NVTX_KIND_RANGE_END, i + 1, 1, 0, 0});
  }
  for (uint64_t i = 0; i < n; ++i, t += 10'000) {
    trace.api_calls.push_back({t, t + 1000, i + 1, 1, 1, 0});
    trace.kernels.push_back({t + 2000, t + 7000, i + 1, 1, 9, 0, 0, 0});
  }
  return trace;
}

void BM_NcclKernelsOutsideTheirCalls(benchmark::State& state) {
  const Trace trace = NcclCallsThenKernels(static_cast<uint64_t>(state.range(0)));
  const cuscope::analysis::Timeline timeline = cuscope::analysis::Timeline::Build(trace);
  for (auto _ : state) {
    const cuscope::analysis::Communication comm = cuscope::analysis::BuildCommunication(timeline);
    benchmark::DoNotOptimize(comm.ops.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * state.range(0)));
}

BENCHMARK(BM_AnalyzeTrace)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CommunicationRule)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_NcclKernelsOutsideTheirCalls)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeTrace)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
