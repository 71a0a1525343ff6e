// The collector on a real GPU: a program doing exactly known work must yield a trace with exactly
// that work, and profiling must not change what a program prints or returns.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/trace.h"
#include "tests/gpu/gpu_test_support.h"

namespace cuscope {
namespace {

using testing::ParseKeyValues;
using testing::RunCommand;
using testing::TempTracePath;

// The build tree as laid out around this test binary (bin/, lib/, examples/), so a build folder
// copied to another machine still finds its pieces.
const std::string kBuild = testing::BuildTree::Dir();
const std::string kCli = testing::BuildTree::Cli();
const std::string kLibrary = testing::BuildTree::Library();
const std::string kKnownWork = testing::BuildTree::Example("known_work");

class CollectorGpuTest : public testing::GpuTest {};

uint64_t ToU64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }

TEST_F(CollectorGpuTest, KnownWorkIsRecordedExactly) {
  const std::string trace = TempTracePath("known_work");
  auto run = RunCommand(absl::StrCat(kCli, " profile -o ", trace, " -- ", kKnownWork, " --small 1000 --big 500"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto kv = ParseKeyValues(run.output);
  ASSERT_EQ(kv["launches_known_small"], "1000");
  const uint64_t host_begin = ToU64(kv["host_begin_ns"]);
  const uint64_t host_end = ToU64(kv["host_end_ns"]);

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated());
  ASSERT_TRUE(t->stats.has_value());
  EXPECT_EQ(t->stats->records_dropped_by_cupti(), 0u);
  EXPECT_EQ(t->stats->buffers_refused_at_cap(), 0u);
  EXPECT_GT(t->stats->callback_time_ns(), 0u);
  ASSERT_GE(t->header.devices_size(), 1);
  EXPECT_GT(t->header.devices(0).sm_count(), 0u);

  // Kernels: exact counts, configurations and streams.
  std::map<uint64_t, const core::ApiCallRow*> api_by_corr;
  for (const auto& a : t->api_calls) {
    if (t->dict.function(a.function).domain() == v1::API_DOMAIN_RUNTIME) api_by_corr[a.correlation_id] = &a;
  }
  int small = 0, big = 0;
  std::set<uint32_t> small_streams, big_streams, launch_threads;
  for (const auto& k : t->kernels) {
    const auto& s = t->dict.signature(k.signature);
    const std::string& name = t->dict.str(s.name());
    EXPECT_GE(k.start, host_begin) << name;
    EXPECT_LE(k.end, host_end) << name;
    EXPECT_GT(k.end, k.start);
    EXPECT_FALSE(k.replayed());
    if (absl::StrContains(name, "known_small")) {
      ++small;
      EXPECT_EQ(s.grid_x(), 4);
      EXPECT_EQ(s.block_x(), 128);
      EXPECT_EQ(s.static_shared_memory(), 0);
      small_streams.insert(k.stream);
    } else if (absl::StrContains(name, "known_big")) {
      ++big;
      EXPECT_EQ(s.grid_x(), 256);
      EXPECT_EQ(s.block_x(), 256);
      EXPECT_EQ(s.static_shared_memory(), 1024);
      big_streams.insert(k.stream);
    } else {
      continue;
    }
    // Each kernel links to the runtime call that launched it, on the launching thread.
    auto it = api_by_corr.find(k.correlation_id);
    ASSERT_NE(it, api_by_corr.end()) << "kernel without its launch call, corr " << k.correlation_id;
    EXPECT_TRUE(absl::StartsWith(t->dict.function_name(it->second->function), "cudaLaunchKernel"))
        << t->dict.function_name(it->second->function);
    EXPECT_LE(it->second->start, k.start);
    launch_threads.insert(it->second->thread);
  }
  EXPECT_EQ(small, 1000);
  EXPECT_EQ(big, 500);
  EXPECT_EQ(small_streams.size(), 1u);
  EXPECT_EQ(big_streams.size(), 1u);
  EXPECT_NE(*small_streams.begin(), *big_streams.begin());
  EXPECT_EQ(launch_threads.size(), 1u);

  // Copies of known sizes and memory kinds.
  int h2d_pageable = 0, h2d_pinned = 0, d2h_pageable = 0, d2h_pinned = 0;
  for (const auto& m : t->memcpys) {
    EXPECT_GE(m.start, host_begin);
    EXPECT_LE(m.end, host_end);
    if (m.copy_kind == v1::COPY_KIND_HTOD && m.bytes == 1048576) {
      (m.src_kind == v1::MEMORY_KIND_PAGEABLE ? h2d_pageable : h2d_pinned)++;
      if (m.src_kind == v1::MEMORY_KIND_PINNED) {
        EXPECT_TRUE(m.async);
      }
    }
    if (m.copy_kind == v1::COPY_KIND_DTOH && m.bytes == 2097152) {
      (m.dst_kind == v1::MEMORY_KIND_PAGEABLE ? d2h_pageable : d2h_pinned)++;
    }
  }
  EXPECT_EQ(h2d_pageable, 1);
  EXPECT_EQ(h2d_pinned, 1);
  EXPECT_EQ(d2h_pageable, 1);
  EXPECT_EQ(d2h_pinned, 1);
  int memsets = 0;
  for (const auto& m : t->memsets) memsets += m.bytes == 4096;
  EXPECT_EQ(memsets, 1);

  // Synchronization: the API calls are exact; CUPTI's sync records cover them.
  int stream_sync_calls = 0, device_sync_calls = 0;
  for (const auto& a : t->api_calls) {
    const std::string& n = t->dict.function_name(a.function);
    if (a.start < host_begin || a.end > host_end) continue;
    stream_sync_calls += absl::StartsWith(n, "cudaStreamSynchronize");
    device_sync_calls += absl::StartsWith(n, "cudaDeviceSynchronize");
  }
  EXPECT_EQ(stream_sync_calls, 3);
  EXPECT_EQ(device_sync_calls, 2);
  int stream_sync_records = 0, context_sync_records = 0;
  for (const auto& s : t->syncs) {
    stream_sync_records += s.type == v1::SYNC_TYPE_STREAM_SYNCHRONIZE;
    context_sync_records += s.type == v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE;
  }
  EXPECT_GE(stream_sync_records, 3);
  EXPECT_GE(context_sync_records, 2);

  // NVTX ranges and the mark.
  std::multiset<std::string> starts, marks;
  int ends = 0;
  for (const auto& n : t->nvtx) {
    if (n.kind == v1::NVTX_KIND_RANGE_START) starts.insert(t->dict.str(n.name));
    if (n.kind == v1::NVTX_KIND_RANGE_END) ++ends;
    if (n.kind == v1::NVTX_KIND_MARK) marks.insert(t->dict.str(n.name));
  }
  EXPECT_EQ(starts.count("known_outer"), 1u);
  EXPECT_EQ(starts.count("known_inner"), 1u);
  EXPECT_EQ(marks.count("known_mark"), 1u);
  EXPECT_GE(ends, 2);
}

TEST_F(CollectorGpuTest, ProfiledProgramPrintsAndReturnsTheSame) {
  const std::string trace = TempTracePath("same_output");
  auto plain = RunCommand(absl::StrCat(kKnownWork, " --small 20 --big 10 | grep -v _ns="));
  auto profiled =
      RunCommand(absl::StrCat(kCli, " profile -q -o ", trace, " -- ", kKnownWork, " --small 20 --big 10 | grep -v _ns="));
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(profiled.exit_code, plain.exit_code);
  EXPECT_EQ(profiled.output, plain.output);
  // The exit code of a failing program comes through unchanged.
  auto bad = RunCommand(absl::StrCat(kCli, " profile -q -f -o ", trace, " -- ", kKnownWork, " --small"));
  EXPECT_EQ(bad.exit_code, 2);
}

TEST_F(CollectorGpuTest, InjectionByEnvironmentAndPreloadBothWork) {
  const std::string t1 = TempTracePath("inject_env");
  auto r1 = RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary, " CUSCOPE_OUTPUT=", t1, " ",
                                    kKnownWork, " --small 5 --big 3 2>&1"));
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  auto trace1 = core::LoadTrace(t1);
  ASSERT_TRUE(trace1.ok()) << trace1.status() << r1.output;
  EXPECT_EQ(trace1->header.session().entry(), "injection");
  const std::string t2 = TempTracePath("inject_preload");
  auto r2 = RunCommand(absl::StrCat("LD_PRELOAD=", kLibrary, " CUSCOPE_OUTPUT=", t2, " ", kKnownWork,
                                    " --small 5 --big 3 2>&1"));
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  auto trace2 = core::LoadTrace(t2);
  ASSERT_TRUE(trace2.ok()) << trace2.status() << r2.output;
  EXPECT_EQ(trace2->header.session().entry(), "preload");
  size_t kernels = 0;
  for (const auto& k : trace2->kernels) kernels += absl::StrContains(trace2->dict.kernel_name(k.signature), "known_");
  EXPECT_EQ(kernels, 8u);
}

