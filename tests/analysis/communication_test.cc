// NCCL in one trace: kernel names of every NCCL era, the calls' NVTX payloads, the join of calls to
// kernels, overlap and exposed time, the comm.exposed rule and the nccl_sum table.
#include "lib/analysis/communication.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/nccl.h"
#include "lib/analysis/nccl_summary.h"
#include "lib/analysis/rules/rules.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using ::testing::HasSubstr;
using testing::SyntheticTrace;

TEST(NcclKernelNameTest, TodaysNamesGiveTheCollectiveAndTheVariant) {
  NcclKernelName n = ParseNcclKernelName("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_TRUE(n.nccl);
  EXPECT_EQ(n.collective, Collective::kAllReduce);
  EXPECT_EQ(n.reduction, "Sum");
  EXPECT_EQ(n.data_type, "f32");
  EXPECT_EQ(n.algorithm, "RING");
  EXPECT_EQ(n.protocol, "LL");
  EXPECT_TRUE(n.specialization);

  n = ParseNcclKernelName("_Z44ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_EQ(n.collective, Collective::kReduceScatter);
  EXPECT_EQ(n.data_type, "bf16");
  n = ParseNcclKernelName("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_EQ(n.collective, Collective::kAllGather);
  EXPECT_EQ(n.reduction, "");
  EXPECT_EQ(n.algorithm, "RING");
  n = ParseNcclKernelName("_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_EQ(n.collective, Collective::kSendRecv);
  n = ParseNcclKernelName("ncclDevKernel_AllReduce_Sum_bf16_COLLNET_DIRECT_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(n.algorithm, "COLLNET_DIRECT") << "an algorithm with an underscore, demangled";
  EXPECT_EQ(n.protocol, "SIMPLE");
  n = ParseNcclKernelName("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE");
  EXPECT_TRUE(n.nccl);
  EXPECT_EQ(n.collective, Collective::kUnknown) << "Generic hides the collective";
  n = ParseNcclKernelName("_Z48ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf1621ncclSymkDevWorkArgs4K");
  EXPECT_EQ(n.collective, Collective::kAllReduce);
  EXPECT_EQ(n.algorithm, "RSxLD_AGxST");
  EXPECT_EQ(n.reduction, "sum");
  EXPECT_EQ(n.data_type, "bf16");
}

TEST(NcclKernelNameTest, OlderNamesGiveTheAlgorithmRun) {
  NcclKernelName n = ParseNcclKernelName("_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork");
  EXPECT_EQ(n.collective, Collective::kAllReduce);
  EXPECT_EQ(n.algorithm, "RING");
  EXPECT_EQ(n.protocol, "LL");
  EXPECT_EQ(n.reduction, "Sum");
  EXPECT_EQ(n.data_type, "float");
  EXPECT_FALSE(n.specialization);
  n = ParseNcclKernelName("_Z46ncclKernel_AllReduce_RING_LL_Sum___nv_bfloat16P11ncclDevCommmP8ncclWork");
  EXPECT_EQ(n.data_type, "__nv_bfloat16");
  n = ParseNcclKernelName("_Z42ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_tP11ncclDevCommmP8ncclWork");
  EXPECT_EQ(n.collective, Collective::kSendRecv);
  EXPECT_EQ(n.protocol, "SIMPLE");
  EXPECT_EQ(n.data_type, "int8_t");
  n = ParseNcclKernelName("ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)");
  EXPECT_EQ(n.collective, Collective::kAllReduce);
  EXPECT_EQ(n.algorithm, "RING");
  EXPECT_EQ(n.protocol, "LL");
  EXPECT_EQ(n.reduction, "sum");
  EXPECT_EQ(n.data_type, "f32");
}

TEST(NcclKernelNameTest, OtherKernelsAreNotNccl) {
  for (const char* name : {"_Z6vecaddPfS_S_i", "ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel",
                           "_Z10my_ncclishv", "", "_Z"}) {
    EXPECT_FALSE(ParseNcclKernelName(name).nccl) << name;
  }
  EXPECT_TRUE(ParseNcclKernelName("ncclKernel_Something_new").nccl);
  EXPECT_TRUE(ParseNcclKernelName("ncclSomethingNew").nccl) << "any nccl kernel is communication";
}

std::string Payload(uint64_t comm, uint64_t bytes, int32_t extra, size_t size) {
  std::string d(size, '\0');
  size_t at = 0;
  if (size == 24 || (size == 16 && extra == -1)) {
    std::memcpy(d.data(), &comm, 8);
    at = 8;
  }
  std::memcpy(d.data() + at, &bytes, 8);
  if (extra >= 0 && at + 12 <= size) std::memcpy(d.data() + at + 8, &extra, 4);
  return d;
}

constexpr uint64_t kSchema = (uint64_t{1} << 24) + 5;

TEST(NcclPayloadTest, EachLayoutByItsSize) {
  // NCCL 2.25+: {comm, bytes, op}.
  auto p = DecodeNcclPayload("ncclAllReduce", kSchema, Payload(0xabc, 1 << 20, 0, 24));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->communicator, 0xabcu);
  EXPECT_EQ(p->bytes, 1u << 20);
  EXPECT_EQ(p->reduction, 0);
  // Before 2.25: {bytes, op}.
  p = DecodeNcclPayload("ncclAllReduce", kSchema, Payload(0, 4096, 2, 16));
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->communicator.has_value());
  EXPECT_EQ(p->bytes, 4096u);
  EXPECT_EQ(p->reduction, 2) << "ncclMax";
  // AllGather: {comm, bytes} from 2.25, {bytes} before.
  p = DecodeNcclPayload("ncclAllGather", kSchema, Payload(7, 512, -1, 16));
  EXPECT_EQ(p->communicator, 7u);
  EXPECT_EQ(p->bytes, 512u);
  p = DecodeNcclPayload("ncclAllGather", kSchema, Payload(0, 256, -2, 8));
  EXPECT_EQ(p->bytes, 256u);
  EXPECT_FALSE(p->communicator.has_value());
  // Send: the peer; Broadcast: the root.
  EXPECT_EQ(DecodeNcclPayload("ncclSend", kSchema, Payload(1, 64, 3, 24))->peer, 3);
  EXPECT_EQ(DecodeNcclPayload("ncclBroadcast", kSchema, Payload(1, 64, 0, 24))->root, 0);
}

TEST(NcclPayloadTest, WhatIsNotNcclsIsNotDecoded) {
  EXPECT_FALSE(DecodeNcclPayload("ncclAllReduce", 5, Payload(1, 2, 0, 24)).has_value()) << "not a static schema";
  EXPECT_FALSE(DecodeNcclPayload("ncclAllReduce", kSchema, std::string(7, '\0')).has_value()) << "no layout";
  EXPECT_FALSE(DecodeNcclPayload("ncclAllReduce", kSchema, std::string(200, '\0')).has_value());
  EXPECT_FALSE(DecodeNcclPayload("ncclCommInitRank", kSchema, Payload(1, 2, 0, 24)).has_value()) << "no collective";
  EXPECT_FALSE(DecodeNcclPayload("myAllReduce", kSchema, Payload(1, 2, 0, 24)).has_value());
}

TEST(NcclBandwidthTest, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kBroadcast, 4), 1);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 1), 0) << "one rank moves nothing";
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kUnknown, 4), 0);
  EXPECT_DOUBLE_EQ(AlgorithmBytes(Collective::kAllGather, 100, 4), 400) << "per-rank count times the ranks";
  EXPECT_DOUBLE_EQ(AlgorithmBytes(Collective::kAllReduce, 100, 4), 100);
}

