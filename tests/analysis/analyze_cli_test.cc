// `cuscope analyze` and `cuscope stats` end to end on trace files written with the real writer.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cuscope/v1/report.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "tests/cli/capture_command.h"
#include "lib/core/counter_names.h"
#include "lib/core/json.h"
#include "lib/core/metric_sets.h"
#include "lib/core/trace_writer.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::cli {
namespace {

using cuscope::testing::SyntheticTrace;

using test_support::Capture;
using test_support::Outcome;

// A program that syncs after each of its many short steps.
std::string SickTrace() {
  SyntheticTrace s;
  for (int i = 0; i < 200; ++i) {
    const double t0 = i * 100.0;
    s.Launch("tiny_kernel", t0, 3, t0 + 5, 5);
    s.Api("cudaDeviceSynchronize_v3020", t0 + 4, 40);
  }
  return s.Write();
}

// A program whose two kernels were profiled: a GEMM (compute-bound, reading ~95% through L1 with
// DRAM at 20%, low occupancy from 128 registers per thread) and an elementwise kernel (memory-bound,
// without the roofline set).
std::string ProfiledTrace() {
  namespace metric = core::metric;
  using cuscope::testing::Config;
  SyntheticTrace s;
  s.AddDevice(cuscope::testing::H200Device());
  const core::KernelConfig gemm = Config("gemm_kernel", 264, 256, 128);
  const core::KernelConfig relu = Config("relu_kernel", 1024, 256, 32);
  for (int i = 0; i < 10; ++i) {
    s.KernelWith(gemm, i * 1300.0, 1000);
    s.KernelWith(relu, i * 1300.0 + 1050, 200);
  }
  auto m = [](std::string_view name, double value) { return std::make_pair(std::string(name), value); };
  s.ProfiledLaunch(gemm, 20000, 250000,
                   {m(metric::kDuration, 1e6), m(metric::kSmThroughputPct, 72), m(metric::kMemoryThroughputPct, 95),
                    m(metric::kDramThroughputPct, 20), m(metric::kL2ThroughputPct, 41),
                    m(metric::kL1ThroughputPct, 95), m(metric::kAchievedOccupancyPct, 24),
                    m(metric::kWarpCyclesPerIssue, 10), m(metric::StallMetric("math_pipe_throttle"), 4),
                    m(metric::StallMetric("long_scoreboard"), 2), m(metric::StallMetric("selected"), 1),
                    m(metric::kFfma, 2.5e10), m(metric::kDramBytes, 2e8)});
  s.ProfiledLaunch(relu, 300000, 250000,
                   {m(metric::kDuration, 2e5), m(metric::kSmThroughputPct, 15), m(metric::kMemoryThroughputPct, 88),
                    m(metric::kDramThroughputPct, 86), m(metric::kL2ThroughputPct, 60),
                    m(metric::kL1ThroughputPct, 30), m(metric::kAchievedOccupancyPct, 70),
                    m(metric::kWarpCyclesPerIssue, 40), m(metric::StallMetric("long_scoreboard"), 30),
                    m(metric::StallMetric("selected"), 1)});
  return s.Write();
}

std::string HealthyTrace() {
  SyntheticTrace s;
  for (int i = 0; i < 50; ++i) s.Launch(i % 2 ? "gemm_a" : "gemm_b", i * 1000.0 - 500, 4, i * 1000.0, 999);
  return s.Write();
}

TEST(AnalyzeCommand, RanksFindingsThenTables) {
  const Outcome r = Capture(RunAnalyze, {SickTrace()});
  EXPECT_EQ(r.code, 0);
  const size_t first = r.out.find("1. [error] ");
  EXPECT_NE(r.out.find("] gpu.idle: GPU 0 idle 95.0%"), std::string::npos) << r.out;
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sync.points"), std::string::npos);
  EXPECT_NE(r.out.find("advice: "), std::string::npos);
  const size_t table = r.out.find("CUDA GPU kernel summary (cuda_gpu_kern_sum)");
  EXPECT_NE(table, std::string::npos);
  EXPECT_LT(first, table);
  EXPECT_EQ(r.out.find("Nothing wrong found"), std::string::npos);
}

TEST(AnalyzeCommand, HealthyProgramGetsAShortVerdictWithFigures) {
  const Outcome r = Capture(RunAnalyze, {HealthyTrace()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Nothing wrong found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 0: busy 99.9%"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[warning]"), std::string::npos);
  EXPECT_EQ(r.out.find("[error]"), std::string::npos);
}

TEST(AnalyzeCommand, FailOnSetsTheExitCode) {
  const std::string sick = SickTrace();
  EXPECT_EQ(Capture(RunAnalyze, {sick, "--fail-on", "warning"}).code, 1);
  EXPECT_EQ(Capture(RunAnalyze, {HealthyTrace(), "--fail-on", "warning"}).code, 0);
  EXPECT_EQ(Capture(RunAnalyze, {sick, "--fail-on", "fatal"}).code, 2);
}

TEST(AnalyzeCommand, ThresholdOverridesChangeTheVerdict) {
  const std::string sick = SickTrace();
  const Outcome relaxed = Capture(RunAnalyze, {sick, "--threshold", "gpu_busy_min_share=0.01", "--threshold",
                                           "sync_min_calls=1000", "--threshold", "launch_min_kernels=1000"});
  EXPECT_EQ(relaxed.code, 0);
  EXPECT_EQ(relaxed.out.find("gpu.idle"), std::string::npos) << relaxed.out;
  EXPECT_EQ(relaxed.out.find("sync.points"), std::string::npos);
  const Outcome bad = Capture(RunAnalyze, {sick, "--threshold", "bogus=1"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("cuscope: unknown threshold 'bogus'"), std::string::npos) << bad.err;
}

TEST(AnalyzeCommand, JsonFollowsTheReportSchema) {
  const Outcome r = Capture(RunAnalyze, {SickTrace(), "--format", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"format_version\": 2"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\"rule_id\": \"gpu.idle\""), std::string::npos);
  EXPECT_NE(r.out.find("\"severity\": \"SEVERITY_ERROR\""), std::string::npos);
  EXPECT_NE(r.out.find("\"recoverable_ns\""), std::string::npos);
  // Typed: the baseline table's numeric cells are numbers, its text cells strings, and protobuf's
  // own JSON parser still reads the whole document as a Report.
  const core::Json json = core::Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out.substr(0, 400);
  bool baseline = false;
  for (const core::Json& table : json["tables"]) {
    if (table["name"] != "baseline") continue;
    baseline = true;
    const core::Json& cells = table["rows"][0]["cells"];
    EXPECT_TRUE(cells[0].is_string()) << cells.dump();
    for (size_t c = 1; c < cells.size(); ++c) EXPECT_TRUE(cells[c].is_number()) << cells.dump();
  }
  EXPECT_TRUE(baseline);
  EXPECT_TRUE(json["summary"]["span_ns"].is_number_integer()) << json["summary"].dump();
  v1::Report report;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
  EXPECT_EQ(report.format_version(), 2u);
}

// Several traces: the ranks of one job, analyzed together. Two ranks, rank 1 with 3 ms more compute
// before each all-reduce: the user's path through the command.
std::string RankTrace(int rank, double extra_compute_us) {
  SyntheticTrace s;
  s.header().mutable_session()->set_rank(rank);
  s.header().mutable_session()->set_world_size(2);
  s.header().mutable_session()->set_launcher("torchrun");
  for (int step = 0; step < 10; ++step) {
    const double t0 = step * 10'000.0;
    s.NvtxRange("train_step", t0, t0 + 9'900);
    const double compute = 5'000 + extra_compute_us;
    s.Launch("gemm", t0 + 10, 5, t0 + 100, compute);
    const double arrival = t0 + 100 + compute;
    const uint64_t corr = s.Api("cuLaunchKernelEx", arrival - 30, 5);
    s.Kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", arrival, t0 + 100 + 8'000 + 500 - arrival, 9, corr);
  }
  return s.Write();
}

TEST(AnalyzeCommand, SeveralTracesAreTheRanksOfAJob) {
  const Outcome r = Capture(RunAnalyze, {RankTrace(0, 0), RankTrace(1, 3'000), "-j", "1", "--fail-on", "warning"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("cuscope analyze: 2 rank traces (torchrun); 10 collectives matched on every rank, 10 "
                       "'train_step' steps on every rank"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ranks.straggler: rank 1 is the straggler"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ranks.step_imbalance: steps imbalanced: rank 1 is the slowest"), std::string::npos);
  const Outcome json = Capture(RunAnalyze, {RankTrace(0, 0), RankTrace(1, 3'000), "--format", "json"});
  EXPECT_NE(json.out.find("\"rule_id\": \"ranks.straggler\""), std::string::npos);
  const Outcome step = Capture(RunAnalyze, {RankTrace(0, 0), RankTrace(1, 0), "--step", "no_such_range"});
  EXPECT_EQ(step.code, 0);
  EXPECT_EQ(step.out.find("steps on every rank"), std::string::npos) << "a step range no rank has";
  EXPECT_EQ(Capture(RunAnalyze, {RankTrace(0, 0), RankTrace(1, 0), "-j", "0"}).code, 2);
}

TEST(AnalyzeCommand, NotATraceIsOneErrorLineAndExitTwo) {
  const std::string path = cuscope::testing::TempTracePath();
  std::ofstream(path) << "hello, I am a text file\n";
  const Outcome r = Capture(RunAnalyze, {path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("cuscope: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(Capture(RunAnalyze, {"/nonexistent/trace.cuscope"}).code, 2);
  EXPECT_EQ(Capture(RunAnalyze, {}).code, 2);
}

TEST(AnalyzeCommand, NewerFormatVersionIsRefused) {
  // The writer always stamps the current version, so the file is framed by hand: the magic, then
  // one varint-length-prefixed Block holding a header from the future.
  v1::Block block;
  block.mutable_header()->set_format_version(99);
  const std::string payload = block.SerializeAsString();
  ASSERT_LT(payload.size(), 128u);
  const std::string path = cuscope::testing::TempTracePath();
  std::ofstream(path, std::ios::binary) << "CUSCOPE\n" << static_cast<char>(payload.size()) << payload;
  const Outcome r = Capture(RunAnalyze, {path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("newer"), std::string::npos) << r.err;
}

TEST(AnalyzeCommand, DroppedRecordsAreReportedWithTheMissingShare) {
  SyntheticTrace s;
  for (int i = 0; i < 30; ++i) s.Launch("k", i * 100.0, 3, i * 100.0 + 5, 10);
  const std::string path = cuscope::testing::TempTracePath();
  {
    auto writer = core::TraceWriter::Create(path, true);
    ASSERT_TRUE(writer.ok());
    v1::Header header;
    header.mutable_config()->set_buffer_pool_cap_bytes(64ull << 20);
    ASSERT_TRUE((*writer)->WriteHeader(header).ok());
    v1::Chunk chunk;
    s.builder().TakeChunk(&chunk);
    chunk.mutable_stats()->set_records_written(60);
    chunk.mutable_stats()->set_records_dropped_by_cupti(20);
    chunk.mutable_stats()->set_buffers_refused_at_cap(3);
    ASSERT_TRUE((*writer)->WriteChunk(chunk).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const Outcome r = Capture(RunAnalyze, {path});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("20 records were dropped during capture, 25.0% of all recorded activity (3 buffer requests "
                       "refused at the 64 MiB memory cap)"),
            std::string::npos)
      << r.out;
}

TEST(AnalyzeCommand, WorkStillRunningAtTheEndIsReported) {
  SyntheticTrace s;
  for (int i = 0; i < 30; ++i) s.Launch("k", i * 100.0, 3, i * 100.0 + 5, 10);
  const std::string path = cuscope::testing::TempTracePath();
  {
    auto writer = core::TraceWriter::Create(path, true);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->WriteHeader(v1::Header()).ok());
    v1::Chunk chunk;
    s.builder().TakeChunk(&chunk);
    chunk.mutable_stats()->set_records_written(60);
    chunk.mutable_stats()->set_records_incomplete(988);
    ASSERT_TRUE((*writer)->WriteChunk(chunk).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const Outcome r = Capture(RunAnalyze, {path});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("988 operations were still running when the capture ended"), std::string::npos) << r.out;
  const Outcome healthy = Capture(RunAnalyze, {HealthyTrace()});
  EXPECT_EQ(healthy.out.find("still running"), std::string::npos) << healthy.out;
}

TEST(AnalyzeCommand, NoDropsNoDropWarning) {
  const Outcome r = Capture(RunAnalyze, {HealthyTrace()});
  EXPECT_EQ(r.out.find("dropped during capture"), std::string::npos) << r.out;
}

TEST(AnalyzeCommand, TruncatedTraceIsAnalyzedWithAWarning) {
  // Two chunks; the second is cut in the middle.
  SyntheticTrace s;
  for (int i = 0; i < 50; ++i) s.Launch("k", i * 100.0, 3, i * 100.0 + 5, 10);
  const std::string path = cuscope::testing::TempTracePath();
  {
    auto writer = core::TraceWriter::Create(path, true);
    ASSERT_TRUE(writer.ok());
    v1::Header header;
    header.set_format_version(1);
    ASSERT_TRUE((*writer)->WriteHeader(header).ok());
    v1::Chunk chunk;
    s.builder().TakeChunk(&chunk);
    ASSERT_TRUE((*writer)->WriteChunk(chunk).ok());
    for (int i = 50; i < 100; ++i) s.Launch("k", i * 100.0, 3, i * 100.0 + 5, 10);
    s.builder().TakeChunk(&chunk);
    ASSERT_TRUE((*writer)->WriteChunk(chunk).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 40);
  const Outcome r = Capture(RunAnalyze, {path});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("warning: the trace is cut"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("records, 50 kernels"), std::string::npos) << r.out.substr(0, 300);
}

TEST(StatsCommand, ReportsInTextCsvAndJson) {
  const std::string trace = HealthyTrace();
  const Outcome text = Capture(RunStats, {"--report", "cuda_gpu_kern_sum,cuda_api_sum", trace});
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("(cuda_gpu_kern_sum)"), std::string::npos);
  EXPECT_NE(text.out.find("(cuda_api_sum)"), std::string::npos);
  EXPECT_NE(text.out.find("gemm_a"), std::string::npos);
  const Outcome csv = Capture(RunStats, {"--report", "cuda_gpu_kern_sum", "--format", "csv", trace});
  EXPECT_EQ(csv.out.rfind("Time (%),Total Time (ns),Instances", 0), 0u) << csv.out;
  const Outcome json = Capture(RunStats, {"--format", "json", "--report", "cuda_kern_exec_sum", trace});
  EXPECT_EQ(json.out.rfind("[{\"report\":\"cuda_kern_exec_sum\"", 0), 0u) << json.out;
}

// -o PREFIX: a file per report (PREFIX_REPORT.csv), as nsys stats writes them, each one table that
// pandas.read_csv reads; an existing file is refused without -f.
TEST(StatsCommand, OutputPrefixWritesAFilePerReport) {
  const std::string trace = HealthyTrace();
  const std::string prefix = trace + "_stats";
  const Outcome r = Capture(RunStats, {"--report=cuda_gpu_kern_sum,cuda_api_sum", "--format=csv", "-o", prefix, trace});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_api_sum"}) {
    const std::string file = absl::StrCat(prefix, "_", report, ".csv");
    EXPECT_NE(r.out.find(file), std::string::npos) << r.out;
    std::ifstream in(file);
    std::string first;
    ASSERT_TRUE(std::getline(in, first)) << file;
    EXPECT_EQ(first.rfind("Time (%),Total Time (ns),", 0), 0u) << first;  // no "# name" line
  }
  const Outcome again = Capture(RunStats, {"--report=cuda_api_sum", "--format=csv", "-o", prefix, trace});
  EXPECT_NE(again.code, 0);
  EXPECT_NE(again.err.find("-f/--force-overwrite"), std::string::npos) << again.err;
  EXPECT_EQ(Capture(RunStats, {"--report=cuda_api_sum", "--format=csv", "-o", prefix, "-f", trace}).code, 0);
  const std::string api = absl::StrCat(prefix, "_cuda_api_sum.csv");
  std::ifstream in(api);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  EXPECT_NE(header.find("Num Calls"), std::string::npos) << header;  // nsys's name in this report
}

// --timeunit as nsys stats: every time column in that unit, exactly, the counts untouched; a unit
// nsys does not know is refused.
TEST(StatsCommand, TimeUnitConvertsEveryTimeColumnExactly) {
  const std::string trace = HealthyTrace();
  const Outcome ns = Capture(RunStats, {"--report=cuda_gpu_kern_sum", "--format=csv", trace});
  const Outcome us = Capture(RunStats, {"--report=cuda_gpu_kern_sum", "--format=csv", "--timeunit=usec", trace});
  ASSERT_EQ(us.code, 0) << us.err;
  EXPECT_EQ(us.out.rfind("Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name", 0),
            0u)
      << us.out;
  // The first row's total: the same digits, the point moved three places.
  const auto field = [](const std::string& csv, int column) {
    const std::string row = csv.substr(csv.find('\n') + 1);
    size_t from = 0;
    for (int i = 0; i < column; ++i) from = row.find(',', from) + 1;
    return row.substr(from, row.find(',', from) - from);
  };
  std::string total_ns = field(ns.out, 1);
  std::string total_us = field(us.out, 1);
  ASSERT_FALSE(total_ns.empty());
  std::string digits = total_us;
  digits.erase(digits.find('.'), 1);
  EXPECT_EQ(digits.substr(digits.find_first_not_of('0')), total_ns) << total_us << " vs " << total_ns;
  EXPECT_EQ(field(us.out, 2), field(ns.out, 2));  // instances: not a time
  const Outcome sec = Capture(RunStats, {"--report", "cuda_api_sum", "--timeunit", "sec", trace});
  EXPECT_NE(sec.out.find("Total Time (s)"), std::string::npos) << sec.out;
  const Outcome bad = Capture(RunStats, {"--timeunit", "hours", trace});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--timeunit takes nsec, usec, msec or sec, not 'hours'"), std::string::npos) << bad.err;
}

// --by names the grouping of GPU time; without stacks, all reports leave the launch-site table out.
TEST(StatsCommand, ByKernelStackOrNvtx) {
  const std::string trace = HealthyTrace();
  const Outcome kernel = Capture(RunStats, {"--by", "kernel", trace});
  EXPECT_EQ(kernel.code, 0);
  EXPECT_NE(kernel.out.find("(cuda_gpu_kern_sum)"), std::string::npos) << kernel.out;
  EXPECT_EQ(kernel.out.find("(cuda_api_sum)"), std::string::npos) << "only the one asked for";
  const Outcome stack = Capture(RunStats, {"--by", "stack", trace});
  EXPECT_EQ(stack.code, 0);
  EXPECT_NE(stack.out.find("(cuda_kern_stack_sum)"), std::string::npos) << stack.out;
  EXPECT_NE(Capture(RunStats, {"--by", "nvtx", trace}).out.find("(nvtx_gpu_proj_sum)"), std::string::npos);
  const Outcome bad = Capture(RunStats, {"--by", "thread", trace});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--by takes kernel, stack or nvtx, not 'thread'"), std::string::npos) << bad.err;
  const Outcome all = Capture(RunStats, {trace});
  EXPECT_EQ(all.out.find("(cuda_kern_stack_sum)"), std::string::npos) << "no stacks in this trace";
}

TEST(StatsCommand, UnknownReportIsAClearErrorExitTwo) {
  const Outcome r = Capture(RunStats, {"--report", "cuda_gpu_kern_sum,gpu_magic", HealthyTrace()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown report 'gpu_magic'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda_kern_exec_sum"), std::string::npos);
  EXPECT_EQ(r.out, "");
}

TEST(AnalyzeCommand, KernelInternalsSectionFollowsTheHotKernelList) {
  const Outcome r = Capture(RunAnalyze, {ProfiledTrace()});
  EXPECT_EQ(r.code, 0);
  const size_t hot = r.out.find("] hot.kernels: ");
  const size_t section = r.out.find("Kernel internals: 2 profiled kernels, 2 launches profiled; they take 100.0% of "
                                    "GPU kernel time (83.3% compute-bound, 16.7% memory-bound):");
  const size_t tables = r.out.find("CUDA GPU kernel summary (cuda_gpu_kern_sum)");
  ASSERT_NE(hot, std::string::npos) << r.out;
  ASSERT_NE(section, std::string::npos) << r.out;
  ASSERT_NE(tables, std::string::npos) << r.out;
  EXPECT_LT(hot, section);
  EXPECT_LT(section, tables);
  EXPECT_NE(r.out.find("  1. gemm_kernel [grid 264 1 1, block 256 1 1]: compute-bound (11.000 ms, 83.3% of kernel "
                       "time, 1 launch profiled)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("     occupancy: achieved occupancy 24.0% (theoretical 25.0%, limited by registers): low, but "
                       "the kernel reaches the compute roof"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  2. relu_kernel [grid 1024 1 1, block 256 1 1]: memory-bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     stalls: top stall long_scoreboard: 75.0% of the 40.0 cycles"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning: metric collection took 500.000 ms (2 replay windows and the launch calls"),
            std::string::npos)
      << r.out;
  // Each profiled kernel is a finding too, with its counters listed.
  EXPECT_NE(r.out.find("] kernel.internals: gemm_kernel [grid 264 1 1, block 256 1 1]: compute-bound: SM "
                       "throughput 72.0% of peak"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sm__throughput.avg.pct_of_peak_sustained_elapsed=72.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 0: busy 100.0% of its active 12.950 ms (950.0 us of kernels replayed for metrics counted busy) (20 kernels, 12.000 ms kernel time)"),
            std::string::npos)
      << r.out;
  // The replayed launches and their 250 ms windows are not idle GPU time.
  EXPECT_EQ(r.out.find("gpu.idle"), std::string::npos) << r.out;
}

TEST(AnalyzeCommand, NoMetricsNoKernelInternalsSection) {
  const Outcome r = Capture(RunAnalyze, {HealthyTrace()});
  EXPECT_EQ(r.out.find("Kernel internals"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("metric collection"), std::string::npos) << r.out;
}

TEST(AnalyzeCommand, JsonCarriesTheKernelVerdicts) {
  const Outcome r = Capture(RunAnalyze, {ProfiledTrace(), "--format", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"kernel_verdicts\": ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"bottleneck\": \"BOTTLENECK_COMPUTE\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"bottleneck\": \"BOTTLENECK_MEMORY\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"limiter\": \"OCCUPANCY_LIMITER_REGISTERS\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"top_stall\": \"math_pipe_throttle\""), std::string::npos) << r.out;
  // 64-bit integers are numbers, not protobuf's strings.
  EXPECT_NE(r.out.find("\"compute_bound_ns\": 11000000,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"metrics_collection_ns\": 0"), std::string::npos) << r.out;
}

TEST(StatsCommand, KernelMetricsReportAsText) {
  const Outcome r = Capture(RunStats, {"--report", "kern_metrics", ProfiledTrace()});
  EXPECT_EQ(r.code, 0);
  // gemm: 10 x 1 ms on the timeline + the replayed launch's 1 ms of 13.2 ms in all; 2.5e10 FMAs in 1 ms are
  // 50 TFLOP/s over 2e8 DRAM bytes (250 FLOP/B); 128 registers allow 25%. relu has no roofline set: "-".
  const std::string expected =
      "Profiled kernels: throughput (% of peak), occupancy, top stall, roofline and verdict (kern_metrics):"
      "\n"
      "\n"
      "Time (%)  Total Time (ns)  Profiled  Avg Dur (ns)  SM (%)  Mem (%)  DRAM (%)  L2 (%)  L1 (%)  Ach Oc"
      "c (%)  Theo Occ (%)  Occ Limiter  Top Stall                 GFLOP/s   AI (FLOP/B)  Verdict        Gr"
      "idXYZ   BlockXYZ  Name\n"
      "--------  ---------------  --------  ------------  ------  -------  --------  ------  ------  ------"
      "-----  ------------  -----------  ------------------------  --------  -----------  -------------  --"
      "------  --------  -----------\n"
      "    83.3       11,000,000         1   1,000,000.0    72.0     95.0      20.0    41.0    95.0        "
      " 24.0          25.0  registers    math_pipe_throttle (40%)  50,000.0      250.000  compute-bound  26"
      "4 1 1   256 1 1   gemm_kernel\n"
      "    16.7        2,200,000         1     200,000.0    15.0     88.0      86.0    60.0    30.0        "
      " 70.0         100.0  none         long_scoreboard (75%)            -            -  memory-bound   10"
      "24 1 1  256 1 1   relu_kernel\n";
  EXPECT_EQ(r.out, expected);
}

TEST(StatsCommand, KernelMetricsReportAsCsvAndJson) {
  const std::string trace = ProfiledTrace();
  const Outcome csv = Capture(RunStats, {"--report", "kern_metrics", "--format", "csv", trace});
  EXPECT_NE(csv.out.find("\n16.7,2200000,1,200000.0,15.0,88.0,86.0,60.0,30.0,70.0,100.0,none,long_scoreboard (75%),,,"
                         "memory-bound,1024 1 1,256 1 1,relu_kernel\n"),
            std::string::npos)
      << csv.out;
  const Outcome json = Capture(RunStats, {"--report", "kern_metrics", "--format", "json", trace});
  EXPECT_NE(json.out.find("\"GFLOP/s\":null,\"AI (FLOP/B)\":null,\"Verdict\":\"memory-bound\""), std::string::npos)
      << json.out;
}

TEST(StatsCommand, AllReportsIncludeKernelMetricsOnlyWhenSomethingWasProfiled) {
  EXPECT_EQ(Capture(RunStats, {HealthyTrace()}).out.find("(kern_metrics)"), std::string::npos);
  EXPECT_NE(Capture(RunStats, {ProfiledTrace()}).out.find("(kern_metrics)"), std::string::npos);
}

// ---- The one-run top-down with GPU counters ------------------------------------------------------

// `cuscope profile --top-down=2 --gpu-metrics` of a 100 ms window: gemm (10 x 5 ms) and relu (10 x
// 1 ms), the GPU capped by power from 40 to 80 ms (the SM clock at 1485 of 1980 MHz meanwhile), the
// SMs sampled every 10 ms; after the window gemm is profiled twice and relu never launches again.
std::string TopDownTrace() {
  namespace metric = core::metric;
  namespace counter = core::counter;
  using cuscope::testing::Config;
  SyntheticTrace s;
  s.AddDevice(cuscope::testing::H200Device());
  s.header().mutable_config()->set_top_down_kernels(2);
  s.header().mutable_config()->set_top_down_launches(2);
  const core::KernelConfig gemm = Config("gemm_kernel", 264, 256, 128);
  const core::KernelConfig relu = Config("relu_kernel", 1024, 256, 32);
  s.TimelineWindowOpens(0, "session");
  for (int i = 0; i < 10; ++i) {
    s.KernelWith(gemm, i * 10'000.0, 5000);
    s.KernelWith(relu, i * 10'000.0 + 6000, 1000);
  }
  s.TimelineWindowCloses(100'000, "duration");
  s.TopDown(100'100, 60'000, {{gemm, 50'000, 10}, {relu, 10'000, 10}});
  auto m = [](std::string_view name, double value) { return std::make_pair(std::string(name), value); };
  const cuscope::testing::MetricValues gemm_metrics = {
      m(metric::kDuration, 5e6), m(metric::kSmThroughputPct, 72), m(metric::kMemoryThroughputPct, 95),
      m(metric::kDramThroughputPct, 20), m(metric::kL2ThroughputPct, 41), m(metric::kL1ThroughputPct, 95),
      m(metric::kAchievedOccupancyPct, 24)};
  s.MetricsAfterWindow(gemm, 120'000, 200'000, gemm_metrics);
  s.MetricsAfterWindow(gemm, 330'000, 200'000, gemm_metrics);
  std::vector<SyntheticTrace::Sample> sm;
  for (int i = 0; i < 10; ++i) sm.push_back({i * 10'000.0, 10'000, i == 3 ? 5.0 : 60.0});
  s.Counter(std::string("sm__cycles_active.avg.pct_of_peak_sustained_elapsed"), v1::COUNTER_SOURCE_PM_SAMPLING, sm);
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000,
                 {0, 0, 0, 0, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap,
                  counter::kReasonSwPowerCap, 0, 0});
  s.NvmlReadings(counter::kSmClockMhz, 0, 10'000, {1980, 1980, 1980, 1980, 1485, 1485, 1485, 1485, 1980, 1980});
  s.NvmlReadings(counter::kPowerWatts, 0, 10'000, {400, 420, 440, 460, 700, 700, 700, 700, 500, 480});
  return s.Write();
}

TEST(AnalyzeCommand, TopDownRunShowsBothHalvesCountersAndThrottling) {
  const Outcome r = Capture(RunAnalyze, {TopDownTrace()});
  EXPECT_EQ(r.code, 0) << r.err;
  // The baseline, first.
  EXPECT_NE(r.out.find("\nBaseline: 100.000 ms timeline window, 60.000 ms kernel time, GPU utilization 60.0% of the window, 20 "
                       "kernels, 200 launches/s\n"),
            std::string::npos)
      << r.out;
  // The first half: the window's idle time; the replays after it are neither idle nor busy.
  const size_t idle = r.out.find("] gpu.idle: GPU 0 idle 38.1% of its active time (37.000 ms of 97.000 ms)");
  EXPECT_NE(idle, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("metric collection took"), std::string::npos) << r.out;
  // The throttling, with its reason and the clock.
  EXPECT_NE(r.out.find("] gpu.throttle: GPU 0 ran 40.0% of its kernel time (24.000 ms of 60.000 ms) with its clocks "
                       "held down by power: software power cap; SM clock 1485 MHz then, 1980 MHz at most"),
            std::string::npos)
      << r.out;
  // The second half: the collector's choice and the verdicts.
  const size_t top_down = r.out.find("Top-down: the findings above cover the timeline window; when it closed, the "
                                     "collector chose its 2 hottest kernels (of 60.000 ms kernel time) and profiled "
                                     "their next launches (up to 2 each):");
  EXPECT_NE(top_down, std::string::npos) << r.out;
  EXPECT_LT(idle, top_down);
  EXPECT_NE(r.out.find("  1. gemm_kernel [grid 264 1 1, block 256 1 1]: 83.3% of the window's kernel time (50.000 ms, "
                       "10 launches): compute-bound (2 launches profiled)\n     why: SM throughput 72.0% of peak"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("     occupancy: achieved occupancy 24.0% (theoretical 25.0%, limited by registers)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  2. relu_kernel [grid 1024 1 1, block 256 1 1]: 16.7% of the window's kernel time (10.000 "
                       "ms, 10 launches): no metrics\n     it did not launch again after the timeline window"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Metric collection ran after the window: 2 replay windows, 400.000 ms in all"),
            std::string::npos)
      << r.out;
  // The counters beside the timeline, where they disagree, and their summary table.
  const size_t counters = r.out.find("GPU counters: 40 samples of 4 counters on 1 GPU");
  EXPECT_NE(counters, std::string::npos) << r.out;
  EXPECT_LT(top_down, counters);
  EXPECT_NE(r.out.find("busy, SMs idle (55 points)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("In 1 of 10 intervals the timeline's kernel busy time and the sampled SM activity differ by 25 "
                       "points or more."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(gpu_metrics):"), std::string::npos) << r.out;
}

TEST(AnalyzeCommand, TopDownRunAsJson) {
  const Outcome r = Capture(RunAnalyze, {TopDownTrace(), "--format", "json"});
  EXPECT_EQ(r.code, 0);
  for (const char* table : {"baseline", "top_down", "gpu_utilization_over_time", "gpu_metrics"}) {
    EXPECT_NE(r.out.find(absl::StrCat("\"name\": \"", table, "\"")), std::string::npos) << table;
  }
  EXPECT_NE(r.out.find("\"rule_id\": \"gpu.throttle\""), std::string::npos);
  EXPECT_NE(r.out.find("\"not profiled\""), std::string::npos);
  EXPECT_NE(r.out.find("\"grid\": \"264 1 1\""), std::string::npos);  // the verdict's shape, from its metric row
}

TEST(StatsCommand, GpuMetricsReport) {
  const std::string trace = TopDownTrace();
  const Outcome text = Capture(RunStats, {"--report", "gpu_metrics", trace});
  EXPECT_EQ(text.code, 0);
  // The SMs' 54.5% is time-weighted (9 samples at 60%, one at 5%); the clock's 1782 MHz is the mean
  // of its readings (6 at 1980, 4 at 1485); a bit mask has no mean.
  const std::string expected =
      "GPU counters sampled over time: min, average (time-weighted for PM samples) and max per device and counter "
      "(gpu_metrics):\n"
      "\n"
      "Device  Samples  Min       Avg       Max       Unit  Source  Name\n"
      "------  -------  --------  --------  --------  ----  ------  ---------------------------------------------------\n"
      "     0       10      5.00     54.50     60.00  %     pm      sm__cycles_active.avg.pct_of_peak_sustained_elapsed\n"
      "     0       10      0.00         -      4.00  mask  nvml    nvml.clocks_event_reasons\n"
      "     0       10    400.00    550.00    700.00  W     nvml    nvml.power_w\n"
      "     0       10  1,485.00  1,782.00  1,980.00  MHz   nvml    nvml.sm_clock_mhz\n";
  EXPECT_EQ(text.out, expected);
  const Outcome csv = Capture(RunStats, {"--report", "gpu_metrics", "--format", "csv", trace});
  EXPECT_NE(csv.out.find("Device,Samples,Min,Avg,Max,Unit,Source,Name\n0,10,5.00,54.50,60.00,%,pm,"
                         "sm__cycles_active.avg.pct_of_peak_sustained_elapsed\n"),
            std::string::npos)
      << csv.out;
  // Every report: gpu_metrics comes along only when counters were sampled.
  EXPECT_NE(Capture(RunStats, {trace}).out.find("(gpu_metrics)"), std::string::npos);
  EXPECT_EQ(Capture(RunStats, {HealthyTrace()}).out.find("(gpu_metrics)"), std::string::npos);
}

}  // namespace
}  // namespace cuscope::cli
