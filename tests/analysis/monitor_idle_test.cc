// monitor.gpu_idle and the monitor reports, over monitor-mode traces written and read back.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/monitor_summary.h"
#include "lib/analysis/rules/rules.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "lib/core/record_codec/monitor_interval.h"
#include "tests/core/test_traces.h"

namespace cuscope::analysis {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

// `intervals` one-second intervals of device 0, each busy `busy_ns` with the idle rest split as
// given (sync, copy, alloc, setup, launch, outside CUDA shares of the idle time). The first
// interval's first `startup_ns` came before the device's first operation: neither busy nor idle.
core::Trace MonitorTrace(int intervals, uint64_t busy_ns, std::array<double, core::kHostCauseCount> idle_split,
                         uint64_t kernels_per_interval = 100, uint64_t startup_ns = 0) {
  core::ChunkBuilder builder(core::testing::FakeApiName);
  for (int i = 0; i < intervals; ++i) {
    core::IntervalFigures f;
    f.start_ns = kSecond * (10 + i);
    f.end_ns = f.start_ns + kSecond;
    core::DeviceFigures& d = f.devices.emplace_back();
    d.busy_ns = busy_ns;
    d.idle_ns = kSecond - busy_ns - (i == 0 ? startup_ns : 0);
    uint64_t claimed = 0;
    for (int c = 0; c + 1 < core::kHostCauseCount; ++c) {
      d.idle_by_cause_ns[c] = static_cast<uint64_t>(idle_split[c] * static_cast<double>(d.idle_ns));
      claimed += d.idle_by_cause_ns[c];
    }
    d.idle_by_cause_ns[core::kHostCauseCount - 1] = d.idle_ns - claimed;
    d.kernels = kernels_per_interval;
    d.kernel_gpu_ns = busy_ns;
    if (kernels_per_interval > 0) {
      d.top_kernels.push_back({"_Z4gemmv", {8, 1, 1}, {256, 1, 1}, kernels_per_interval - 1, busy_ns - 10});
      d.other_kernels = {"", {}, {}, 1, 10};
    }
    core::EncodeMonitorInterval(f, [&](std::string_view s) { return builder.InternString(s); }, builder.AddMonitorInterval());
  }
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  EXPECT_TRUE(trace.ok());
  return trace.ok() ? *std::move(trace) : core::Trace{};
}

std::vector<Finding> IdleFindings(const core::Trace& trace, const Thresholds& thresholds = Thresholds()) {
  return MonitorIdleRule(Timeline::Build(trace), thresholds);
}

TEST(MonitorIdleRuleTest, AHostBoundServerIsNamedWithWhatTheHostWasDoing) {
  const core::Trace trace = MonitorTrace(60, 300'000'000, {0.1, 0, 0, 0, 0.2, 0.7});
  const auto findings = IdleFindings(trace);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.rule_id, "monitor.gpu_idle");
  EXPECT_NE(f.headline.find("idle 70.0% of 60.0 s"), std::string::npos) << f.headline;
  EXPECT_NE(f.headline.find("outside CUDA"), std::string::npos) << f.headline;
  EXPECT_NEAR(*f.number("busy_share"), 0.3, 1e-9);
  EXPECT_NEAR(*f.number("idle_launch_ns"), 60 * 0.2 * 700'000'000.0, 60);
  EXPECT_NE(f.recommendation.find("host"), std::string::npos);
  EXPECT_EQ(f.severity, Severity::kError);
}

TEST(MonitorIdleRuleTest, TheDominantCauseChoosesTheAdvice) {
  const auto findings = IdleFindings(MonitorTrace(10, 200'000'000, {0.6, 0, 0, 0, 0.1, 0.3}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].headline.find("in sync calls"), std::string::npos) << findings[0].headline;
  EXPECT_NE(findings[0].recommendation.find("synchronize less often"), std::string::npos);
}

TEST(MonitorIdleRuleTest, ABusyGpuIsNotReported) {
  EXPECT_TRUE(IdleFindings(MonitorTrace(10, 950'000'000, {0, 0, 0, 0, 0, 1})).empty());
}

TEST(MonitorIdleRuleTest, TheBusyThresholdEdge) {
  // At exactly gpu_busy_min_share (0.8) nothing is reported; just below, it is.
  EXPECT_TRUE(IdleFindings(MonitorTrace(10, 800'000'000, {0, 0, 0, 0, 0, 1})).empty());
  EXPECT_EQ(IdleFindings(MonitorTrace(10, 799'000'000, {0, 0, 0, 0, 0, 1})).size(), 1u);
}

// A short run: 0.8 s of start-up, then the device busy 0.1 s of each second.
TEST(MonitorIdleRuleTest, TheStartUpBeforeTheFirstOperationIsNotMonitoredTime) {
  const core::Trace trace = MonitorTrace(3, 100'000'000, {0.6, 0, 0, 0, 0, 0.4}, 100, 800'000'000);
  const auto findings = IdleFindings(trace);
  ASSERT_EQ(findings.size(), 1u);
  // 2.2 s from the first operation, 1.9 s of it idle; counted from the first interval's start it
  // read 2.7 s of 3.0.
  EXPECT_NE(findings[0].headline.find("idle 86.4% of 2.2 s monitored from its first operation (busy 13.6%)"),
            std::string::npos)
      << findings[0].headline;
  const Table sum = MonitorSummaryTable(Timeline::Build(trace));
  ASSERT_EQ(sum.rows.size(), 1u);
  EXPECT_EQ(sum.rows[0][2], "2.200");  // seconds
  EXPECT_EQ(sum.rows[0][3], "13.6");   // busy %
}

