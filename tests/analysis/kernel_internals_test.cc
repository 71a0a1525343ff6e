// Kernel-internals verdicts over fabricated metric rows: each verdict with its negative control,
// the GEMM that looks memory-bound to gpu__compute_memory_throughput alone, the occupancy rule
// both ways, the thresholds' edges, and metrics that were not collected.
#include "lib/analysis/kernel_internals.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/analysis/rules/rules.h"
#include "lib/core/metric_sets.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

namespace metric = core::metric;
using cuscope::testing::Config;
using cuscope::testing::H200Device;
using cuscope::testing::MetricValues;
using cuscope::testing::SyntheticTrace;

std::string S(std::string_view v) { return std::string(v); }

// The sol set; a negative value leaves that metric out.
MetricValues Sol(double sm, double memory, double dram, double l2, double l1 = -1, double duration_ns = 1e6) {
  MetricValues v = {{S(metric::kDuration), duration_ns}};
  auto add = [&v](std::string_view name, double value) {
    if (value >= 0) v.emplace_back(S(name), value);
  };
  add(metric::kSmThroughputPct, sm);
  add(metric::kMemoryThroughputPct, memory);
  add(metric::kDramThroughputPct, dram);
  add(metric::kL2ThroughputPct, l2);
  add(metric::kL1ThroughputPct, l1);
  return v;
}

MetricValues Achieved(double achieved_pct) {
  return {{S(metric::kAchievedOccupancyPct), achieved_pct}, {S(metric::kAchievedActiveWarps), achieved_pct * 0.64}};
}

MetricValues operator+(MetricValues a, const MetricValues& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<KernelVerdict> JudgeTrace(SyntheticTrace& s, const Thresholds& thresholds = Thresholds()) {
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  return JudgeKernels(timeline, thresholds);
}

// The program runs `kernel` ten times for 1 ms; one more launch of it is profiled with `values`.
void ProgramWith(SyntheticTrace& s, const MetricValues& values, const core::KernelConfig& kernel) {
  s.AddDevice(H200Device());
  for (int i = 0; i < 10; ++i) s.KernelWith(kernel, i * 1000.0, 1000);
  s.ProfiledLaunch(kernel, 20000, 300000, values);
}

KernelVerdict One(const MetricValues& values, const Thresholds& thresholds = Thresholds(),
                  const core::KernelConfig& kernel = Config("kern", 264, 256)) {
  SyntheticTrace s;
  ProgramWith(s, values, kernel);
  std::vector<KernelVerdict> v = JudgeTrace(s, thresholds);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? KernelVerdict() : v[0];
}

Thresholds With(const std::string& assignment) {
  Thresholds t;
  EXPECT_TRUE(ApplyThresholdOverride(assignment, &t).ok()) << assignment;
  return t;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (Contains(l, part)) return true;
  }
  return false;
}

// ---- compute-bound ---------------------------------------------------------------------------------

TEST(KernelVerdictTest, HighSmThroughputIsComputeBound) {
  const KernelVerdict v = One(Sol(75, 50, 30, 35, 50));
  EXPECT_EQ(v.bottleneck, Bottleneck::kCompute);
  EXPECT_TRUE(Contains(v.reason, "SM throughput 75.0% of peak")) << v.reason;
  EXPECT_TRUE(Contains(v.recommendation, "tensor cores")) << v.recommendation;
}

TEST(KernelVerdictTest, ModerateSmThroughputIsNotComputeBound) {
  const KernelVerdict v = One(Sol(50, 50, 30, 35, 50));
  EXPECT_EQ(v.bottleneck, Bottleneck::kMixed) << v.reason;
}

// ---- memory-bound ----------------------------------------------------------------------------------

TEST(KernelVerdictTest, HighDramThroughputIsMemoryBound) {
  const KernelVerdict v = One(Sol(30, 85, 82, 50, 40));
  EXPECT_EQ(v.bottleneck, Bottleneck::kMemory);
  EXPECT_TRUE(Contains(v.reason, "DRAM throughput 82.0% of peak")) << v.reason;
  EXPECT_TRUE(Contains(v.recommendation, "move fewer bytes")) << v.recommendation;
}

TEST(KernelVerdictTest, HighL2ThroughputIsMemoryBound) {
  const KernelVerdict v = One(Sol(30, 75, 40, 72, 50));
  EXPECT_EQ(v.bottleneck, Bottleneck::kMemory);
  EXPECT_TRUE(Contains(v.reason, "L2 throughput 72.0%")) << v.reason;
}

TEST(KernelVerdictTest, DramAndL2BelowTheirRoofsAreNotMemoryBound) {
  EXPECT_EQ(One(Sol(30, 55, 55, 50, 45)).bottleneck, Bottleneck::kMixed);
}

