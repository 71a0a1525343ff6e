// Every trace recorded on the H200 (traces/) and every fuzzing seed (tests/fuzz/corpus, cut and
// damaged files among them) exports to a file that reads back without a single mispaired slice.
#include <dirent.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/core/trace.h"
#include "lib/export/exporter.h"
#include "tests/export/export_test_trace.h"
#include "tests/export/perfetto_decode.h"

namespace cuscope::exporter::testing {
namespace {

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != ".." && absl::EndsWith(name, suffix)) out.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> RealTraces() {
  std::vector<std::string> all = FilesIn(CUSCOPE_TRACES_DIR, ".cuscope");
  for (const std::string& f : FilesIn(std::string(CUSCOPE_TRACES_DIR) + "/h200_examples", ".cuscope")) {
    all.push_back(f);
  }
  return all;
}

TEST(RealTracesTest, PerfettoReadsBackCleanly) {
  const std::vector<std::string> traces = RealTraces();
  ASSERT_GE(traces.size(), 10u);
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
    ASSERT_TRUE(trace.ok()) << trace.status();
    const std::string out = TempPath(".pftrace");
    absl::StatusOr<ExportSummary> summary = ExportToFile(path, out, ExportOptions());
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->kernels, trace->kernels.size());
    EXPECT_EQ(summary->api_calls, trace->api_calls.size());
    EXPECT_EQ(summary->memcpys + summary->memsets, trace->memcpys.size() + trace->memsets.size());
    EXPECT_EQ(summary->dropped_slices, 0u);
    EXPECT_GT(summary->flows, 0u);
    const DecodedTrace d = DecodePerfetto(ReadFile(out));
    std::remove(out.c_str());
    for (const std::string& e : d.errors) ADD_FAILURE() << e;
    // Every exported slice came back: kernels, copies, calls, ranges, overheads, windows, findings.
    EXPECT_EQ(d.slices.size(), summary->kernels + summary->memcpys + summary->memsets + summary->api_calls +
                                   summary->nvtx_ranges + summary->overheads + summary->windows +
                                   summary->finding_spans);
  }
}

TEST(RealTracesTest, ChromeJsonParsesAndNests) {
  for (const std::string& path : RealTraces()) {
    SCOPED_TRACE(path);
    // Protobuf's JSON parser takes seconds for the 13 MB exports of the 20,000-launch traces; their
    // slices nest by the same lane allocator the Perfetto test above checks.
    if (ReadFile(path).size() > 200'000) continue;
    const std::string out = TempPath(".json");
    ExportOptions options;
    options.format = ExportFormat::kChromeJson;
    absl::StatusOr<ExportSummary> summary = ExportToFile(path, out, options);
    ASSERT_TRUE(summary.ok()) << summary.status();
    google::protobuf::Struct root;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(out), &root).ok());
    std::remove(out.c_str());
    // Complete events of one thread nest: sort by start (longer first) and keep a stack of ends.
    std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> by_thread;
    size_t complete = 0;
    for (const auto& v : root.fields().at("traceEvents").list_value().values()) {
      const auto& f = v.struct_value().fields();
      if (f.at("ph").string_value() != "X") continue;
      ++complete;
      // Integer nanoseconds, as the viewer rounds them.
      const double ts = std::llround(f.at("ts").number_value() * 1000),
                   dur = std::llround(f.at("dur").number_value() * 1000);
      by_thread[{f.at("pid").number_value(), f.at("tid").number_value()}].push_back({ts, -(ts + dur)});
    }
    for (auto& [thread, spans] : by_thread) {
      std::sort(spans.begin(), spans.end());
      std::vector<double> ends;
      for (const auto& [start, neg_end] : spans) {
        while (!ends.empty() && ends.back() <= start) ends.pop_back();
        EXPECT_TRUE(ends.empty() || -neg_end <= ends.back()) << thread.first << "/" << thread.second << " at " << start;
        ends.push_back(-neg_end);
      }
    }
    EXPECT_EQ(complete, summary->kernels + summary->memcpys + summary->memsets + summary->api_calls +
                            summary->nvtx_ranges + summary->overheads + summary->windows + summary->finding_spans);
  }
}

// The H200 trace whose kernels CUPTI gave one correlation id (3): the export places them as the
// analyzer does, on the timeline, not as replays of the metric rows that share the id.
TEST(RealTracesTest, KernelsOfAStuckCorrelationIdAreNotDrawnAsReplays) {
  const std::string path = std::string(CUSCOPE_TRACES_DIR) + "/h200_torch_top_down_stuck_correlation.cuscope";
  const std::string out = TempPath(".json");
  ExportOptions options;
  options.format = ExportFormat::kChromeJson;
  options.findings = false;
  absl::StatusOr<ExportSummary> summary = ExportToFile(path, out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(out), &root).ok());
  std::remove(out.c_str());
  size_t kernels = 0, replays = 0;
  for (const auto& v : root.fields().at("traceEvents").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if (f.at("ph").string_value() != "X" || !f.count("cat")) continue;
    kernels += f.at("cat").string_value() == "kernel";
    replays += f.at("cat").string_value() == "replayed_kernel";
  }
  EXPECT_EQ(replays, 0u);
  EXPECT_EQ(kernels, summary->kernels);
  EXPECT_GT(kernels, 10'000u);
}

TEST(RealTracesTest, FuzzSeedsExportOrFailCleanly) {
  const std::vector<std::string> seeds = FilesIn(CUSCOPE_FUZZ_CORPUS_DIR, "");
  ASSERT_GE(seeds.size(), 5u);
  for (const std::string& path : seeds) {
    SCOPED_TRACE(path);
    for (ExportFormat format : {ExportFormat::kPerfetto, ExportFormat::kChromeJson}) {
      ExportOptions options;
      options.format = format;
      const std::string out = TempPath(format == ExportFormat::kPerfetto ? ".pftrace" : ".json");
      absl::StatusOr<ExportSummary> summary = ExportToFile(path, out, options);
      if (!summary.ok()) {
        // Only a file that is no trace at all is refused.
        EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
        continue;
      }
      if (format == ExportFormat::kPerfetto) {
        const DecodedTrace d = DecodePerfetto(ReadFile(out));
        for (const std::string& e : d.errors) ADD_FAILURE() << e;
      } else {
        google::protobuf::Struct root;
        EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(out), &root).ok());
      }
    }
  }
}

}  // namespace
}  // namespace cuscope::exporter::testing
