// "GPU idle, by what the host was doing" from both sides: one fabricated run, the same records fed
// to monitor mode's IntervalAggregator (closed as one interval) and written as a trace for the
// analyzer's gpu.idle, and each cause's idle time compared. Both are meant to be one computation
// (intervals::ClaimInOrder over core::CallCategories, docs/architecture.md), written twice; this is
// what holds the two together.
//
// The spans coincide by construction. Monitor mode counts a device from its first operation to the
// interval's end, and CloseAll ends the last interval at the latest record's end; gpu.idle counts
// the active span, first operation to last, and leaves out the gaps of the start-up (the first
// idle_startup_ops_share of the operations, 1%). So the run ends with a kernel no call outlasts, it
// has fewer than 100 operations (no start-up gap), no capture windows or metric collection (nothing
// left out), no CUDA graph (no gaps between graph nodes), and no gap the host spends mostly in setup
// calls (gpu.idle gives such a gap to setup whole; the last test shows it).
//
// Names by definition: the analyzer's "another CUDA call" (a call of core::ApiCategory::kOther,
// cudaGetDevice here) and "host-bound" together are monitor mode's outside_cuda, which reads no
// kOther call.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/rules/rules.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/core/api_names.h"
#include "lib/core/records.h"
#include "lib/monitor/interval_aggregator.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::monitor {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::Us;

constexpr uint64_t kUs = 1000;
constexpr uint32_t kPid = 42;  // SyntheticTrace's session

// The gpu.idle numbers for each core::HostCause but kOutsideCuda, in the causes' order.
constexpr std::array<const char*, kHostCauseCount - 1> kAnalyzerKeys = {
    "idle_in_sync_ns", "idle_in_copy_ns", "idle_in_alloc_ns", "idle_in_setup_ns", "idle_in_launch_ns"};

// Idle time by cause, as each side names it (monitor mode's causes).
using ByCause = std::array<uint64_t, kHostCauseCount>;

// One run's records, each given to the aggregator and to the trace the analyzer reads, under the
// same API names (the trace's own callback ids).
class OneRun {
 public:
  OneRun()
      : monitor_(
            [this] {
              IntervalAggregator::Options o;
              o.interval_ns = 1'000'000'000;  // one interval holds the whole run (under 1 ms)
              o.api_name = [this](v1::ApiDomain, uint32_t cbid) { return trace_.ApiName(cbid); };
              return o;
            }(),
            Us(-50)) {}

  // A runtime or driver call on host thread `tid` (times in us); returns its correlation id.
  uint64_t Call(const std::string& name, double start_us, double end_us, uint64_t tid = 1) {
    core::ApiActivity a;
    a.start = Us(start_us);
    a.end = Us(end_us);
    a.domain = name.rfind("cuda", 0) == 0 ? v1::API_DOMAIN_RUNTIME : v1::API_DOMAIN_DRIVER;
    a.callback_id = trace_.CallbackId(name);
    a.pid = kPid;
    a.tid = tid;
    a.correlation_id = next_correlation_++;
    Both(a);
    return a.correlation_id;
  }
  void Kernel(double start_us, double end_us, uint64_t correlation) {
    core::KernelActivity k;
    k.start = Us(start_us);
    k.end = Us(end_us);
    k.correlation_id = correlation;
    k.stream = 7;
    k.config.name = "step";
    k.config.grid_x = 1;
    k.config.block_x = 128;
    Both(k);
  }
  // A synchronous copy from pageable host memory: the call stages the data before the GPU copies.
  void PageableCopyToDevice(double start_us, double end_us, uint64_t correlation) {
    core::MemcpyRecord m;
    m.start = Us(start_us);
    m.end = Us(end_us);
    m.copy_kind = v1::COPY_KIND_HTOD;
    m.src_kind = v1::MEMORY_KIND_PAGEABLE;
    m.dst_kind = v1::MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.stream = 7;
    m.correlation_id = correlation;
    Both(m);
  }

  // Monitor mode: the session stops at `stop_us`; the one interval's device 0.
  DeviceFigures MonitorIdle(double stop_us) {
    const std::vector<IntervalFigures> closed = monitor_.CloseAll(Us(stop_us));
    EXPECT_EQ(closed.size(), 1u);
    if (closed.size() != 1 || closed[0].devices.size() != 1) {
      ADD_FAILURE() << "expected one interval with one device";
      return DeviceFigures();
    }
    return closed[0].devices[0];
  }

