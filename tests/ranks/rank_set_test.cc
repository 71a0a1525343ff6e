// A job's rank traces analyzed together, on synthetic traces of a data-parallel loop: each step a
// compute kernel, then an all-reduce that every rank's NCCL kernel finishes together (the last rank
// to arrive sets the end). Balanced ranks, one straggler by compute, by a host gap, by an input
// copy; communication overlapped and exposed; two hosts whose clocks differ; steps imbalanced; each
// with its negative control and the thresholds' edges.
#include "lib/ranks/rank_set.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/analysis/timeline.h"
#include "lib/ranks/clock_alignment.h"
#include "lib/ranks/rank_summary.h"
#include "lib/ranks/rank_traces.h"
#include "tests/analysis/synthetic_trace.h"
#include "tests/ranks/rank_job.h"

namespace cuscope::ranks {
namespace {

using ::testing::HasSubstr;
using testing::Job;
using testing::JobTraces;
using testing::RankTrace;
using testing::SyntheticTrace;

RankSetReport Analyze(const std::vector<std::string>& paths, analysis::Thresholds thresholds = {}) {
  RankTracesOptions options;
  options.summary.thresholds = thresholds;
  options.jobs = 2;
  absl::StatusOr<RankSetReport> report = AnalyzeRankTraces(paths, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : RankSetReport{};
}

const analysis::Finding* FindingOf(const RankSetReport& r, const std::string& rule) {
  for (const analysis::Finding& f : r.findings) {
    if (f.rule_id == rule) return &f;
  }
  return nullptr;
}

TEST(RankSetTest, BalancedRanksNameNoStraggler) {
  const RankSetReport r = Analyze(JobTraces(Job{}));
  ASSERT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.matched_instances, 20u);
  EXPECT_EQ(FindingOf(r, "ranks.straggler"), nullptr);
  EXPECT_EQ(FindingOf(r, "ranks.step_imbalance"), nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.ranks[i].id.rank, i) << "rows by rank";
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  EXPECT_EQ(r.step_name, "step");
  EXPECT_EQ(r.matched_steps, 20u);
}

TEST(RankSetTest, AStragglerByComputeIsNamedWithItsCause) {
  Job job;
  job.late_rank = 3;
  job.extra_compute_us = 4'000;
  const RankSetReport r = Analyze(JobTraces(job));
  const analysis::Finding* f = FindingOf(r, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->headline, HasSubstr("rank 3 is the straggler"));
  EXPECT_THAT(f->headline, HasSubstr("more compute before the collective"));
  EXPECT_EQ(f->number("rank"), 3);
  EXPECT_EQ(f->number("late_share"), 1.0);
  // 4 ms later than the others' mean, within the jitter.
  EXPECT_NEAR(*f->number("late_each_ns"), 4e6, 0.05e6);
  EXPECT_NEAR(*f->number("excess_compute_ns"), 4e6, 0.05e6);
  // Three ranks wait ~4 ms inside each of 20 all-reduces: 60 ms per rank over 4 ranks.
  EXPECT_NEAR(*f->number("wait_per_rank_ns"), 3 * 20 * 4e6 / 4, 1e6);
  // The same rank is the step's slowest, by the extra compute.
  const analysis::Finding* steps = FindingOf(r, "ranks.step_imbalance");
  ASSERT_NE(steps, nullptr);
  EXPECT_THAT(steps->headline, HasSubstr("rank 3 is the slowest of 4 ranks in 20 of 20 'step' steps"));
  EXPECT_NEAR(*steps->number("imbalance_ns"), 4e6, 0.01e6) << "within 10% of the delay: exactly it here";
  // The offender is the rank, with its extra GPU work over the steps it was the slowest in.
  ASSERT_EQ(steps->offenders.size(), 1u);
  EXPECT_EQ(steps->offenders[0].name, "rank 3");
  EXPECT_EQ(steps->offenders[0].count, 20u);
  EXPECT_NEAR(static_cast<double>(steps->offenders[0].time_ns), 20 * 4e6, 0.2e6);
}

TEST(RankSetTest, AStragglerByAHostGapIsNamedWithItsCause) {
  Job job;
  job.late_rank = 2;
  job.host_gap_us = 3'000;
  const RankSetReport r = Analyze(JobTraces(job));
  const analysis::Finding* f = FindingOf(r, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->headline, HasSubstr("rank 2 is the straggler"));
  EXPECT_THAT(f->headline, HasSubstr("a host gap: its GPU sat idle"));
  EXPECT_NEAR(*f->number("excess_idle_ns"), 3e6, 0.05e6);
  // The same GPU work on every rank: no step imbalance by work (the host gap is the straggler's).
  EXPECT_EQ(FindingOf(r, "ranks.step_imbalance"), nullptr);
}

TEST(RankSetTest, AStragglerByAnInputCopyIsNamedWithItsCause) {
  Job job;
  job.late_rank = 1;
  job.copy_us = 2'000;
  const RankSetReport r = Analyze(JobTraces(job));
  const analysis::Finding* f = FindingOf(r, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->headline, HasSubstr("rank 1 is the straggler"));
  EXPECT_THAT(f->headline, HasSubstr("an input copy"));
  EXPECT_NEAR(*f->number("excess_copy_ns"), 2e6, 0.05e6);
}

TEST(RankSetTest, ExposedCommunicationIsReportedAndOverlappedIsNot) {
  const RankSetReport exposed = Analyze(JobTraces(Job{}));
  const analysis::Finding* f = FindingOf(exposed, "ranks.comm_exposed");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->headline, HasSubstr("communication not overlapped on 4 of 4 ranks"));
  EXPECT_THAT(f->headline, HasSubstr("AllReduce on the critical path"));
  Job overlapped;
  overlapped.overlap = true;
  const RankSetReport quiet = Analyze(JobTraces(overlapped));
  EXPECT_EQ(FindingOf(quiet, "ranks.comm_exposed"), nullptr);
  ASSERT_EQ(quiet.ranks.size(), 4u);
  EXPECT_EQ(quiet.ranks[0].exposed_ns, 0u);
  EXPECT_GT(quiet.ranks[0].overlapped_ns, 0u);
}

// Ranks 2 and 3 on a host whose CUPTI clock reads 5 s ahead: with the clock references the ranks
// line up and nothing is late; without them rank 2 and 3 look 5 s late, and a warning says the
// times are not comparable.
TEST(RankSetTest, TwoHostsWithOffsetClocksLineUpByTheirReferences) {
  const Job job;
  std::vector<std::string> aligned, unaligned;
  for (int r = 0; r < 4; ++r) {
    const double shift = r >= 2 ? 5e6 : 0;
    aligned.push_back(RankTrace(job, r, shift, true));
    unaligned.push_back(RankTrace(job, r, shift, false));
  }
  const RankSetReport good = Analyze(aligned);
  EXPECT_EQ(FindingOf(good, "ranks.straggler"), nullptr);
  EXPECT_TRUE(good.warnings.empty());
  ASSERT_GE(good.tables.size(), 2u);
  EXPECT_LT(std::stod(good.tables[1].rows[0][3]), 10'000) << "median skew: the jitter";
  const RankSetReport bad = Analyze(unaligned);
  ASSERT_GE(bad.tables.size(), 2u);
  EXPECT_GT(std::stod(bad.tables[1].rows[0][3]), 4.9e9) << "5 s apart without alignment";
  ASSERT_FALSE(bad.warnings.empty());
  EXPECT_THAT(bad.warnings.back(), HasSubstr("no clock reference"));
}

TEST(RankSetTest, WithoutNcclPayloadsCollectivesMatchByTheirStreamsOrder) {
  Job job;
  job.payloads = false;
  job.late_rank = 0;
  job.extra_compute_us = 1'000;
  const RankSetReport r = Analyze(JobTraces(job));
  EXPECT_EQ(r.matched_instances, 20u);
  const analysis::Finding* f = FindingOf(r, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->headline, HasSubstr("rank 0 is the straggler"));
  ASSERT_FALSE(r.tables.size() < 2);
  EXPECT_EQ(r.tables[1].rows[0][0], "NCCL stream 1");
}

// The skew threshold's edge: a rank 60 us late is the straggler with the 50 us default, not with
// 70 us. The share threshold: late at every instance passes 100%, not over it.
TEST(RankSetTest, StragglerThresholdEdges) {
  Job job;
  job.late_rank = 3;
  job.extra_compute_us = 60;
  job.jitter_us = 0;
  const std::vector<std::string> paths = JobTraces(job);
  EXPECT_NE(FindingOf(Analyze(paths), "ranks.straggler"), nullptr);
  analysis::Thresholds wide;
  wide.straggler_min_skew_us = 70;
  EXPECT_EQ(FindingOf(Analyze(paths, wide), "ranks.straggler"), nullptr);
  analysis::Thresholds all;
  all.straggler_min_share = 1.0;
  EXPECT_NE(FindingOf(Analyze(paths, all), "ranks.straggler"), nullptr);
  all.straggler_min_share = 1.01;
  EXPECT_EQ(FindingOf(Analyze(paths, all), "ranks.straggler"), nullptr);
}

TEST(RankSetTest, StepImbalanceThresholdEdge) {
  Job job;
  job.late_rank = 1;
  job.extra_compute_us = 2'000;  // 2 ms of a ~19.9 ms step: 10.05%
  const std::vector<std::string> paths = JobTraces(job);
  analysis::Thresholds at;
  at.step_imbalance_min_share = 0.10;
  EXPECT_NE(FindingOf(Analyze(paths, at), "ranks.step_imbalance"), nullptr);
  at.step_imbalance_min_share = 0.11;
  EXPECT_EQ(FindingOf(Analyze(paths, at), "ranks.step_imbalance"), nullptr);
}

TEST(RankSetTest, WarningsSayWhatTheSetLacks) {
  const Job job;
  std::vector<std::string> paths = JobTraces(job);
  paths.pop_back();  // 3 of 4 ranks
  paths.push_back(paths.front());  // rank 0 twice
  paths.push_back("/nonexistent/rank_9.cuscope");
  const RankSetReport r = Analyze(paths);
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("rank 0 appears in 2 traces"));
  EXPECT_THAT(all, HasSubstr("/nonexistent/rank_9.cuscope: No such file or directory; left out"));
  RankTracesOptions options;
  EXPECT_FALSE(AnalyzeRankTraces({"/nonexistent/a", "/nonexistent/b"}, options).ok()) << "no trace readable";
}

// torchrun's own process imports torch and writes a trace too: no GPU work. It is left out with a
// line, not counted as a rank, with no rank and with one (under srun the agent has SLURM_PROCID).
TEST(RankSetTest, ALaunchersOwnTraceIsLeftOut) {
  for (const int agent_rank : {-1, 0}) {
    std::vector<std::string> paths = JobTraces(Job{});
    SyntheticTrace launcher;
    launcher.header().mutable_session()->set_pid(77);
    if (agent_rank >= 0) {
      launcher.header().mutable_session()->set_rank(agent_rank);
      launcher.header().mutable_session()->set_world_size(4);
      launcher.header().mutable_session()->set_launcher("slurm");
    }
    launcher.Api("cuInit", 0, 10);
    paths.push_back(launcher.Write());
    const RankSetReport r = Analyze(paths);
    EXPECT_EQ(r.ranks.size(), 4u) << agent_rank;
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_THAT(r.warnings.back(), HasSubstr("no GPU work (a launcher's own process, such as torchrun's agent): left out"));
    for (const std::string& w : r.warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("appears in"))) << "no duplicate rank";
  }
  // A set in which no trace has GPU work keeps its traces: they are all there is.
  SyntheticTrace a, b;
  a.Api("cuInit", 0, 10);
  b.Api("cuInit", 0, 10);
  EXPECT_EQ(Analyze({a.Write(), b.Write()}).ranks.size(), 2u);
}