TEST(MonitorIdleRuleTest, ADeviceThatRanNoKernelIsNotInUse) {
  EXPECT_TRUE(IdleFindings(MonitorTrace(10, 0, {0, 0, 0, 0, 0, 1}, 0)).empty());
}

TEST(MonitorIdleRuleTest, ATraceWithoutMonitorFiguresRaisesNothing) {
  EXPECT_TRUE(IdleFindings(core::Trace{}).empty());
}

TEST(MonitorReportsTest, SummaryAndKernelTablesSumTheIntervals) {
  const core::Trace trace = MonitorTrace(4, 500'000'000, {0, 0, 0, 0, 0.5, 0.5});
  const Timeline timeline = Timeline::Build(trace);
  const Table sum = MonitorSummaryTable(timeline);
  EXPECT_EQ(sum.name, "monitor_sum");
  ASSERT_EQ(sum.rows.size(), 1u);
  EXPECT_EQ(sum.rows[0][1], "4");        // intervals
  EXPECT_EQ(sum.rows[0][2], "4.000");    // seconds
  EXPECT_EQ(sum.rows[0][3], "50.0");     // busy %
  EXPECT_EQ(sum.rows[0][4], "50.0");     // idle %
  EXPECT_EQ(sum.rows[0][9], "25.0");     // idle while launching
  EXPECT_EQ(sum.rows[0][10], "25.0");    // idle outside CUDA
  EXPECT_EQ(sum.rows[0][11], "100.0");   // kernels per second
  const Table kern = MonitorKernelTable(timeline);
  ASSERT_EQ(kern.rows.size(), 2u);
  EXPECT_EQ(kern.rows[0][3], "396");  // gemm launches over the 4 intervals
  EXPECT_EQ(kern.rows[0][4], "8x1x1");
  EXPECT_EQ(kern.rows[0][6], "_Z4gemmv");  // as recorded: the text renderers shorten it
  EXPECT_EQ(kern.rows[1][6], "(other kernels)");
  EXPECT_EQ(kern.rows[1][3], "4");
}

// Requests in a monitor run: per route over the intervals, means and the worst interval's p99;
// analyze shows the table only when there are requests.
TEST(MonitorReportsTest, RequestsAreSummedOverTheIntervals) {
  core::ChunkBuilder builder(core::testing::FakeApiName);
  for (int i = 0; i < 2; ++i) {
    core::IntervalFigures f;
    f.start_ns = kSecond * (10 + i);
    f.end_ns = f.start_ns + kSecond;
    core::RouteRequestFigures& chat = f.requests.emplace_back();
    chat.route = "chat";
    chat.requests = 2;
    chat.span.Add(0.002);
    chat.span.Add(0.004);
    chat.gpu.Add(0.001);
    chat.gpu.Add(0.001);
    chat.span_p99 = i == 0 ? 0.004 : 0.009;
    core::EncodeMonitorInterval(f, [&](std::string_view s) { return builder.InternString(s); }, builder.AddMonitorInterval());
  }
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok());
  const Timeline timeline = Timeline::Build(*trace);
  const Table t = MonitorRequestTable(timeline);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][0], "chat");
  EXPECT_EQ(t.rows[0][1], "4");
  EXPECT_EQ(t.rows[0][2], "3000000");  // mean span
  EXPECT_EQ(t.rows[0][3], "1000000");  // mean GPU time
  EXPECT_EQ(t.rows[0][6], "9000000");  // the worst interval's p99
  const Analysis analysis = Analyze(*trace, AnalyzeOptions());
  ASSERT_EQ(analysis.tables.size(), 3u);
  EXPECT_EQ(analysis.tables[2].name, "monitor_req_sum");
  EXPECT_TRUE(MonitorRequestTable(Timeline::Build(MonitorTrace(2, 1, {0, 0, 0, 0, 0, 1}))).rows.empty());
}

// What `cuscope analyze` prints for a monitor run: its figures, not empty record tables and a
// baseline of nothing.
TEST(MonitorReportsTest, AnalyzeShowsAMonitorRunByItsFigures) {
  const core::Trace trace = MonitorTrace(3, 300'000'000, {0, 0, 0, 0, 0, 1});
  const Analysis analysis = Analyze(trace, AnalyzeOptions());
  ASSERT_EQ(analysis.tables.size(), 2u);
  EXPECT_EQ(analysis.tables[0].name, "monitor_sum");
  EXPECT_EQ(analysis.tables[1].name, "monitor_kern_sum");
  const std::string text = RenderAnalysisText(analysis, "run.cuscope", 10);
  EXPECT_NE(text.find("a monitor run"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU utilization 0.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("monitor.gpu_idle"), std::string::npos) << text;
}

}  // namespace
}  // namespace cuscope::analysis