  // The analyzer: gpu.idle's finding for device 0 over the trace written from the same records.
  analysis::Finding AnalyzerIdle() {
    const core::Trace trace = trace_.Load();
    const analysis::Timeline timeline = analysis::Timeline::Build(trace);
    std::vector<analysis::Finding> findings = analysis::GpuIdleRule(timeline, analysis::Thresholds());
    EXPECT_EQ(findings.size(), 1u);
    return findings.empty() ? analysis::Finding() : findings[0];
  }

 private:
  template <typename Record>
  void Both(const Record& r) {
    monitor_.Add(r);
    trace_.builder().Add(r);
  }

  SyntheticTrace trace_;
  IntervalAggregator monitor_;
  uint64_t next_correlation_ = 1;
};

ByCause MonitorCauses(const DeviceFigures& d) {
  ByCause out{};
  for (int c = 0; c < kHostCauseCount; ++c) out[c] = d.idle_by_cause_ns[c];
  return out;
}

uint64_t Number(const analysis::Finding& f, const char* key) {
  const std::optional<double> v = f.number(key);
  EXPECT_TRUE(v.has_value()) << key;
  return v ? static_cast<uint64_t>(*v) : 0;
}

// gpu.idle's causes in monitor mode's terms: outside_cuda is what no call of the five causes covers.
ByCause AnalyzerCauses(const analysis::Finding& f) {
  ByCause out{};
  for (int c = 0; c < kHostCauseCount - 1; ++c) out[c] = Number(f, kAnalyzerKeys[c]);
  out[static_cast<int>(HostCause::kOutsideCuda)] = Number(f, "idle_in_other_api_ns") + Number(f, "idle_host_bound_ns");
  return out;
}

uint64_t Sum(const ByCause& causes) {
  uint64_t sum = 0;
  for (uint64_t ns : causes) sum += ns;
  return sum;
}

constexpr int Index(HostCause c) { return static_cast<int>(c); }

// Five kernels and a pageable copy, with host activity of every kind in the gaps (times in us):
//   [0,10) kernel; gap A [10,100): a stream synchronize 12-95, the next launch 96-99
//   [100,110) kernel; gap [110,240): a pageable cudaMemcpy 120-260 whose GPU copy runs 240-260;
//     gap [260,300): the next launch 280-290
//   [300,320) kernel, launching the next one meanwhile (host time over busy GPU time counts nowhere);
//     gap C [320,500): no call at all
//   [500,510) kernel; gap D [510,700): launches on two threads (520-530, 540-550, 545-560), a
//     cudaMalloc 600-640 overlapped by another thread's synchronize 625-645 (the sync claims
//     625-640 first), cudaGetDevice 650-660, a module load 670-680
//   [700,720) kernel, the last operation; no call outlasts it.
void FabricateRun(OneRun& run) {
  run.Kernel(0, 10, run.Call("cudaLaunchKernel_v7000", -4, -1));  // before the span: neither side counts it
  run.Call("cudaStreamSynchronize_v3020", 12, 95);
  run.Kernel(100, 110, run.Call("cudaLaunchKernel_v7000", 96, 99));
  run.PageableCopyToDevice(240, 260, run.Call("cudaMemcpy_v3020", 120, 260));
  run.Kernel(300, 320, run.Call("cudaLaunchKernel_v7000", 280, 290));
  run.Kernel(500, 510, run.Call("cudaLaunchKernel_v7000", 305, 308));
  run.Call("cudaLaunchKernel_v7000", 520, 530);
  const uint64_t last_launch = run.Call("cudaLaunchKernel_v7000", 540, 550);
  run.Call("cudaLaunchKernel_v7000", 545, 560, /*tid=*/2);
  run.Call("cudaMalloc_v3020", 600, 640);
  run.Call("cudaStreamSynchronize_v3020", 625, 645, /*tid=*/2);
  run.Call("cudaGetDevice_v3020", 650, 660);
  run.Call("cuModuleLoadData", 670, 680);
  run.Kernel(700, 720, last_launch);
}