// Ranks whose most repeated range differs (no --step) are not compared step by step with each
// other: only the ranks of the range most of them chose are.
TEST(RankSetTest, StepsOfAnotherRangeAreNotComparedWithTheSteps) {
  Job job;
  job.late_rank = 3;
  job.extra_compute_us = 4'000;
  std::vector<std::string> paths = JobTraces(job);
  // Rank 1 marks its steps "forward": three ranks' steps are compared, not four.
  Job other = job;
  other.step_name = "forward";
  paths[1] = RankTrace(other, 1);
  const RankSetReport r = Analyze(paths);
  EXPECT_EQ(r.step_name, "step");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_THAT(absl::StrJoin(r.warnings, "\n"), HasSubstr("the ranks' step ranges differ"));
  const analysis::Finding* steps = FindingOf(r, "ranks.step_imbalance");
  ASSERT_NE(steps, nullptr);
  EXPECT_THAT(steps->headline, HasSubstr("rank 3 is the slowest of 3 ranks in 20 of 20 'step' steps"));
}

// One rank early by 1 ms, the others together: a skew, but nobody is late (the early rank waits).
TEST(RankSetTest, AnEarlyRankMakesNoLateRank) {
  Job job;
  job.early_rank = 2;
  job.early_us = 1'000;
  job.jitter_us = 0;
  const RankSetReport r = Analyze(JobTraces(job));
  EXPECT_EQ(FindingOf(r, "ranks.straggler"), nullptr);
  for (const RankRow& row : r.ranks) EXPECT_EQ(row.last_arrivals, 0u) << row.id.Label();
  // Positive control: the same rank 1 ms late is named.
  Job late;
  late.late_rank = 2;
  late.host_gap_us = 1'000;
  late.jitter_us = 0;
  const RankSetReport late_report = Analyze(JobTraces(late));
  const analysis::Finding* f = FindingOf(late_report, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->number("rank"), 2);
  EXPECT_NEAR(*f->number("late_each_ns"), 1e6, 0.01e6);
}