TEST(KernelVerdictTest, GemmReadingThroughL1IsComputeBoundNotMemoryBound) {
  // gpu__compute_memory_throughput 95% comes from L1; DRAM is at 20%.
  const KernelVerdict v = One(Sol(70, 95, 20, 40, 95));
  EXPECT_EQ(v.bottleneck, Bottleneck::kCompute);
  EXPECT_TRUE(Contains(v.reason, "is L1/shared-memory traffic")) << v.reason;
  EXPECT_TRUE(Contains(v.reason, "not memory-bound")) << v.reason;
  // The same without the L1 metric: DRAM and L2, measured and low, still rule memory out.
  const KernelVerdict no_l1 = One(Sol(70, 95, 20, 40));
  EXPECT_EQ(no_l1.bottleneck, Bottleneck::kCompute);
  EXPECT_TRUE(no_l1.l1_limited);
}

TEST(KernelVerdictTest, BusyL1WithLowSmIsMixedWithL1AdviceNotMemoryOrLatency) {
  const KernelVerdict v = One(Sol(30, 95, 20, 40, 95));
  EXPECT_EQ(v.bottleneck, Bottleneck::kMixed);
  EXPECT_TRUE(v.l1_limited);
  EXPECT_TRUE(Contains(v.reason, "L1/shared-memory throughput 95.0% is the busiest unit")) << v.reason;
  EXPECT_TRUE(Contains(v.recommendation, "bank conflicts")) << v.recommendation;
}

TEST(KernelVerdictTest, BothRoofsNearAreDecidedByTheRoofline) {
  // Without the roofline set, the higher of the two.
  EXPECT_EQ(One(Sol(80, 85, 85, 50)).bottleneck, Bottleneck::kMemory);
  // 2e10 FLOP over 1e9 B: 20 FLOP/B, above the ridge point of 12.5: compute.
  const MetricValues above = Sol(80, 85, 85, 50) + MetricValues{{S(metric::kFfma), 1e10}, {S(metric::kDramBytes), 1e9}};
  const KernelVerdict compute = One(above);
  EXPECT_EQ(compute.bottleneck, Bottleneck::kCompute);
  EXPECT_TRUE(Contains(compute.reason, "above the ridge point 12.5 FLOP/B")) << compute.reason;
  // 2e10 FLOP over 4e9 B: 5 FLOP/B, below it: memory.
  const MetricValues below = Sol(80, 85, 85, 50) + MetricValues{{S(metric::kFfma), 1e10}, {S(metric::kDramBytes), 4e9}};
  EXPECT_EQ(One(below).bottleneck, Bottleneck::kMemory);
}

// ---- latency-bound ---------------------------------------------------------------------------------

TEST(KernelVerdictTest, FarFromBothRoofsIsLatencyBound) {
  const KernelVerdict v = One(Sol(20, 25, 15, 18, 25));
  EXPECT_EQ(v.bottleneck, Bottleneck::kLatency);
  EXPECT_TRUE(Contains(v.reason, "far from both roofs")) << v.reason;
}

TEST(KernelVerdictTest, OneMemoryUnitInTheMiddleIsNotLatencyBound) {
  // L1 at 45%: not far from its roof, so not latency-bound although SM, DRAM and L2 are low.
  EXPECT_EQ(One(Sol(20, 45, 15, 18, 45)).bottleneck, Bottleneck::kMixed);
}

// ---- thresholds ------------------------------------------------------------------------------------