TEST(IdleCausesAgree, OneIntervalOverTheRunSplitsIdleAsGpuIdleDoes) {
  OneRun run;
  FabricateRun(run);
  const DeviceFigures monitor = run.MonitorIdle(720);
  const analysis::Finding analyzer = run.AnalyzerIdle();
  const ByCause m = MonitorCauses(monitor);
  const ByCause a = AnalyzerCauses(analyzer);

  // The same span: 720 us active, 90 us busy (five kernels and the copy), 630 us idle.
  EXPECT_EQ(Number(analyzer, "active_ns"), 720 * kUs);
  EXPECT_EQ(monitor.busy_ns, Number(analyzer, "busy_ns"));
  EXPECT_EQ(monitor.busy_ns, 90 * kUs);
  EXPECT_EQ(monitor.idle_ns, Number(analyzer, "idle_ns"));
  EXPECT_EQ(monitor.idle_ns, 630 * kUs);

  // Every cause agrees, to the nanosecond.
  for (int c = 0; c < kHostCauseCount; ++c) {
    EXPECT_EQ(m[c], a[c]) << HostCauseName(static_cast<HostCause>(c));
  }
  // And is what the run was built to show, each non-zero and unlike the others, so that a cause
  // read under another's name, or one dropped on both sides, cannot pass.
  const ByCause expected = [] {
    ByCause e{};
    e[Index(HostCause::kSync)] = (83 + 20) * kUs;            // gap A's wait, and 625-645 in gap D
    e[Index(HostCause::kCopy)] = 120 * kUs;                  // the pageable copy's staging, 120-240
    e[Index(HostCause::kAlloc)] = 25 * kUs;                  // 600-625: the sync took the rest
    e[Index(HostCause::kSetup)] = 10 * kUs;                  // the module load
    e[Index(HostCause::kLaunch)] = (3 + 10 + 30) * kUs;      // gap D's launches overlap: 30 us
    e[Index(HostCause::kOutsideCuda)] = (4 + 40 + 180 + 95 + 10) * kUs;  // the last 10: cudaGetDevice
    return e;
  }();
  for (int c = 0; c < kHostCauseCount; ++c) {
    EXPECT_EQ(m[c], expected[c]) << HostCauseName(static_cast<HostCause>(c));
    EXPECT_GT(expected[c], 0u);
    for (int o = 0; o < c; ++o) EXPECT_NE(expected[c], expected[o]);
  }
  EXPECT_EQ(Number(analyzer, "idle_in_other_api_ns"), 10 * kUs);
  EXPECT_EQ(Sum(m), monitor.idle_ns);
  EXPECT_EQ(Sum(a), Number(analyzer, "idle_ns"));
}

// Negative control: a call after the last operation. Monitor mode's interval runs on to the call's
// end, and the device's idle time in it is the call's; gpu.idle's active span ends at the last
// operation and never sees it. Only that cause differs, by exactly the call's length past 720 us.
TEST(IdleCausesAgree, ACallPastTheLastOperationCountsOnlyInTheInterval) {
  OneRun run;
  FabricateRun(run);
  run.Call("cudaMalloc_v3020", 730, 800);
  const DeviceFigures monitor = run.MonitorIdle(720);  // CloseAll ends at the latest record: 800 us
  const analysis::Finding analyzer = run.AnalyzerIdle();
  const ByCause m = MonitorCauses(monitor);
  const ByCause a = AnalyzerCauses(analyzer);
  EXPECT_EQ(monitor.idle_ns, Number(analyzer, "idle_ns") + 80 * kUs);
  EXPECT_EQ(m[Index(HostCause::kAlloc)], a[Index(HostCause::kAlloc)] + 70 * kUs);
  EXPECT_EQ(m[Index(HostCause::kOutsideCuda)], a[Index(HostCause::kOutsideCuda)] + 10 * kUs);  // 720-730
  for (HostCause c : {HostCause::kSync, HostCause::kCopy, HostCause::kSetup, HostCause::kLaunch}) {
    EXPECT_EQ(m[Index(c)], a[Index(c)]) << HostCauseName(c);
  }
}

// The difference by definition the spans above avoid: a gap the host spends mostly in setup calls
// is setup to gpu.idle whole (one-off preparation, the host's work between the calls included:
// rules/gpu_idle.cc), while monitor mode gives setup only what the calls cover. Here gap C holds a
// module load of 70 of its 180 us; the other 110 us are outside CUDA to monitor mode, setup to
// gpu.idle. Every other cause agrees.
TEST(IdleCausesAgree, AGapMostlyInSetupIsSetupWholeOnlyToGpuIdle) {
  OneRun run;
  FabricateRun(run);
  run.Call("cuModuleLoadData", 330, 400);
  const ByCause m = MonitorCauses(run.MonitorIdle(720));
  const ByCause a = AnalyzerCauses(run.AnalyzerIdle());
  EXPECT_EQ(m[Index(HostCause::kSetup)], (10 + 70) * kUs);
  EXPECT_EQ(a[Index(HostCause::kSetup)], (10 + 180) * kUs);
  EXPECT_EQ(a[Index(HostCause::kOutsideCuda)] + 110 * kUs, m[Index(HostCause::kOutsideCuda)]);
  for (HostCause c : {HostCause::kSync, HostCause::kCopy, HostCause::kAlloc, HostCause::kLaunch}) {
    EXPECT_EQ(m[Index(c)], a[Index(c)]) << HostCauseName(c);
  }
}

}  // namespace
}  // namespace cuscope::monitor
