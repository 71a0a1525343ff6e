// The collector when the program ends badly, forks, runs many threads or outruns the buffer cap.
// Each test runs tests/gpu/fault_app.cu under injection and checks the trace exactly.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
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

const std::string kBuild = testing::BuildTree::Dir();
const std::string kLibrary = testing::BuildTree::Library();
const std::string kFaultApp = testing::BuildTree::Bin("fault_app");

class FaultGpuTest : public testing::GpuTest {
 protected:
  // Runs fault_app under injection with a time limit; stderr goes into the output too.
  testing::CommandResult Run(const std::string& trace, const std::string& args, const std::string& env = "") {
    return RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary, " CUSCOPE_OUTPUT=", trace, " ", env,
                                   " timeout 120 ", kFaultApp, " ", args, " 2>&1"));
  }
};

size_t CountKernels(const core::Trace& t, const std::string& name) {
  size_t n = 0;
  for (const auto& k : t.kernels) n += absl::StrContains(t.dict.kernel_name(k.signature), name);
  return n;
}

TEST_F(FaultGpuTest, ExitFromAnotherThreadWhileKernelsRunKeepsACleanTrace) {
  const std::string trace = TempTracePath("exit_thread");
  auto plain = RunCommand(absl::StrCat("timeout 120 ", kFaultApp, " exit-from-thread 2>&1"));
  auto r = Run(trace, "exit-from-thread");
  EXPECT_EQ(r.exit_code, plain.exit_code) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status() << r.output;
  EXPECT_FALSE(t->truncated());
  EXPECT_GT(CountKernels(*t, "fault_spin"), 0u);
  ASSERT_TRUE(t->stats.has_value());
  RecordProperty("kernels", std::to_string(CountKernels(*t, "fault_spin")));
}

TEST_F(FaultGpuTest, ReturnFromMainWithWorkInFlightRecordsEveryLaunch) {
  const std::string trace = TempTracePath("return_in_flight");
  auto r = Run(trace, "return-in-flight 2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated());
  // Kernels that ended before the final flush are on record; those still running when the program
  // returned are counted, not lost: together they are exactly the launches made.
  ASSERT_TRUE(t->stats.has_value());
  EXPECT_EQ(CountKernels(*t, "fault_spin") + t->stats->records_incomplete(), 2000u);
  RecordProperty("kernels_recorded", std::to_string(CountKernels(*t, "fault_spin")));
  RecordProperty("still_running_at_exit", std::to_string(t->stats->records_incomplete()));
}

void ExpectEverythingBeforeTheCrash(const std::string& mode, int expected_exit) {
  const std::string trace = TempTracePath(mode);
  auto r = RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary, " CUSCOPE_OUTPUT=", trace, " timeout 120 ",
                                   kFaultApp, " ", mode, " 3000 2>&1"));
  EXPECT_EQ(r.exit_code, expected_exit) << r.output;
  EXPECT_EQ(ParseKeyValues(r.output)["launched"], "3000");
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  // The periodic flush wrote every launch made before the crash, as whole chunks.
  EXPECT_EQ(CountKernels(*t, "fault_tick"), 3000u);
  EXPECT_FALSE(t->corruption.has_value());
  ::testing::Test::RecordProperty("tail_bytes_dropped", std::to_string(t->tail_bytes_dropped));
}

TEST_F(FaultGpuTest, AbortKeepsEverythingFlushedBeforeIt) { ExpectEverythingBeforeTheCrash("abort", 128 + SIGABRT); }

TEST_F(FaultGpuTest, SegfaultKeepsEverythingFlushedBeforeIt) { ExpectEverythingBeforeTheCrash("segv", 128 + SIGSEGV); }

TEST_F(FaultGpuTest, ForkedChildNeitherWritesNorCorruptsTheParentsTrace) {
  const std::string dir = ::testing::TempDir() + "/fork_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string trace = dir + "/trace_%p";
  auto r = Run(trace, "fork 500");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto kv = ParseKeyValues(r.output);
  EXPECT_EQ(kv["child"], "1");
  EXPECT_EQ(kv["child_status"], "0");
  // Exactly one trace in the folder: the parent's.
  auto ls = RunCommand("ls " + dir);
  EXPECT_EQ(std::count(ls.output.begin(), ls.output.end(), '\n'), 1) << ls.output;
  auto t = core::LoadTrace(dir + "/" + ls.output.substr(0, ls.output.find('\n')));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated());
  EXPECT_EQ(CountKernels(*t, "fault_tick"), 1000u);
}