TEST(KernelVerdictTest, ComputeThresholdEdges) {
  EXPECT_EQ(One(Sol(59.9, 30, 30, 30)).bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(One(Sol(60, 30, 30, 30)).bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(One(Sol(60.1, 30, 30, 30)).bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(One(Sol(65, 30, 30, 30), With("kernel_compute_bound_pct=70")).bottleneck, Bottleneck::kMixed);
}

TEST(KernelVerdictTest, MemoryThresholdEdges) {
  EXPECT_EQ(One(Sol(45, 59.9, 59.9, 30)).bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(One(Sol(45, 60, 60, 30)).bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(One(Sol(45, 60.1, 60.1, 30)).bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(One(Sol(45, 65, 65, 30), With("kernel_memory_bound_pct=70")).bottleneck, Bottleneck::kMixed);
}

TEST(KernelVerdictTest, LatencyThresholdEdges) {
  EXPECT_EQ(One(Sol(39.9, 30, 30, 30)).bottleneck, Bottleneck::kLatency);
  EXPECT_EQ(One(Sol(40, 30, 30, 30)).bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(One(Sol(30, 40, 30, 30)).bottleneck, Bottleneck::kMixed);
  EXPECT_EQ(One(Sol(45, 30, 30, 30), With("kernel_latency_bound_pct=50")).bottleneck, Bottleneck::kLatency);
}

// ---- occupancy -------------------------------------------------------------------------------------

TEST(KernelVerdictTest, LowOccupancyWithLowThroughputNamesTheRegisterLimiter) {
  // 128 registers per thread in 256-thread blocks: 25% theoretical.
  const KernelVerdict v = One(Sol(20, 25, 15, 18, 25) + Achieved(22), Thresholds(), Config("kern", 264, 256, 128));
  EXPECT_EQ(v.bottleneck, Bottleneck::kLatency);
  ASSERT_TRUE(v.theoretical.has_value());
  EXPECT_DOUBLE_EQ(v.theoretical->occupancy_pct, 25.0);
  EXPECT_EQ(v.occupancy, OccupancyVerdict::kProblem);
  EXPECT_TRUE(Contains(v.occupancy_note, "limited by registers")) << v.occupancy_note;
  // 80 registers per thread would fit a third block.
  EXPECT_TRUE(Contains(v.occupancy_note, "at 80 or fewer, 3 blocks (37.5%)")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.recommendation, "Occupancy: ")) << v.recommendation;
}

// A damaged record with registers per thread far past the hardware's 255 (the largest the trace's
// field holds): the launch cannot run, and the advice's search for a register count that fits one
// more block tries the hardware's counts only (it once stepped down from the record's value, 8 at a
// time: 536 million tries for 4,294,967,295).
TEST(KernelVerdictTest, RegistersPastTheHardwareLimitAreNotLaunchableAndTheAdviceStaysShort) {
  const KernelVerdict v = One(Sol(20, 25, 15, 18, 25) + Achieved(22), Thresholds(), Config("kern", 264, 256, 0xffff));
  ASSERT_TRUE(v.theoretical.has_value()) << v.theoretical_error;
  EXPECT_EQ(v.theoretical->blocks_per_sm, 0u);
  EXPECT_EQ(v.theoretical->not_launchable, "registers per thread over 255");
  EXPECT_EQ(v.theoretical->limiter, OccupancyLimiter::kRegisters);
  EXPECT_TRUE(Contains(v.occupancy_note, "65535 registers per thread allow 0 blocks")) << v.occupancy_note;
  EXPECT_LT(v.occupancy_note.size(), 1000u) << v.occupancy_note;
}

TEST(KernelVerdictTest, LowOccupancyWithHighThroughputIsLeftAlone) {
  const KernelVerdict v = One(Sol(30, 85, 82, 50) + Achieved(20), Thresholds(), Config("kern", 264, 256, 128));
  EXPECT_EQ(v.bottleneck, Bottleneck::kMemory);
  EXPECT_EQ(v.occupancy, OccupancyVerdict::kLowButFine);
  EXPECT_TRUE(Contains(v.occupancy_note, "leave it")) << v.occupancy_note;
  // No occupancy advice: nothing to change.
  EXPECT_FALSE(Contains(v.recommendation, "Occupancy")) << v.recommendation;
  EXPECT_FALSE(Contains(v.recommendation, "__launch_bounds__")) << v.recommendation;
}

TEST(KernelVerdictTest, LowAchievedOccupancyUnderAFullLaunchIsTooFewBlocks) {
  // 32 registers: 100% theoretical; 10 blocks for 132 SMs cannot fill the GPU.
  const KernelVerdict v = One(Sol(5, 8, 3, 4, 8) + Achieved(12), Thresholds(), Config("kern", 10, 256, 32));
  EXPECT_EQ(v.occupancy, OccupancyVerdict::kProblem);
  EXPECT_TRUE(Contains(v.occupancy_note, "too few blocks")) << v.occupancy_note;
  ASSERT_TRUE(v.waves.has_value());
  EXPECT_NEAR(*v.waves, 10.0 / (132 * 8), 1e-12);
  EXPECT_TRUE(Contains(v.recommendation, "of one wave")) << v.recommendation;
}

TEST(KernelVerdictTest, OccupancyThresholdEdges) {
  const MetricValues latency = Sol(20, 25, 15, 18, 25);
  EXPECT_EQ(One(latency + Achieved(29.9)).occupancy, OccupancyVerdict::kProblem);
  EXPECT_EQ(One(latency + Achieved(30)).occupancy, OccupancyVerdict::kFine);
  EXPECT_EQ(One(latency + Achieved(45), With("kernel_low_occupancy_pct=50")).occupancy, OccupancyVerdict::kProblem);
}

TEST(KernelVerdictTest, TheoreticalOccupancyStandsInWhenAchievedWasNotCollected) {
  const KernelVerdict v = One(Sol(20, 25, 15, 18, 25), Thresholds(), Config("kern", 264, 256, 128));
  EXPECT_EQ(v.occupancy, OccupancyVerdict::kProblem);
  EXPECT_TRUE(Contains(v.occupancy_note, "theoretical occupancy (achieved not collected) 25.0%")) << v.occupancy_note;
  EXPECT_TRUE(AnyContains(v.undecided, "occupancy set not collected"));
}

// Occupancy judged with the stalls: 1024-thread blocks at 64 registers per thread fill the register
// file with one block (50% theoretical); achieved 47.5%, no roof reached, warps waiting on loads.
MetricValues LongScoreboardOnTop() {
  return {{S(metric::kWarpCyclesPerIssue), 20},
          {metric::StallMetric("long_scoreboard"), 11},
          {metric::StallMetric("wait"), 2},
          {metric::StallMetric("math_pipe_throttle"), 3}};
}

const core::KernelConfig kRegisterCapped = Config("kern", 264, 1024, 64);

TEST(KernelVerdictTest, CappedOccupancyWithLatencyStallsAndNoRoofIsTheLikelyCause) {
  const KernelVerdict v = One(Sol(32.6, 58, 58, 40, 30) + Achieved(47.5) + LongScoreboardOnTop(), Thresholds(),
                              kRegisterCapped);
  EXPECT_EQ(v.bottleneck, Bottleneck::kMixed);
  ASSERT_TRUE(v.theoretical.has_value());
  EXPECT_DOUBLE_EQ(v.theoretical->occupancy_pct, 50.0);
  EXPECT_EQ(v.occupancy, OccupancyVerdict::kProblem);
  EXPECT_TRUE(Contains(v.occupancy_note, "too few warps to hide latency")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.occupancy_note, "top stall is long_scoreboard (55.0% of the stall cycles)")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.occupancy_note, "limited by registers")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.occupancy_note, "at 32 or fewer, 2 blocks (100.0%) would fit")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.occupancy_note, "estimated gain up to 50% of the kernel's time")) << v.occupancy_note;
  EXPECT_TRUE(Contains(v.recommendation, "Occupancy: ")) << v.recommendation;
}

TEST(KernelVerdictTest, CappedOccupancyIsNotBlamedWhenARoofIsReachedOrTheStallIsNotLatency) {
  // A roof reached: the warps there are enough.
  EXPECT_EQ(One(Sol(32.6, 85, 82, 40, 30) + Achieved(47.5) + LongScoreboardOnTop(), Thresholds(), kRegisterCapped)
                .occupancy,
            OccupancyVerdict::kFine);
  // The top stall is the math pipe: more warps would queue on the same pipe.
  const MetricValues math = {{S(metric::kWarpCyclesPerIssue), 20},
                             {metric::StallMetric("math_pipe_throttle"), 11},
                             {metric::StallMetric("long_scoreboard"), 3}};
  EXPECT_EQ(One(Sol(32.6, 58, 58, 40, 30) + Achieved(47.5) + math, Thresholds(), kRegisterCapped).occupancy,
            OccupancyVerdict::kFine);
  // The launch does not cap it (32 registers: 100% theoretical).
  EXPECT_EQ(One(Sol(32.6, 58, 58, 40, 30) + Achieved(47.5) + LongScoreboardOnTop(), Thresholds(),
                Config("kern", 264, 1024, 32))
                .occupancy,
            OccupancyVerdict::kFine);
  // No stall reasons collected: nothing says the warps wait on latency.
  EXPECT_EQ(One(Sol(32.6, 58, 58, 40, 30) + Achieved(47.5), Thresholds(), kRegisterCapped).occupancy,
            OccupancyVerdict::kFine);
}

TEST(KernelVerdictTest, LatencyHidingOccupancyThresholdEdges) {
  const MetricValues mixed = Sol(32.6, 58, 58, 40, 30) + LongScoreboardOnTop();
  EXPECT_EQ(One(mixed + Achieved(49.9), Thresholds(), kRegisterCapped).occupancy, OccupancyVerdict::kProblem);
  EXPECT_EQ(One(mixed + Achieved(47.5), With("kernel_latency_hiding_occupancy_pct=47.5"), kRegisterCapped).occupancy,
            OccupancyVerdict::kFine);
  EXPECT_EQ(One(mixed + Achieved(47.4), With("kernel_latency_hiding_occupancy_pct=47.5"), kRegisterCapped).occupancy,
            OccupancyVerdict::kProblem);
}

// ---- stalls ----------------------------------------------------------------------------------------

TEST(KernelVerdictTest, DominantStallIsTheLargestActionableShare) {
  const MetricValues stalls = {{S(metric::kWarpCyclesPerIssue), 20},
                               {metric::StallMetric("long_scoreboard"), 12},
                               {metric::StallMetric("wait"), 2},
                               {metric::StallMetric("barrier"), 2},
                               {metric::StallMetric("not_selected"), 3},
                               {metric::StallMetric("selected"), 1}};
  const KernelVerdict v = One(Sol(20, 25, 15, 18, 25) + stalls);
  ASSERT_TRUE(v.top_stall.has_value());
  EXPECT_EQ(v.stalls[*v.top_stall].reason, "long_scoreboard");
  EXPECT_DOUBLE_EQ(v.stalls[*v.top_stall].share, 0.6);
  EXPECT_TRUE(Contains(v.stall_note, "60.0% of the 20.0 cycles")) << v.stall_note;
  EXPECT_TRUE(Contains(v.stall_note, "L1TEX")) << v.stall_note;
  EXPECT_TRUE(Contains(v.recommendation, "coalesced")) << v.recommendation;
}

TEST(KernelVerdictTest, IssuingAndWaitingToBeSelectedAreNotTheDominantStall) {
  const MetricValues stalls = {{S(metric::kWarpCyclesPerIssue), 10},
                               {metric::StallMetric("not_selected"), 5},
                               {metric::StallMetric("selected"), 1},
                               {metric::StallMetric("math_pipe_throttle"), 3}};
  const KernelVerdict v = One(Sol(80, 30, 20, 20) + stalls);
  ASSERT_TRUE(v.top_stall.has_value());
  EXPECT_EQ(v.stalls[0].reason, "not_selected");  // the largest ...
  EXPECT_EQ(v.stalls[*v.top_stall].reason, "math_pipe_throttle");  // ... but not the one to act on
}

// ---- roofline --------------------------------------------------------------------------------------

TEST(KernelVerdictTest, RooflinePositionFromFlopCountsAndDramBytes) {
  // 2 * 1e9 + 2e8 + 2e8 = 2.4e9 FP32 operations in 1 ms (the sol set's duration) over 1.2e9 DRAM bytes.
  const MetricValues roofline = {{S(metric::kFfma), 1e9},
                                 {S(metric::kFadd), 2e8},
                                 {S(metric::kFmul), 2e8},
                                 {S(metric::kDramBytes), 1.2e9},
                                 {S(metric::kTensorPipePct), 0}};
  const KernelVerdict v = One(Sol(20, 30, 25, 20) + roofline);
  const RooflinePoint& r = v.roofline;
  ASSERT_TRUE(r.present);
  EXPECT_EQ(r.precision, "FP32");
  EXPECT_DOUBLE_EQ(r.fp32_flop, 2.4e9);
  EXPECT_DOUBLE_EQ(r.flop_per_second, 2.4e12);
  EXPECT_DOUBLE_EQ(*r.intensity, 2.0);
  EXPECT_DOUBLE_EQ(*r.ridge, 12.5);
  EXPECT_TRUE(r.below_ridge());
  EXPECT_DOUBLE_EQ(*r.roof_pct, 25.0);  // the memory roof at 2 FLOP/B: 9.6 TFLOP/s
  EXPECT_DOUBLE_EQ(*r.peak_flops_pct, 4.0);
  EXPECT_TRUE(Contains(v.roofline_note, "2.4 TFLOP/s FP32")) << v.roofline_note;
  EXPECT_TRUE(Contains(v.roofline_note, "below the ridge")) << v.roofline_note;
  // FP64 work is judged against the FP64 roof.
  const KernelVerdict fp64 = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kDfma), 1e9},
                                              {S(metric::kDramBytes), 1e8}});
  EXPECT_EQ(fp64.roofline.precision, "FP64");
  EXPECT_DOUBLE_EQ(*fp64.roofline.ridge, 6.25);
}

