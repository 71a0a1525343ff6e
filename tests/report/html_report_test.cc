#include "lib/report/html_report.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "lib/core/metric_sets.h"
#include "lib/report/report_data.h"
#include "tests/report/report_test_support.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::report {
namespace {

using ::cuscope::testing::SyntheticTrace;
using google::protobuf::Struct;
using google::protobuf::Value;
using testing::At;
using testing::EmbeddedData;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A launch-bound loop, and one kernel profiled with the roofline set: 2.4e9 FP32 operations over
// 1.2e9 DRAM bytes in 1 ms (2 FLOP/B, 2.4 TFLOP/s).
core::Trace RooflineTrace(SyntheticTrace& t) {
  t.AddDevice(testing::H200Device());
  testing::AddLaunchLoop(t, 50, 20, 4);
  t.ProfiledLaunch(testing::Config("_Z4gemmPfS_", 1024, 256), 2000, 100,
                   {{std::string(core::metric::kDuration), 1e6},
                    {std::string(core::metric::kFfma), 1e9},
                    {std::string(core::metric::kFadd), 2e8},
                    {std::string(core::metric::kFmul), 2e8},
                    {std::string(core::metric::kDramBytes), 1.2e9}});
  t.NvtxRange("step <1> & more", 0, 500);
  return t.Load();
}

TEST(HtmlEscapeTest, AllFiveCharacters) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">'&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlPageTest, DataCannotCloseItsScriptElement) {
  // Even JSON written by someone else with a raw '<' in a string stays inside its element.
  const std::string page = RenderHtmlPage(R"({"x":"</script><script>alert(1)</script>"})", "t <b>");
  EXPECT_EQ(Count(page, "<script"), 3u);  // the error handler, the data, the page's script
  EXPECT_EQ(Count(page, "</script>"), 3u);
  EXPECT_TRUE(absl::StrContains(page, R"({"x":"\u003c/script>\u003cscript>alert(1)\u003c/script>"})"));
  EXPECT_TRUE(absl::StrContains(page, "<title>t &lt;b&gt;</title>"));
  const Struct data = EmbeddedData(page);
  EXPECT_EQ(At(data, "x").string_value(), "</script><script>alert(1)</script>");
}

TEST(HtmlPageTest, SelfContained) {
  SyntheticTrace t;
  const core::Trace trace = RooflineTrace(t);
  const analysis::Timeline trace_timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(trace_timeline, analysis::AnalyzeOptions());
  const std::string page = RenderHtmlReport(trace_timeline, analysis, "run <1>.cuscope");
  EXPECT_TRUE(absl::StartsWith(page, "<!DOCTYPE html>"));
  // Nothing is fetched: no external script, style sheet, font or image.
  EXPECT_FALSE(absl::StrContains(page, "src=\"http"));
  EXPECT_FALSE(absl::StrContains(page, "href=\"http"));
  EXPECT_FALSE(absl::StrContains(page, "@import"));
  EXPECT_FALSE(absl::StrContains(page, "url("));
  EXPECT_FALSE(absl::StrContains(page, "<link"));
  // The error sink and the rendered marker the browser test reads.
  EXPECT_TRUE(absl::StrContains(page, "<div id=\"script-errors\" role=\"alert\"></div>"));
  EXPECT_TRUE(absl::StrContains(page, "document.body.dataset.rendered = window.cuscopeErrors.length ? 'error' : 'ok'"));
  EXPECT_TRUE(absl::StrContains(page, "<title>cuscope report: run &lt;1&gt;.cuscope</title>"));
}

