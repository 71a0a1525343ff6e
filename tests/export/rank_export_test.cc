// Several rank traces exported into one timeline: a process (and GPU group) per rank, named after
// it, on one clock; tracks, flows and names of one trace never mix with another's.
#include "lib/export/rank_export.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/export/export_test_trace.h"

// A namespace of its own: other files of this test program have helpers of the same names
// (Value), and CI compiles them together (CUSCOPE_UNITY_TESTS).
namespace cuscope::exporter::testing::rank_export_test {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using ::testing::HasSubstr;

// Rank `rank`'s trace: one launch and its kernel at 10 us (its CUPTI clock `shift_ns` ahead of the
// wall clock, which its clock reference says).
std::string RankTrace(int rank, uint64_t shift_ns, const char* kernel) {
  TestTrace t;
  v1::Session* s = t.header().mutable_session();
  s->set_rank(rank);
  s->set_world_size(2);
  s->set_launcher("torchrun");
  s->set_pid(kPid);  // the same pid on both: two hosts
  s->set_clock_ref_cupti_ns(kT0 + shift_ns);
  s->set_clock_ref_realtime_ns(kT0);
  t.Api("cudaLaunchKernel_v7000", shift_ns + 1'000, shift_ns + 3'000, 1);
  t.Kernel(kernel, shift_ns + 10'000, shift_ns + 20'000, 7, 1);
  t.EndChunk();
  return t.Write();
}

TEST(RankExportTest, OneProcessPerRankOnOneClock) {
  const std::vector<std::string> paths = {RankTrace(0, 0, "kernel_a(float*)"),
                                          RankTrace(1, 5'000'000'000ull, "kernel_b(float*)")};
  const std::string out = TempPath(".json");
  ExportOptions options;
  options.format = ExportFormat::kChromeJson;
  options.findings = false;
  auto summary = ExportRanksToFile(paths, out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->kernels, 2u);
  Struct root;
  const std::string text = ReadFile(out);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok());
  std::map<std::string, double> kernel_ts;
  std::map<double, std::string> process_names;
  for (const Value& e : root.fields().at("traceEvents").list_value().values()) {
    const Struct& ev = e.struct_value();
    const std::string ph = ev.fields().at("ph").string_value();
    const std::string name = ev.fields().count("name") ? ev.fields().at("name").string_value() : "";
    if (ph == "X" && name.rfind("kernel_", 0) == 0) kernel_ts[name] = ev.fields().at("ts").number_value();
    if (ph == "M" && name == "process_name") {
      process_names[ev.fields().at("pid").number_value()] =
          ev.fields().at("args").struct_value().fields().at("name").string_value();
    }
  }
  ASSERT_EQ(kernel_ts.size(), 2u);
  EXPECT_EQ(kernel_ts["kernel_a"], kernel_ts["kernel_b"]) << "5 s apart on their CUPTI clocks, together on the wall";
  std::string names;
  for (const auto& [pid, name] : process_names) names += name + "\n";
  EXPECT_THAT(names, HasSubstr("rank 0 \xc2\xb7 GPU 0"));
  EXPECT_THAT(names, HasSubstr("rank 1 \xc2\xb7 GPU 0"));
  // Both host processes have one pid: the second gets a pid of its own, so they do not merge.
  size_t host_processes = 0;
  for (const auto& [pid, name] : process_names) host_processes += name.find("\xc2\xb7 app") != std::string::npos;
  EXPECT_EQ(host_processes, 2u) << names;
  EXPECT_EQ(process_names.count(kPid), 1u);
}

TEST(RankExportTest, PerfettoTooAndAnUnreadableTraceFailsNamingIt) {
  const std::vector<std::string> paths = {RankTrace(0, 0, "kernel_a(float*)"), RankTrace(1, 0, "kernel_b(float*)")};
  const std::string out = TempPath(".pftrace");
  ExportOptions options;
  auto summary = ExportRanksToFile(paths, out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_GT(summary->bytes_written, 0u);
  auto bad = ExportRanksToFile({paths[0], "/nonexistent/rank_1.cuscope"}, TempPath(".pftrace"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("/nonexistent/rank_1.cuscope"));
}

}  // namespace
}  // namespace cuscope::exporter::testing::rank_export_test