// A cuBLAS GEMM on tensor cores: the H200's 8192^3 FP16 GEMM (1.1167e12 tensor operations in
// 1.44 ms, 1.41 GB of DRAM traffic) gets a roofline point against the FP16 tensor peak.
TEST(KernelVerdictTest, TensorCoreGemmsGetARooflinePoint) {
  const MetricValues gemm = {{S(metric::kTensorFp16), 1.1167e12},
                             {S(metric::kTensorBf16), 0},
                             {S(metric::kTensorTf32), 0},
                             {S(metric::kTensorFp8), 0},
                             {S(metric::kFfma), 1e6},
                             {S(metric::kDramBytes), 1.41e9},
                             {S(metric::kTensorPipePct), 90}};
  const KernelVerdict v = One(Sol(80, 30, 20, 20) + gemm);
  const RooflinePoint& r = v.roofline;
  ASSERT_TRUE(r.present);
  EXPECT_EQ(r.precision, "tensor FP16");
  EXPECT_DOUBLE_EQ(r.tensor_flop, 1.1167e12);
  ASSERT_TRUE(v.duration_ns.has_value());
  const double seconds = *v.duration_ns * 1e-9;  // the sol set's duration
  EXPECT_NEAR(r.flop_per_second, (1.1167e12 + 2e6) / seconds, 1e6);
  EXPECT_NEAR(*r.intensity, (1.1167e12 + 2e6) / 1.41e9, 1e-6);
  // 960 TFLOP/s FP16 tensor peak in the synthetic header, 4.8 TB/s DRAM: ridge 200 FLOP/B.
  EXPECT_DOUBLE_EQ(*r.ridge, 200.0);
  EXPECT_FALSE(r.below_ridge());
  EXPECT_NEAR(*r.peak_flops_pct, 100.0 * (1.1167e12 + 2e6) / seconds / 960e12, 1e-9);
  EXPECT_FALSE(Contains(v.roofline_note, "not in the FLOP count")) << v.roofline_note;
  EXPECT_TRUE(Contains(v.roofline_note, "tensor FP16")) << v.roofline_note;
}

