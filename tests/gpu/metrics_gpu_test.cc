// Kernel metrics on a real GPU: the Range Profiler around selected launches, values linked to
// their kernel records, the replayed spans marked, the program's results unchanged.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/metric_sets.h"
#include "lib/core/trace.h"
#include "tests/gpu/gpu_test_support.h"

namespace cuscope {
namespace {

using testing::ParseKeyValues;
using testing::RunCommand;
using testing::TempTracePath;

const std::string kCli = testing::BuildTree::Cli();
const std::string kProgram = testing::BuildTree::Example("kernel_internals");

class MetricsGpuTest : public testing::GpuTest {};

struct Profiled {
  std::string kernel;
  uint64_t correlation_id;
  uint32_t passes;
  std::map<std::string, double> values;
};

std::vector<Profiled> MetricRows(const core::Trace& t) {
  std::vector<Profiled> out;
  for (const auto& m : t.metrics) {
    Profiled p{t.dict.str(m.kernel_name), m.correlation_id, m.pass_count, {}};
    for (const auto& [name, value] : m.values) p.values[t.dict.str(name)] = value;
    out.push_back(std::move(p));
  }
  return out;
}

const Profiled* Find(const std::vector<Profiled>& rows, const std::string& kernel) {
  for (const auto& r : rows) {
    if (absl::StrContains(r.kernel, kernel)) return &r;
  }
  return nullptr;
}

double Value(const Profiled& p, std::string_view metric) {
  auto it = p.values.find(std::string(metric));
  return it == p.values.end() ? -1 : it->second;
}

TEST_F(MetricsGpuTest, EachKernelOnceWithItsCountersLinkedToItsReplayedRecord) {
  const std::string trace = TempTracePath("metrics_all");
  auto plain = RunCommand(absl::StrCat(kProgram, " --iterations 2"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  auto run = RunCommand(absl::StrCat(kCli, " profile --metrics sol,occupancy,stalls -o ", trace, " -- ", kProgram,
                                     " --iterations 2 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Kernel replay restores memory between passes: the results are the program's own.
  auto want = ParseKeyValues(plain.output), got = ParseKeyValues(run.output);
  for (const char* key : {"checksum_triad", "checksum_fma", "checksum_chase"}) EXPECT_EQ(got[key], want[key]) << key;
  EXPECT_TRUE(absl::StrContains(run.output, "launches profiled")) << run.output;

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto rows = MetricRows(*t);
  // The default selection: the first launch of each distinct kernel (the fills included), the
  // second iteration unprofiled.
  const Profiled* triad = Find(rows, "stream_triad");
  const Profiled* fma = Find(rows, "fma_chains");
  const Profiled* chase = Find(rows, "pointer_chase");
  ASSERT_NE(triad, nullptr);
  ASSERT_NE(fma, nullptr);
  ASSERT_NE(chase, nullptr);
  for (const std::string name : {"stream_triad", "fma_chains", "pointer_chase"}) {
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [&](const Profiled& p) { return absl::StrContains(p.kernel, name); }),
              1) << name;
  }
  const size_t expected_metrics = core::ExpandMetricList("sol,occupancy,stalls")->size();
  std::map<uint64_t, const core::KernelRow*> kernel_by_corr;
  for (const auto& k : t->kernels) kernel_by_corr[k.correlation_id] = &k;
  int unprofiled_triads = 0;
  for (const auto& k : t->kernels) {
    if (absl::StrContains(t->dict.str(t->dict.signature(k.signature).name()), "stream_triad") && !k.replayed()) {
      ++unprofiled_triads;
      EXPECT_GT(k.end, k.start);
    }
  }
  EXPECT_EQ(unprofiled_triads, 1);  // the second iteration's
  for (const auto& r : rows) {
    EXPECT_EQ(r.values.size(), expected_metrics) << r.kernel;
    EXPECT_GE(r.passes, 9u) << r.kernel;
    auto it = kernel_by_corr.find(r.correlation_id);
    ASSERT_NE(it, kernel_by_corr.end()) << r.kernel << " corr " << r.correlation_id;
    EXPECT_TRUE(it->second->replayed()) << r.kernel;
    EXPECT_EQ(t->dict.str(t->dict.signature(it->second->signature).name()), r.kernel);
  }
  int metric_windows = 0;
  for (const auto& w : t->windows) {
    if (w.kind() == v1::WINDOW_KIND_METRICS) {
      ++metric_windows;
      EXPECT_GT(w.end_ns(), w.start_ns());
    }
  }
  EXPECT_EQ(metric_windows, static_cast<int>(rows.size()));
  ASSERT_GE(t->header.config().metrics_size(), 1);

  // What each kernel is built to be.
  EXPECT_GT(Value(*triad, core::metric::kDramThroughputPct), 70) << "triad DRAM %";
  EXPECT_LT(Value(*triad, core::metric::kSmThroughputPct), 50) << "triad SM %";
  EXPECT_GT(Value(*fma, core::metric::kSmThroughputPct), 80) << "fma SM %";
  EXPECT_LT(Value(*fma, core::metric::kDramThroughputPct), 5) << "fma DRAM %";
  EXPECT_LT(Value(*chase, core::metric::kAchievedOccupancyPct), 6) << "chase occupancy %";
  EXPECT_LT(Value(*chase, core::metric::kSmThroughputPct), 20) << "chase SM %";
  const double chase_latency = Value(*chase, core::metric::kWarpCyclesPerIssue);
  const double chase_long_scoreboard = Value(*chase, core::metric::StallMetric("long_scoreboard"));
  EXPECT_GT(chase_long_scoreboard, 0.5 * chase_latency) << "the chase waits on memory";
  for (const auto& r : rows) EXPECT_GT(Value(r, core::metric::kDuration), 0) << r.kernel;
}

TEST_F(MetricsGpuTest, NameSkipAndCountPickExactlyTheLaunchesAsked) {
  const std::string trace = TempTracePath("metrics_select");
  auto run = RunCommand(absl::StrCat(kCli, " profile --metrics occupancy -k fma_chains --launch-skip 1 --launch-count 2 ",
                                     "--per-kernel-count 0 -o ", trace, " -- ", kProgram, " --iterations 4 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<const core::KernelRow*> fma;
  for (const auto& k : t->kernels) {
    if (absl::StrContains(t->dict.str(t->dict.signature(k.signature).name()), "fma_chains")) fma.push_back(&k);
  }
  ASSERT_EQ(fma.size(), 4u);
  std::sort(fma.begin(), fma.end(), [](auto* x, auto* y) { return x->correlation_id < y->correlation_id; });
  const auto rows = MetricRows(*t);
  ASSERT_EQ(rows.size(), 2u);
  // The second and third fma launches; the first skipped, the fourth over the count.
  EXPECT_EQ(rows[0].correlation_id, fma[1]->correlation_id);
  EXPECT_EQ(rows[1].correlation_id, fma[2]->correlation_id);
  EXPECT_FALSE(fma[0]->replayed());
  EXPECT_TRUE(fma[1]->replayed());
  EXPECT_TRUE(fma[2]->replayed());
  EXPECT_FALSE(fma[3]->replayed());
}

TEST_F(MetricsGpuTest, AMetricTheChipLacksIsNamedOnceAndTheRestAreCollected) {
  const std::string trace = TempTracePath("metrics_missing");
  auto run = RunCommand(absl::StrCat(kCli, " profile --metrics gpu__time_duration.sum,smsp__no_such_counter.sum ",
                                     "-k fma_chains -o ", trace, " -- ", kProgram, " 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  size_t lines = 0;
  for (size_t pos = 0; (pos = run.output.find("smsp__no_such_counter.sum", pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_EQ(lines, 1u) << run.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto rows = MetricRows(*t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(Value(rows[0], core::metric::kDuration), 0);
  EXPECT_EQ(rows[0].values.count("smsp__no_such_counter.sum"), 0u);
}

TEST_F(MetricsGpuTest, MetricsInsideACaptureRangeOnly) {
  // Gated on cudaProfilerStart, which this program never calls: nothing is profiled, and the
  // program runs as usual.
  const std::string trace = TempTracePath("metrics_gated");
  auto run = RunCommand(absl::StrCat(kCli, " profile --metrics occupancy -c cudaProfilerApi -o ", trace, " -- ",
                                     kProgram, " 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->metrics.empty());
}

}  // namespace
}  // namespace cuscope