TEST(ReportDataTest, TheNumbersOfTheAnalysis) {
  SyntheticTrace t;
  const core::Trace trace = RooflineTrace(t);
  const analysis::Timeline trace_timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(trace_timeline, analysis::AnalyzeOptions());
  const Struct data = EmbeddedData(RenderHtmlPage(BuildReportData(trace_timeline, analysis, "run.cuscope"), "t"));
  EXPECT_EQ(At(data, "trace").string_value(), "run.cuscope");

  const Struct& summary = At(data, "summary").struct_value();
  EXPECT_DOUBLE_EQ(At(summary, "span_ns").number_value(), static_cast<double>(analysis.summary.span_ns()));
  EXPECT_DOUBLE_EQ(At(summary, "kernels").number_value(), 50);
  const Struct& device = At(summary, "devices").list_value().values(0).struct_value();
  EXPECT_DOUBLE_EQ(At(device, "busy_share").number_value(), analysis.summary.devices(0).busy_share());

  const auto& findings = At(data, "findings").list_value();
  ASSERT_EQ(static_cast<size_t>(findings.values_size()), analysis.findings.size());
  for (int i = 0; i < findings.values_size(); ++i) {
    const Struct& f = findings.values(i).struct_value();
    // Kernel names short, as everywhere on the page.
    EXPECT_EQ(At(f, "headline").string_value(),
              core::RenameKernelNamesIn(analysis.findings[i].headline, core::KernelNameStyle::kBase));
    EXPECT_EQ(At(f, "rule_id").string_value(), analysis.findings[i].rule_id);
    EXPECT_DOUBLE_EQ(At(f, "recoverable_ns").number_value(), static_cast<double>(analysis.findings[i].recoverable_ns));
  }

  // The roofline point of the profiled kernel, and the loop's kernel as not measured.
  const Struct& roofline = At(data, "roofline").struct_value();
  ASSERT_EQ(At(roofline, "points").list_value().values_size(), 1);
  const Struct& point = At(roofline, "points").list_value().values(0).struct_value();
  EXPECT_EQ(At(point, "label").string_value(), "gemm [grid 1024 1 1, block 256 1 1]");
  EXPECT_DOUBLE_EQ(At(point, "intensity").number_value(), 2.0);
  EXPECT_DOUBLE_EQ(At(point, "flop_per_second").number_value(), 2.4e12);
  EXPECT_DOUBLE_EQ(At(point, "fp32_flop").number_value(), 2.4e9);
  EXPECT_DOUBLE_EQ(At(point, "dram_bytes").number_value(), 1.2e9);
  EXPECT_EQ(At(point, "precision").string_value(), "FP32");
  EXPECT_DOUBLE_EQ(At(point, "roof_pct").number_value(), 25.0);  // the DRAM roof at 2 FLOP/B: 9.6 TFLOP/s
  const auto& not_measured = At(roofline, "not_measured").list_value();
  ASSERT_EQ(not_measured.values_size(), 1);
  EXPECT_EQ(At(not_measured.values(0).struct_value(), "label").string_value(), "step");
  EXPECT_DOUBLE_EQ(At(not_measured.values(0).struct_value(), "count").number_value(), 50);
  const Struct& h200 = At(data, "devices").list_value().values(0).struct_value();
  EXPECT_DOUBLE_EQ(At(h200, "peak_fp32_flops").number_value(), 60e12);
  EXPECT_DOUBLE_EQ(At(h200, "peak_fp16_tensor_flops").number_value(), 960e12);
  EXPECT_DOUBLE_EQ(At(h200, "peak_dram_bytes_per_second").number_value(), 4.8e12);

  // Timeline: the stream, the thread's calls and its NVTX range; every slice drawn (few of them).
  const Struct& timeline = At(data, "timeline").struct_value();
  const auto& names = At(timeline, "names").list_value();
  bool nvtx_named = false;
  for (const Value& n : names.values()) nvtx_named = nvtx_named || n.string_value() == "step <1> & more";
  EXPECT_TRUE(nvtx_named);
  const auto& lanes = At(timeline, "lanes").list_value();
  ASSERT_EQ(lanes.values_size(), 3);
  const Struct& stream = lanes.values(0).struct_value();
  EXPECT_EQ(At(stream, "label").string_value(), "stream 7");
  EXPECT_EQ(At(stream, "group").string_value(), "GPU 0 · NVIDIA H200");
  EXPECT_DOUBLE_EQ(At(stream, "recorded").number_value(), 50);  // the replayed launch is not on the timeline
  const auto& slices = At(stream, "slices").list_value();
  ASSERT_EQ(slices.values_size(), 50 * 6);
  // First kernel: 21 us after the first call (the span's start), 4 us long, one slice of its own.
  EXPECT_DOUBLE_EQ(slices.values(0).number_value(), 21'000);
  EXPECT_DOUBLE_EQ(slices.values(1).number_value(), 4'000);
  EXPECT_EQ(names.values(static_cast<int>(slices.values(2).number_value())).string_value(), "step");
  EXPECT_DOUBLE_EQ(slices.values(3).number_value(), static_cast<double>(SliceCategory::kKernel));
  EXPECT_DOUBLE_EQ(slices.values(4).number_value(), 1);
  EXPECT_EQ(At(lanes.values(1).struct_value(), "label").string_value(), "CUDA calls");
  EXPECT_EQ(At(lanes.values(2).struct_value(), "label").string_value(), "NVTX");

  // Utilization: shares in [0, 1] whose mean over the span is the busy time over the span.
  const auto& busy =
      At(At(At(data, "utilization").struct_value(), "devices").list_value().values(0).struct_value(), "busy")
          .list_value();
  ASSERT_EQ(busy.values_size(), 1000);
  double sum = 0;
  for (const Value& v : busy.values()) {
    EXPECT_GE(v.number_value(), 0);
    EXPECT_LE(v.number_value(), 1);
    sum += v.number_value();
  }
  const double expected =
      static_cast<double>(analysis.summary.devices(0).busy_ns()) / static_cast<double>(analysis.summary.span_ns());
  EXPECT_NEAR(sum / 1000, expected, 0.002);

  // The baseline, the tables the analyzer made, and the kernel-metrics table.
  const auto& tables = At(data, "tables").list_value();
  ASSERT_EQ(static_cast<size_t>(tables.values_size()), analysis.tables.size() + 2);
  EXPECT_EQ(At(tables.values(0).struct_value(), "name").string_value(), "baseline");
  EXPECT_EQ(At(tables.values(1).struct_value(), "name").string_value(), "cuda_gpu_kern_sum");
  EXPECT_EQ(At(tables.values(tables.values_size() - 1).struct_value(), "name").string_value(), "kern_metrics");
}

// A one-run top-down with GPU counters: the page has the baseline, the utilization over time and
// the hot-kernel list with each kernel's verdict, ahead of the summary tables.
TEST(ReportDataTest, TopDownRunShowsBothHalves) {
  SyntheticTrace t;
  t.AddDevice(testing::H200Device());
  t.header().mutable_config()->set_top_down_kernels(1);
  const core::KernelConfig gemm = testing::Config("_Z4gemmPfS_", 264, 256);
  t.TimelineWindowOpens(0);
  for (int i = 0; i < 4; ++i) t.KernelWith(gemm, i * 250.0, 200);
  t.Counter(std::string(core::counter::kPmSmActivePct), v1::COUNTER_SOURCE_PM_SAMPLING, {{0, 1000, 80}});
  t.TimelineWindowCloses(1000, "duration");
  t.TopDown(1100, 800, {{gemm, 800, 4}});
  t.MetricsAfterWindow(gemm, 2000, 500,
                       {{std::string(core::metric::kDuration), 2e5},
                        {std::string(core::metric::kSmThroughputPct), 85},
                        {std::string(core::metric::kMemoryThroughputPct), 40},
                        {std::string(core::metric::kDramThroughputPct), 20},
                        {std::string(core::metric::kL2ThroughputPct), 30}});
  const core::Trace trace = t.Load();
  const analysis::Timeline trace_timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(trace_timeline, analysis::AnalyzeOptions());
  const Struct data = EmbeddedData(RenderHtmlPage(BuildReportData(trace_timeline, analysis, "run.cuscope"), "t"));
  const auto& tables = At(data, "tables").list_value();
  ASSERT_GE(tables.values_size(), 3);
  EXPECT_EQ(At(tables.values(0).struct_value(), "name").string_value(), "baseline");
  EXPECT_EQ(At(tables.values(1).struct_value(), "name").string_value(), "gpu_utilization_over_time");
  const Struct& top_down = tables.values(2).struct_value();
  EXPECT_EQ(At(top_down, "name").string_value(), "top_down");
  ASSERT_EQ(At(top_down, "rows").list_value().values_size(), 1);
  std::string row;
  for (const Value& cell : At(top_down, "rows").list_value().values(0).list_value().values()) {
    row += cell.string_value() + "|";
  }
  EXPECT_TRUE(absl::StrContains(row, "gemm")) << row;
  EXPECT_TRUE(absl::StrContains(row, "compute-bound")) << row;
}

// GPU time by call path: null without stacks, the tree with them.
TEST(ReportDataTest, CallPathsWithStacksOnly) {
  SyntheticTrace t;
  const uint64_t corr = t.Api("cudaLaunchKernel_v7000", 0, 5);
  t.Kernel("gemm", 10, 50, 7, corr);
  t.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, {"/opt/app/trainer", "main"}});
  const core::Trace trace = t.Load();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  const Struct data = EmbeddedData(RenderHtmlReport(timeline, analysis::Analyze(timeline, {}), "stacks"));
  const Struct& root = At(data, "call_paths").struct_value();
  EXPECT_EQ(At(root, "time_ns").number_value(), 50'000);
  const Struct& main_node = At(root, "children").list_value().values(0).struct_value();
  EXPECT_EQ(At(main_node, "name").string_value(), "main (trainer)");
  SyntheticTrace plain;
  plain.Launch("gemm", 0, 5, 10, 50);
  const core::Trace plain_trace = plain.Load();
  const analysis::Timeline plain_timeline = analysis::Timeline::Build(plain_trace);
  const Struct none = EmbeddedData(RenderHtmlReport(plain_timeline, analysis::Analyze(plain_timeline, {}), "plain"));
  EXPECT_EQ(At(none, "call_paths").kind_case(), Value::kNullValue);
}

TEST(ReportDataTest, EmptyTrace) {
  SyntheticTrace t;
  const core::Trace trace = t.Load();
  const analysis::Timeline trace_timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(trace_timeline, analysis::AnalyzeOptions());
  const Struct data = EmbeddedData(RenderHtmlReport(trace_timeline, analysis, "empty"));
  EXPECT_EQ(At(At(data, "timeline").struct_value(), "lanes").list_value().values_size(), 0);
  EXPECT_EQ(At(At(data, "utilization").struct_value(), "devices").list_value().values_size(), 0);
  EXPECT_EQ(At(At(data, "roofline").struct_value(), "points").list_value().values_size(), 0);
  EXPECT_EQ(At(data, "findings").list_value().values_size(), static_cast<int>(analysis.findings.size()));
}

TEST(DownsampleTest, ShortSlicesInOneBucketMerge) {
  // Bucket 100 ns: three 10-ns slices in bucket 0 (two named 1, one named 2 with more time), a
  // 150-ns slice kept, then one short slice alone in bucket 3.
  const std::vector<SliceInput> items = {{1000, 1010, 1, SliceCategory::kKernel},
                                         {1020, 1030, 1, SliceCategory::kKernel},
                                         {1040, 1065, 2, SliceCategory::kKernel},
                                         {1070, 1220, 3, SliceCategory::kMemset},
                                         {1330, 1340, 4, SliceCategory::kKernel}};
  const std::vector<Slice> out = DownsampleLane(items, 1000, 100);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].start, 0u);
  EXPECT_EQ(out[0].duration, 65u);
  EXPECT_EQ(out[0].count, 3u);
  EXPECT_EQ(out[0].busy_ns, 45u);
  EXPECT_EQ(out[0].name, 2u);  // the name with the most time (25 ns against 20)
  EXPECT_EQ(out[1].start, 70u);
  EXPECT_EQ(out[1].duration, 150u);
  EXPECT_EQ(out[1].count, 1u);
  EXPECT_EQ(out[1].category, SliceCategory::kMemset);
  EXPECT_EQ(out[2].start, 330u);
  EXPECT_EQ(out[2].count, 1u);
  EXPECT_EQ(out[2].busy_ns, 10u);
}