TEST(KernelVerdictTest, EachTensorTypeIsJudgedAgainstItsOwnPeak) {
  const KernelVerdict tf32 = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kTensorTf32), 1e11},
                                              {S(metric::kTensorFp16), 1e10}, {S(metric::kDramBytes), 1e9}});
  EXPECT_EQ(tf32.roofline.precision, "tensor TF32");
  EXPECT_DOUBLE_EQ(*tf32.roofline.ridge, 100.0);  // half the FP16 tensor peak
  const KernelVerdict fp8 = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kTensorFp8), 1e11},
                                             {S(metric::kDramBytes), 1e9}});
  EXPECT_EQ(fp8.roofline.precision, "tensor FP8");
  EXPECT_DOUBLE_EQ(*fp8.roofline.ridge, 400.0);
}

// Negative control and edge: tensor counts of zero, or fewer than the CUDA-core FLOPs, leave the
// kernel judged by its CUDA-core precision; without the tensor counts the note says they are missing.
TEST(KernelVerdictTest, TensorCountsBelowTheCudaCoreFlopsDoNotChangeThePrecision) {
  const KernelVerdict zero = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kFfma), 1e9},
                                              {S(metric::kTensorFp16), 0}, {S(metric::kDramBytes), 1e9}});
  EXPECT_EQ(zero.roofline.precision, "FP32");
  const KernelVerdict equal = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kFfma), 1e9},
                                               {S(metric::kTensorFp16), 2e9}, {S(metric::kDramBytes), 1e9}});
  EXPECT_EQ(equal.roofline.precision, "FP32") << "2e9 tensor operations equal 2e9 FP32 FLOP: not more";
  const KernelVerdict more = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kFfma), 1e9},
                                              {S(metric::kTensorFp16), 2.1e9}, {S(metric::kDramBytes), 1e9}});
  EXPECT_EQ(more.roofline.precision, "tensor FP16");
  const KernelVerdict uncounted = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kFfma), 1e9},
                                                   {S(metric::kDramBytes), 1e9}, {S(metric::kTensorPipePct), 50}});
  EXPECT_TRUE(Contains(uncounted.roofline_note, "tensor-core math is not in the FLOP count")) << uncounted.roofline_note;
}