// Ranks tied in everything: the pick does not depend on the order the workers finished in.
TEST(RankSetTest, TiesGoToTheLowerRankWhateverTheOrderGiven) {
  Job job;
  job.jitter_us = 0;
  job.late_rank = -1;
  std::vector<std::string> paths = JobTraces(job);
  std::reverse(paths.begin(), paths.end());
  analysis::Thresholds t;
  t.straggler_min_skew_us = 0;  // every instance has a "late" rank: the tie's winner
  t.straggler_min_share = 0;
  RankTracesOptions options;
  options.summary.thresholds = t;
  options.jobs = 1;
  absl::StatusOr<RankSetReport> r = AnalyzeRankTraces(paths, options);
  ASSERT_TRUE(r.ok());
  const analysis::Finding* f = FindingOf(*r, "ranks.straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->number("rank"), 0);
}

// Two ranks: the slowest against the other's work, not against a median halfway between them.
TEST(RankSetTest, WithTwoRanksTheImbalanceIsTheWholeDifference) {
  Job job;
  job.ranks = 2;
  job.late_rank = 1;
  job.extra_compute_us = 4'000;
  const RankSetReport r = Analyze(JobTraces(job));
  const analysis::Finding* steps = FindingOf(r, "ranks.step_imbalance");
  ASSERT_NE(steps, nullptr);
  EXPECT_NEAR(*steps->number("imbalance_ns"), 4e6, 0.01e6);
}

TEST(ClockAlignmentTest, InterpolatesBetweenReferencesAndHoldsOutside) {
  v1::Header h;
  h.mutable_session()->set_clock_ref_cupti_ns(1'000);
  h.mutable_session()->set_clock_ref_realtime_ns(11'000);  // offset 10,000
  v1::ClockReference later;
  later.set_cupti_ns(2'000);
  later.set_realtime_ns(12'100);  // offset 10,100: the clocks drifted 100 ns
  const ClockAlignment a = ClockAlignment::FromTrace(h, {later});
  EXPECT_TRUE(a.known());
  EXPECT_EQ(a.ToWall(1'000), 11'000u);
  EXPECT_EQ(a.ToWall(1'500), 11'550u);
  EXPECT_EQ(a.ToWall(500), 10'500u) << "before the first: its offset";
  EXPECT_EQ(a.ToWall(3'000), 13'100u) << "after the last: its offset";
  EXPECT_EQ(a.drift_ns(), 100);
  const ClockAlignment none = ClockAlignment::FromTrace(v1::Header(), {});
  EXPECT_FALSE(none.known());
  EXPECT_EQ(none.ToWall(42), 42u);
}

TEST(RankSetTest, TextAndJsonCarryTheFindingsAndTables) {
  Job job;
  job.late_rank = 3;
  job.extra_compute_us = 4'000;
  const RankSetReport r = Analyze(JobTraces(job));
  const std::string text = RenderRankSetText(r, 10);
  EXPECT_THAT(text, HasSubstr("cuscope analyze: 4 rank traces, job job-7 (torchrun); 20 collectives matched"));
  EXPECT_THAT(text, HasSubstr("ranks.straggler: rank 3 is the straggler"));
  EXPECT_THAT(text, HasSubstr("rank_collectives"));
  const std::string json = RenderRankSetJson(r);
  EXPECT_THAT(json, HasSubstr("\"rule_id\": \"ranks.straggler\""));
  EXPECT_THAT(json, HasSubstr("\"name\": \"ranks\""));
}

}  // namespace
}  // namespace cuscope::ranks