TEST_F(CollectorGpuTest, BadSettingOrUnwritableOutputLeavesTheProgramAlone) {
  auto bad = RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary, " CUSCOPE_BOGUS=1 ", kKnownWork,
                                     " --small 5 --big 3 2>&1"));
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(bad.output, "cuscope: unknown setting CUSCOPE_BOGUS")) << bad.output;
  EXPECT_TRUE(absl::StrContains(bad.output, "\nOK")) << bad.output;
  auto unwritable = RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary,
                                            " CUSCOPE_OUTPUT=/proc/no/such/dir/x ", kKnownWork, " --small 5 --big 3 2>&1"));
  EXPECT_EQ(unwritable.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(unwritable.output, "cuscope: cannot create /proc/no/such/dir/x.cuscope"))
      << unwritable.output;
  EXPECT_TRUE(absl::StrContains(unwritable.output, "\nOK")) << unwritable.output;
}

TEST_F(CollectorGpuTest, PyTorchUnderInjectionRecordsItsKernelsAndPrintsTheSameResult) {
  if (RunCommand("python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null").exit_code != 0) {
    GTEST_SKIP() << "no PyTorch with CUDA here";
  }
  const std::string script = kBuild + "/../tests/gpu/torch_small.py";
  auto plain = RunCommand("python3 " + script);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const std::string trace = TempTracePath("torch");
  auto profiled = RunCommand(absl::StrCat(kCli, " profile -q -o ", trace, " -- python3 ", script));
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  EXPECT_EQ(profiled.output, plain.output);
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  bool gemm = false, elementwise = false;
  for (const auto& k : t->kernels) {
    const std::string& n = t->dict.kernel_name(k.signature);
    gemm |= absl::StrContains(n, "gemm") || absl::StrContains(n, "sm90") || absl::StrContains(n, "cutlass");
    elementwise |= absl::StrContains(n, "elementwise");
  }
  EXPECT_TRUE(gemm);
  EXPECT_TRUE(elementwise);
  EXPECT_EQ(t->stats->records_dropped_by_cupti(), 0u);
}

}  // namespace
}  // namespace cuscope