TEST(KernelVerdictTest, DramThroughputFromTheRooflineSetDecidesMemoryBound) {
  // No sol set: 4e9 bytes in 1 ms is 4 TB/s, 83.3% of 4.8 TB/s.
  const KernelVerdict v = One(MetricValues{{S(metric::kDuration), 1e6}, {S(metric::kFfma), 1e8},
                                           {S(metric::kDramBytes), 4e9}});
  EXPECT_EQ(v.bottleneck, Bottleneck::kMemory);
  EXPECT_TRUE(v.dram_derived);
  EXPECT_NEAR(*v.dram_pct, 83.333, 1e-3);
  EXPECT_TRUE(Contains(v.reason, "from dram__bytes / duration")) << v.reason;
}

// ---- missing metrics -------------------------------------------------------------------------------

TEST(KernelVerdictTest, WithoutTheSolSetTheVerdictSaysWhatItCouldNotDecide) {
  const KernelVerdict v = One(Achieved(50));
  EXPECT_EQ(v.bottleneck, Bottleneck::kUndetermined);
  EXPECT_TRUE(Contains(v.reason, "sol set")) << v.reason;
  EXPECT_TRUE(AnyContains(v.undecided, "sol set not collected"));
  EXPECT_TRUE(AnyContains(v.undecided, "stalls set not collected"));
  EXPECT_TRUE(AnyContains(v.undecided, "roofline set not collected"));
  EXPECT_EQ(v.recoverable_ns, 0u);
  EXPECT_TRUE(Contains(v.recommendation, "collect sol, stalls, roofline for this kernel")) << v.recommendation;
  EXPECT_TRUE(Contains(v.recommendation, "CUSCOPE_METRICS")) << v.recommendation;
}