TEST(ReportDataTest, BigLanesAreMergedWithinTheBudget) {
  SyntheticTrace t;
  t.AddDevice(testing::H200Device());
  testing::AddLaunchLoop(t, 20000, 5, 2);  // 20,000 kernels and 20,000 calls
  const core::Trace trace = t.Load();
  const analysis::Timeline trace_timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(trace_timeline, analysis::AnalyzeOptions());
  ReportDataOptions options;
  options.max_slices = 2000;
  options.min_buckets_per_lane = 64;
  const Struct data = EmbeddedData(RenderHtmlPage(BuildReportData(trace_timeline, analysis, "big", options), "t"));
  const Struct& timeline = At(data, "timeline").struct_value();
  EXPECT_DOUBLE_EQ(At(timeline, "recorded_slices").number_value(), 40001);
  EXPECT_LE(At(timeline, "drawn_slices").number_value(), 2 * 2000);
  EXPECT_DOUBLE_EQ(At(timeline, "merged_lanes").number_value(), 2);
  // Every kernel is accounted for in the merged slices' counts and busy time.
  const auto& slices = At(At(timeline, "lanes").list_value().values(0).struct_value(), "slices").list_value();
  double count = 0, busy = 0;
  for (int i = 0; i < slices.values_size(); i += 6) {
    count += slices.values(i + 4).number_value();
    busy += slices.values(i + 5).number_value();
  }
  EXPECT_DOUBLE_EQ(count, 20000);
  EXPECT_DOUBLE_EQ(busy, 20000 * 2000.0);
}

}  // namespace
}  // namespace cuscope::report