TEST_F(FaultGpuTest, SixteenThreadsOnFourStreamsLoseAndDoubleNothing) {
  const std::string trace = TempTracePath("threads");
  auto r = Run(trace, "threads 2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ParseKeyValues(r.output)["launched"], "32000");
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(CountKernels(*t, "fault_tick"), 32000u);
  std::set<uint64_t> correlations;
  std::set<uint32_t> streams, threads;
  for (const auto& k : t->kernels) {
    if (!absl::StrContains(t->dict.kernel_name(k.signature), "fault_tick")) continue;
    correlations.insert(k.correlation_id);
    streams.insert(k.stream);
  }
  EXPECT_EQ(correlations.size(), 32000u) << "a launch recorded twice";
  EXPECT_EQ(streams.size(), 4u);
  for (const auto& a : t->api_calls) {
    if (absl::StartsWith(t->dict.function_name(a.function), "cudaLaunchKernel")) threads.insert(a.thread);
  }
  EXPECT_EQ(threads.size(), 16u);
  EXPECT_EQ(t->stats->records_dropped_by_cupti(), 0u);
}

TEST_F(FaultGpuTest, LaunchStormAtTheBufferCapCountsWhatItDrops) {
  const std::string trace = TempTracePath("storm");
  auto r = Run(trace, "storm 300000", "CUSCOPE_BUFFER_SIZE=64K CUSCOPE_BUFFER_POOL_CAP=64K");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->stats.has_value());
  const size_t kernels = CountKernels(*t, "fault_tick");
  RecordProperty("kernels_in_trace", std::to_string(kernels));
  RecordProperty("dropped", std::to_string(t->stats->records_dropped_by_cupti()));
  RecordProperty("refused", std::to_string(t->stats->buffers_refused_at_cap()));
  // Nothing is lost silently: either every launch is there, or the refusals and drops are counted.
  if (kernels < 300000u) {
    EXPECT_GT(t->stats->buffers_refused_at_cap(), 0u);
    EXPECT_GT(t->stats->records_dropped_by_cupti(), 0u);
  } else {
    EXPECT_EQ(kernels, 300000u);
  }
  EXPECT_LE(t->stats->peak_pool_bytes(), 64u * 1024);
}

TEST_F(FaultGpuTest, FullDiskStopsProfilingWithOneLineAndTheProgramGoesOn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const std::string dir = ::testing::TempDir() + "/full_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=128k") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  auto r = Run(dir + "/trace", "storm 100000");
  ::umount(dir.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ParseKeyValues(r.output)["launched"], "100000");
  EXPECT_TRUE(absl::StrContains(r.output, "No space left on device")) << r.output;
  size_t lines = 0;
  for (size_t p = r.output.find("\ncuscope: "); p != std::string::npos; p = r.output.find("\ncuscope: ", p + 1)) ++lines;
  EXPECT_LE(lines, 2u) << r.output;  // the failure, and the exit summary saying the trace is incomplete
}

TEST_F(FaultGpuTest, TorchProfilerInTheSameProcessLeavesTheProgramsOutputAlone) {
  if (RunCommand("python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null").exit_code != 0) {
    GTEST_SKIP() << "no PyTorch with CUDA here";
  }
  const std::string script = kBuild + "/../tests/gpu/torch_profiler_active.py";
  auto plain = RunCommand("python3 " + script + " 2>/dev/null");
  ASSERT_EQ(plain.exit_code, 0);
  const std::string trace = TempTracePath("torch_profiler");
  auto r = RunCommand(absl::StrCat("CUDA_INJECTION64_PATH=", kLibrary, " CUSCOPE_OUTPUT=", trace, " python3 ", script,
                                   " 2>/tmp/torch_profiler_stderr.txt"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, plain.output);
  RecordProperty("stderr", RunCommand("cat /tmp/torch_profiler_stderr.txt").output);
}

}  // namespace
}  // namespace cuscope