TEST(KernelVerdictTest, ASetRequestedButNotProducedIsSaidSo) {
  SyntheticTrace s;
  ProgramWith(s, Sol(75, 50, 30, 35, 50), Config("kern", 264, 256));
  for (const std::string& m : core::MetricSet("sol")) s.header().mutable_config()->add_metrics(m);
  for (const std::string& m : core::MetricSet("stalls")) s.header().mutable_config()->add_metrics(m);
  const std::vector<KernelVerdict> v = JudgeTrace(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(AnyContains(v[0].undecided, "stalls set not collected (it was requested")) << v[0].undecided.size();
  EXPECT_TRUE(AnyContains(v[0].undecided, "roofline set not collected: "));  // not requested
}

TEST(KernelVerdictTest, MemoryThroughputWithoutItsBreakdownDoesNotMakeMemoryBound) {
  const KernelVerdict v = One(MetricValues{{S(metric::kSmThroughputPct), 30}, {S(metric::kMemoryThroughputPct), 90}});
  EXPECT_EQ(v.bottleneck, Bottleneck::kUndetermined);
  EXPECT_TRUE(Contains(v.reason, "without the DRAM and L2 breakdown")) << v.reason;
  // Nor does a busy L1 without DRAM and L2 measured.
  EXPECT_EQ(One(MetricValues{{S(metric::kSmThroughputPct), 30}, {S(metric::kL1ThroughputPct), 90}}).bottleneck,
            Bottleneck::kUndetermined);
  // SM throughput near peak decides without the breakdown.
  EXPECT_EQ(One(MetricValues{{S(metric::kSmThroughputPct), 80}, {S(metric::kMemoryThroughputPct), 90}}).bottleneck,
            Bottleneck::kCompute);
  // A low maximum over all memory units is enough to call it far from the memory roof.
  EXPECT_EQ(One(MetricValues{{S(metric::kSmThroughputPct), 10}, {S(metric::kMemoryThroughputPct), 12}}).bottleneck,
            Bottleneck::kLatency);
}

TEST(KernelVerdictTest, SmThroughputAloneCannotRuleOutMemoryBound) {
  const KernelVerdict v = One(MetricValues{{S(metric::kSmThroughputPct), 30}});
  EXPECT_EQ(v.bottleneck, Bottleneck::kUndetermined);
  EXPECT_TRUE(Contains(v.reason, "no memory throughput was collected")) << v.reason;
}

TEST(KernelVerdictTest, DeviceMissingFromTheHeaderLeavesTheoreticalOccupancyUnknown) {
  SyntheticTrace s;  // no device in the header
  for (int i = 0; i < 3; ++i) s.KernelWith(Config("kern", 264, 256), i * 1000.0, 1000);
  s.ProfiledLaunch(Config("kern", 264, 256), 5000, 1000, Sol(20, 25, 15, 18));
  const std::vector<KernelVerdict> v = JudgeTrace(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].bottleneck, Bottleneck::kLatency);
  EXPECT_FALSE(v[0].theoretical.has_value());
  EXPECT_EQ(v[0].theoretical_error, "device 0 is not in the trace header");
}

TEST(KernelVerdictTest, MetricRowWithoutItsKernelRecordGroupsByName) {
  SyntheticTrace s;
  s.AddDevice(H200Device());
  for (int i = 0; i < 4; ++i) s.KernelWith(Config("kern", 264, 256), i * 1000.0, 1000);
  s.Metrics(/*correlation=*/999999, "kern", 0, 10000, 1000, Sol(75, 30, 30, 30));
  const std::vector<KernelVerdict> v = JudgeTrace(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].launch_known);
  EXPECT_EQ(v[0].bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(v[0].timeline_launches, 4u);
  EXPECT_TRUE(AnyContains(v[0].undecided, "kernel record (launch configuration) is not in the trace"));
}

// ---- grouping and time -------------------------------------------------------------------------------

TEST(KernelVerdictTest, LaunchesOfOneShapeAreAveragedAndShapesKeptApart) {
  SyntheticTrace s;
  s.AddDevice(H200Device());
  for (int i = 0; i < 10; ++i) s.KernelWith(Config("kern", 264, 256), i * 1000.0, 1000);
  s.KernelWith(Config("kern", 8, 256), 10000, 500);
  s.ProfiledLaunch(Config("kern", 264, 256), 20000, 1000, Sol(70, 30, 30, 30));
  s.ProfiledLaunch(Config("kern", 264, 256), 22000, 1000, Sol(50, 30, 30, 30));
  s.ProfiledLaunch(Config("kern", 8, 256), 24000, 1000, Sol(10, 10, 5, 5, -1, 5e5));
  const std::vector<KernelVerdict> v = JudgeTrace(s);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].GridText(), "264 1 1");
  EXPECT_EQ(v[0].profiled_launches, 2u);
  EXPECT_DOUBLE_EQ(*v[0].sm_pct, 60.0);  // the mean of 70 and 50: at the threshold
  EXPECT_EQ(v[0].bottleneck, Bottleneck::kCompute);
  EXPECT_EQ(v[0].timeline_launches, 10u);
  // 10 x 1 ms on the timeline plus the two replayed launches' measured 1 ms each.
  EXPECT_EQ(v[0].gpu_time_ns, 12'000'000u);
  EXPECT_EQ(v[1].GridText(), "8 1 1");
  EXPECT_EQ(v[1].bottleneck, Bottleneck::kLatency);
  EXPECT_EQ(v[1].gpu_time_ns, 1'000'000u);
  EXPECT_NEAR(v[0].kernel_time_share, 12.0 / 13.0, 1e-12);

  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const KernelInternalsSummary sum = SummarizeVerdicts(JudgeKernels(timeline, Thresholds()), timeline);
  EXPECT_EQ(sum.groups, 2u);
  EXPECT_EQ(sum.profiled_launches, 3u);
  EXPECT_EQ(sum.kernel_time_ns, 13'000'000u);
  EXPECT_EQ(sum.time_by_bottleneck[static_cast<int>(Bottleneck::kCompute)], 12'000'000u);
  EXPECT_EQ(sum.time_by_bottleneck[static_cast<int>(Bottleneck::kLatency)], 1'000'000u);
}