constexpr const char* kAllReduceKernel = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
constexpr const char* kAllGatherKernel = "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE";

// A step of a data-parallel job: 1,000 us of compute on stream 7, an all-reduce of 64 MiB; with
// `overlap`, the all-reduce runs on stream 9 beside the second half of the compute.
SyntheticTrace Step(bool overlap, int steps = 10) {
  SyntheticTrace t;
  t.header().mutable_session()->set_world_size(8);
  for (int s = 0; s < steps; ++s) {
    const double t0 = s * 2000.0;
    t.Launch("_Z4gemmPKfS0_Pf", t0, 5, t0 + 10, 1000);
    const double comm_start = overlap ? t0 + 500 : t0 + 1010;
    t.NcclCall("ncclAllReduce", comm_start - 20, comm_start - 5, 0xc0ffee, 64ull << 20, 0);
    // The launch inside the call's range (cuLaunchKernelEx), on the same thread.
    const uint64_t corr = t.Api("cuLaunchKernelEx", comm_start - 15, 5);
    t.Kernel(kAllReduceKernel, comm_start, 400, 9, corr);
  }
  return t;
}

TEST(CommunicationTest, KernelsAreJoinedToTheirCallsAndOverlapIsMeasured) {
  SyntheticTrace t = Step(/*overlap=*/true);
  const core::Trace trace = t.Load();
  const Timeline timeline = Timeline::Build(trace);
  const Communication comm = BuildCommunication(timeline);
  ASSERT_EQ(comm.ops.size(), 10u);
  ASSERT_EQ(comm.calls.size(), 10u);
  EXPECT_TRUE(comm.has_payloads);
  for (const CommunicationOp& op : comm.ops) {
    EXPECT_EQ(op.collective, Collective::kAllReduce);
    EXPECT_EQ(op.bytes, 64ull << 20);
    EXPECT_EQ(op.communicator, 0xc0ffeeu);
    EXPECT_EQ(op.calls, 1u);
  }
  for (const NcclCall& c : comm.calls) EXPECT_TRUE(c.ran_kernel);
  ASSERT_EQ(comm.devices.size(), 1u);
  EXPECT_EQ(comm.devices[0].communication_ns, 10 * 400'000u);
  EXPECT_EQ(comm.devices[0].overlapped_ns, 10 * 400'000u) << "all of it beside the gemm";
  EXPECT_EQ(comm.devices[0].exposed_ns(), 0u);
  EXPECT_TRUE(CommunicationRule(timeline, Thresholds()).empty()) << "negative control: overlapped";
}

TEST(CommunicationTest, ExposedCommunicationIsReportedWithTheCollective) {
  SyntheticTrace t = Step(/*overlap=*/false);
  const core::Trace trace = t.Load();
  const Timeline timeline = Timeline::Build(trace);
  const std::vector<Finding> findings = CommunicationRule(timeline, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.rule_id, "comm.exposed");
  EXPECT_THAT(f.headline, HasSubstr("communication not overlapped on GPU 0"));
  EXPECT_THAT(f.headline, HasSubstr("AllReduce on the critical path"));
  EXPECT_EQ(f.number("exposed_ns"), 10 * 400'000.0);
  EXPECT_EQ(f.recoverable_ns, 10 * 400'000u);
  ASSERT_FALSE(f.offenders.empty());
  EXPECT_EQ(f.offenders[0].name, "AllReduce");
}

// The threshold's edge: exposed time just under and at comm_exposed_min_share of the active span.
TEST(CommunicationTest, TheExposedShareThresholdEdge) {
  SyntheticTrace t = Step(/*overlap=*/false, 1);
  const core::Trace trace = t.Load();
  const Timeline timeline = Timeline::Build(trace);
  // Active span: 10 us (gemm start) to 1,410 us (all-reduce end) = 1,400 us; exposed 400 us = 28.6%.
  Thresholds at;
  at.min_recoverable_ms = 0;
  at.comm_exposed_min_share = 399.9 / 1400.0;
  EXPECT_EQ(CommunicationRule(timeline, at).size(), 1u);
  Thresholds above = at;
  above.comm_exposed_min_share = 400.1 / 1400.0;
  EXPECT_TRUE(CommunicationRule(timeline, above).empty());
}

// ncclGroupStart; ncclAllGather x2; ncclGroupEnd launches one kernel for both.
TEST(CommunicationTest, AGroupsKernelGetsEveryCallOfTheGroup) {
  SyntheticTrace t;
  t.NcclCall("ncclGroupStart", 0, 1, 0, 0);
  t.NcclCall("ncclAllGather", 2, 3, 0xabc, 1000);
  t.NcclCall("ncclAllGather", 4, 5, 0xabc, 3000);
  t.NcclCall("ncclGroupEnd", 6, 20, 0, 0);
  const uint64_t corr = t.Api("cuLaunchKernelEx", 8, 5);
  t.Kernel(kAllGatherKernel, 30, 100, 9, corr);
  const core::Trace trace = t.Load();
  const Communication comm = BuildCommunication(Timeline::Build(trace));
  ASSERT_EQ(comm.ops.size(), 1u);
  EXPECT_EQ(comm.ops[0].calls, 2u);
  EXPECT_EQ(comm.ops[0].bytes, 4000u);
  EXPECT_EQ(comm.ops[0].communicator, 0xabcu);
}

// Nested groups launch at the outermost ncclGroupEnd: its kernel gets the collectives of both; an
// inner group's end launches nothing. A second kernel of the group gets no call twice.
TEST(CommunicationTest, NestedGroupsBelongToTheOutermostEnd) {
  SyntheticTrace t;
  t.NcclCall("ncclGroupStart", 0, 1, 0, 0);
  t.NcclCall("ncclAllGather", 2, 3, 0xabc, 1000);
  t.NcclCall("ncclGroupStart", 4, 5, 0, 0);
  t.NcclCall("ncclAllGather", 6, 7, 0xabc, 2000);
  t.NcclCall("ncclGroupEnd", 8, 9, 0, 0);
  t.NcclCall("ncclAllGather", 10, 11, 0xabc, 4000);
  t.NcclCall("ncclGroupEnd", 12, 40, 0, 0);
  t.Kernel(kAllGatherKernel, 50, 100, 9, t.Api("cuLaunchKernelEx", 14, 5));
  t.Kernel(kAllGatherKernel, 50, 100, 10, t.Api("cuLaunchKernelEx", 24, 5));
  const core::Trace trace = t.Load();
  const Communication comm = BuildCommunication(Timeline::Build(trace));
  ASSERT_EQ(comm.ops.size(), 2u);
  EXPECT_EQ(comm.ops[0].calls + comm.ops[1].calls, 3u);
  EXPECT_EQ(comm.ops[0].bytes.value_or(0) + comm.ops[1].bytes.value_or(0), 7000u);
}

// A launch inside a range NCCL opened within its call (any range of its domain) joins the call
// around it; a kernel launched outside every range joins none, however many calls came before.
TEST(CommunicationTest, TheEnclosingCallIsFoundThroughInnerRanges) {
  SyntheticTrace t;
  t.NcclCall("ncclAllReduce", 0, 50, 0x1, 4096);
  t.NcclCall("ncclCommCount", 10, 30, 0, 0);  // inside the all-reduce's range
  t.Kernel(kAllReduceKernel, 60, 10, 9, t.Api("cuLaunchKernelEx", 20, 5));
  for (int i = 0; i < 100; ++i) t.NcclCall("ncclAllReduce", 100.0 + 2 * i, 101.0 + 2 * i, 0x1, 8);
  t.Kernel(kAllReduceKernel, 400, 10, 9, t.Api("cuLaunchKernelEx", 350, 5));
  const core::Trace trace = t.Load();
  const Communication comm = BuildCommunication(Timeline::Build(trace));
  ASSERT_EQ(comm.ops.size(), 2u);
  EXPECT_EQ(comm.ops[0].calls, 1u);
  EXPECT_EQ(comm.ops[0].bytes, 4096u);
  EXPECT_EQ(comm.ops[1].calls, 0u);
  EXPECT_FALSE(comm.ops[1].bytes.has_value());
}

// A one-rank communicator: NCCL copies (or does nothing) and launches no kernel; the calls and
// their bytes are still seen, and the table says so.
TEST(CommunicationTest, CallsWithoutKernelsAreCountedInTheTable) {
  SyntheticTrace t;
  t.header().mutable_session()->set_world_size(1);
  for (int i = 0; i < 3; ++i) t.NcclCall("ncclAllReduce", i * 100.0, i * 100.0 + 10, 0x1, 4096);
  t.Launch("_Z4gemmPKfS0_Pf", 0, 5, 10, 100);
  const core::Trace trace = t.Load();
  const Timeline timeline = Timeline::Build(trace);
  const Communication comm = BuildCommunication(timeline);
  EXPECT_TRUE(comm.ops.empty());
  EXPECT_EQ(comm.calls.size(), 3u);
  for (const NcclCall& c : comm.calls) EXPECT_FALSE(c.ran_kernel);
  const Table table = NcclSummary(timeline);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][2], "0") << "kernels";
  EXPECT_EQ(table.rows[0][7], "3") << "calls";
  EXPECT_EQ(table.rows[0][12], "AllReduce");
}

TEST(NcclSummaryTest, TimeBytesAndBusBandwidthPerCollective) {
  SyntheticTrace t = Step(/*overlap=*/false, 4);
  const core::Trace trace = t.Load();
  const Table table = NcclSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 1u);
  const std::vector<std::string>& row = table.rows[0];
  EXPECT_EQ(row[1], "1600000") << "4 x 400 us";
  EXPECT_EQ(row[2], "4");
  EXPECT_EQ(row[7], "4");
  EXPECT_EQ(row[8], std::to_string(4 * (64ull << 20)));
  // 64 MiB in 400 us: 167.8 GB/s algorithm bandwidth; bus bandwidth x 2 * 7 / 8 for 8 ranks.
  EXPECT_EQ(row[9], "167.8");
  EXPECT_EQ(row[10], "293.6");
  EXPECT_EQ(row[11], "1600000") << "all exposed";
  EXPECT_EQ(row[12], "AllReduce");
  EXPECT_EQ(row[13], "RING LL");
}

// `analyze` shows nccl_sum among its tables for a trace with NCCL, and not for one without.
TEST(NcclSummaryTest, AnalyzeShowsItOnlyWhereThereIsCommunication) {
  const auto has_table = [](const core::Trace& trace) {
    const Analysis a = Analyze(trace, AnalyzeOptions());
    return std::any_of(a.tables.begin(), a.tables.end(), [](const Table& t) { return t.name == "nccl_sum"; });
  };
  SyntheticTrace nccl = Step(/*overlap=*/true, 2);
  EXPECT_TRUE(has_table(nccl.Load()));
  SyntheticTrace plain;
  plain.Launch("_Z4gemmPKfS0_Pf", 0, 5, 10, 100);
  EXPECT_FALSE(has_table(plain.Load()));
}

}  // namespace
}  // namespace cuscope::analysis