TEST(KernelVerdictTest, NoMetricRowsNoVerdicts) {
  SyntheticTrace s;
  s.AddDevice(H200Device());
  s.KernelWith(Config("kern", 264, 256), 0, 1000);
  EXPECT_TRUE(JudgeTrace(s).empty());
}

// ---- the rule's findings ---------------------------------------------------------------------------

std::vector<Finding> Findings(const MetricValues& values) {
  SyntheticTrace s;
  ProgramWith(s, values, Config("kern", 264, 256));
  const core::Trace trace = s.Load();
  return KernelInternalsRule(Timeline::Build(trace), Thresholds());
}

TEST(KernelInternalsRule, SeverityFollowsTheTimeTheKernelCouldRecover) {
  // Latency-bound: at 25% of the nearest roof, three quarters of its 11 ms could go.
  const std::vector<Finding> slow = Findings(Sol(20, 25, 15, 18, 25));
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rule_id, "kernel.internals");
  EXPECT_EQ(slow[0].recoverable_ns, 8'250'000u);
  EXPECT_EQ(slow[0].severity, Severity::kError);
  // Compute-bound at 95%: 0.55 ms at most, under the 1 ms floor: info.
  const std::vector<Finding> near_roof = Findings(Sol(95, 30, 30, 30));
  ASSERT_EQ(near_roof.size(), 1u);
  EXPECT_EQ(near_roof[0].severity, Severity::kInfo);
  // Undetermined: no claim.
  const std::vector<Finding> unknown = Findings(Achieved(50));
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].severity, Severity::kInfo);
  EXPECT_EQ(unknown[0].recoverable_ns, 0u);
}

TEST(KernelInternalsRule, FindingCarriesEveryMetricWithItsUnit) {
  const std::vector<Finding> f = Findings(Sol(75, 50, 30, 35, 50) + Achieved(60));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(Contains(f[0].headline, "kern [grid 264 1 1, block 256 1 1]: compute-bound")) << f[0].headline;
  auto unit_of = [&f](std::string_view key) {
    for (const Number& n : f[0].numbers) {
      if (n.key == key) return n.unit;
    }
    return std::string("(missing)");
  };
  EXPECT_EQ(*f[0].number(metric::kSmThroughputPct), 75);
  EXPECT_EQ(unit_of(metric::kSmThroughputPct), "%");
  EXPECT_EQ(unit_of(metric::kDuration), "ns");
  EXPECT_EQ(unit_of(metric::kAchievedActiveWarps), "warps");
  EXPECT_EQ(*f[0].number("theoretical_occupancy_pct"), 100);
  EXPECT_EQ(*f[0].number("occupancy_limit_registers"), 8);
}

// DRAM from a multi-pass replay reads a few points above ncu's: said where the value is shown,
// not for a one-pass collection, and not without a DRAM or L2 value.
TEST(KernelVerdictTest, DramFromAMultiPassReplayCarriesItsBias) {
  const KernelVerdict multi = One(Sol(30, 40, 11.4, 20));
  EXPECT_EQ(multi.pass_count, 8u);
  const std::string shown = RenderVerdictDetails(multi, "");
  EXPECT_TRUE(Contains(shown, "DRAM 11.4%")) << shown;
  EXPECT_TRUE(Contains(shown, "note: DRAM and L2 from 8 replay passes read a few points above ncu's")) << shown;

  SyntheticTrace one_pass;
  one_pass.set_metric_passes(1);
  ProgramWith(one_pass, Sol(30, 40, 11.4, 20), Config("kern", 264, 256));
  const std::vector<KernelVerdict> v = JudgeTrace(one_pass);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].pass_count, 1u);
  EXPECT_EQ(ReplayBiasNote(v[0]), "");
  EXPECT_FALSE(Contains(RenderVerdictDetails(v[0], ""), "note: "));

  EXPECT_EQ(ReplayBiasNote(One(Sol(80, 40, -1, -1))), "") << "no DRAM or L2 value";
  EXPECT_NE(ReplayBiasNote(One(Sol(80, 40, -1, 20))), "") << "L2 alone";
}

}  // namespace
}  // namespace cuscope::analysis
