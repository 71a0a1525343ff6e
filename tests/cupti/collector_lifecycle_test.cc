// The collector's lifecycle on a machine without a GPU: CUPTI and the driver are a fake, the
// trace is real. Start and its undo, recording windows, writing and its failure, fork, and the
// order of a stop.
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_nvtx_meta.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/process/call_stack.h"
#include "lib/settings/config.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/trace_pipeline.h"
#include "lib/monitor/prometheus_exporter.h"
#include "tests/cupti/collector_test_support.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

using ::testing::HasSubstr;
using testing::Eventually;
using testing::FakeCupti;
using testing::LoadWhenComplete;

const std::string kKernelKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
const std::string kMemcpyKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_MEMCPY));
const std::string kSyncKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
const std::string kMemsetKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_MEMSET));

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// The file's size once the writer has written it and stopped (unchanged for 100 ms), or 0.
uint64_t SizeOnceWritten(const std::string& path) {
  if (!Eventually([&] { return FileSize(path) > 0; })) return 0;
  uint64_t size = 0;
  while (size != FileSize(path)) {
    size = FileSize(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return size;
}

// A field of /proc/self/status ("VmRSS" in kB, "Threads").
uint64_t ProcessStatus(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  }
  return 0;
}

// A duty cycle's trace: every interval says its figures are estimates; the windows they sum.
uint32_t EstimatedSampleWindows(const core::Trace& trace) {
  EXPECT_FALSE(trace.monitor_intervals.empty());
  uint32_t windows = 0;
  for (const v1::MonitorInterval& m : trace.monitor_intervals) {
    EXPECT_TRUE(m.estimated());
    windows += m.sample_windows();
  }
  return windows;
}

class CollectorLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    dir_ = scratch_.path();
    path_ = dir_ + "/run.cuscope";
    config_.output = path_;
    config_.quiet = false;
    config_.flush_period_ms = 60'000;  // no periodic flush: the test hands over every buffer
    config_.buffer_bytes = 64 * FakeCupti::kRecordSlot;
  }
  void TearDown() override {
    if (CollectorActive()) (void)StopCollector(nullptr);
  }

  // Monitor mode under a 20% duty cycle that detaches CUPTI between its windows: 20 ms windows,
  // 80 ms apart.
  void UseDetachingDutyCycle() {
    config_.mode = settings::CollectionMode::kMonitor;
    config_.monitor_interval_ms = 200;
    config_.duty_cycle = 0.2;
    config_.duty_windows = 2;
    config_.duty_detach = true;
  }

  core::Trace Load() {
    auto trace = core::LoadTrace(path_);
    EXPECT_TRUE(trace.ok()) << trace.status();
    return trace.ok() ? *std::move(trace) : core::Trace{};
  }

  testing::ScratchDir scratch_{"cuscope_lifecycle"};  // removed after TearDown stopped the collector
  std::string dir_, path_;
  settings::Config config_;
  FakeCupti cupti_;
};

TEST_F(CollectorLifecycleTest, RecordsEveryDeliveredKernelAndStopsInOrder) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(CollectorActive());
  EXPECT_EQ(CollectorOutputPath(), path_);
  ASSERT_TRUE(cupti_.DeliverKernels(10, 2'000'000'000));
  ASSERT_TRUE(cupti_.DeliverKernels(5, 3'000'000'000));
  // Still running when the program stops the collector: only a forced flush hands these over.
  ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(3, 4'000'000'000));
  CollectorSummary summary;
  ASSERT_TRUE(StopCollector(&summary).ok());
  EXPECT_FALSE(CollectorActive());
  EXPECT_EQ(summary.kernels, 18u);
  EXPECT_EQ(summary.path, path_);

  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 18u);
  EXPECT_FALSE(trace.truncated());
  EXPECT_EQ(trace.header.session().entry(), "session");
  ASSERT_EQ(trace.header.devices_size(), 1);
  EXPECT_EQ(trace.header.devices(0).name(), "Fake GPU");
  ASSERT_FALSE(trace.windows.empty());
  EXPECT_EQ(trace.windows[0].reason(), "session");
  ASSERT_TRUE(trace.stats.has_value());
  EXPECT_EQ(trace.stats->buffers_completed(), 3u);

  // Recording stops before the forced flush, which comes before CUPTI lets go of the callbacks.
  const int disabled = cupti_.LastIndexOf("DisableActivity:" + kKernelKind);
  const int flushed = cupti_.LastIndexOf("FlushAll:forced");
  const int unsubscribed = cupti_.LastIndexOf("Unsubscribe");
  ASSERT_GE(disabled, 0);
  EXPECT_LT(disabled, flushed);
  EXPECT_LT(flushed, unsubscribed);
  EXPECT_EQ(cupti_.Count("Unsubscribe"), 1u);
}

// Lean collection, the default: the runtime and driver kinds are enabled after the other kinds,
// then every call the analyzer does not read is turned off one by one (enabling a kind afterwards
// would undo the choice). The calls kept are never touched one by one: CUPTI ignores a per-call
// enable made after the program's first call.
const std::string kRuntimeKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_RUNTIME));
const std::string kDriverKind = absl::StrCat(static_cast<int>(CUPTI_ACTIVITY_KIND_DRIVER));
const std::string kLeanLaunch = absl::StrCat("EnableApiRecords:runtime:", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
const std::string kLeanSync = absl::StrCat("EnableApiRecords:runtime:", CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
const std::string kLeanGetDevice = absl::StrCat("EnableApiRecords:runtime:", CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
const std::string kLeanDriverLaunch = absl::StrCat("EnableApiRecords:driver:", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
const std::string kOwnStreamIsCapturing =
    absl::StrCat("EnableApiRecords:driver:", CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing, ":0");
const std::string kLeanDriverAttribute =
    absl::StrCat("EnableApiRecords:driver:", CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute);

// Calls logged as "EnableApiRecords:<api>:<cbid>:<0|1>" whose last field is `on`.
size_t PerCallChoices(const FakeCupti& cupti, const std::string& on) {
  size_t n = 0;
  for (const std::string& call : cupti.Calls()) {
    n += call.rfind("EnableApiRecords:", 0) == 0 && absl::EndsWith(call, ":" + on);
  }
  return n;
}

TEST_F(CollectorLifecycleTest, LeanByRecordsTurnsOffTheCallsTheAnalyzerDoesNotRead) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kRuntimeKind), 1u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kDriverKind), 1u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kSyncKind), 1u);  // the records the callbacks would write
  EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), 1u);
  EXPECT_EQ(cupti_.Count(kLeanDriverAttribute + ":0"), 1u);
  // Kept: never turned off, and never turned on one by one.
  EXPECT_EQ(cupti_.Count(kLeanLaunch + ":0"), 0u);
  EXPECT_EQ(cupti_.Count(kLeanSync + ":0"), 0u);
  EXPECT_EQ(cupti_.Count(kLeanDriverLaunch + ":0"), 0u);
  EXPECT_EQ(PerCallChoices(cupti_, "1"), 0u);
  // Every other call of both APIs is turned off, after both kinds.
  EXPECT_EQ(PerCallChoices(cupti_, "0"),
            static_cast<size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE - 1 - 3 + CUPTI_DRIVER_TRACE_CBID_SIZE - 1 - 3));
  EXPECT_LT(cupti_.LastIndexOf("EnableActivity:" + kKernelKind), cupti_.LastIndexOf("EnableActivity:" + kRuntimeKind));
  EXPECT_LT(cupti_.LastIndexOf("EnableActivity:" + kRuntimeKind), cupti_.LastIndexOf(kLeanGetDevice + ":0"));
  EXPECT_LT(cupti_.LastIndexOf("EnableActivity:" + kDriverKind), cupti_.LastIndexOf(kLeanGetDevice + ":0"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kRuntimeKind), 1u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kDriverKind), 1u);
}


std::string CallbackOf(CUpti_CallbackDomain domain, uint32_t cbid) {
  return absl::StrCat("EnableCallback:", static_cast<int>(domain), ":", cbid);
}

// The default: no API kind and no synchronization kind (each intercepts every call of the
// program); callbacks on the lean calls alone, of both APIs.
TEST_F(CollectorLifecycleTest, LeanByDefaultTimesItsCallsByCallbackAndEnablesNoApiKind) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kRuntimeKind), 0u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kDriverKind), 0u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kSyncKind), 0u);
  EXPECT_EQ(PerCallChoices(cupti_, "0") + PerCallChoices(cupti_, "1"), 0u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)), 1u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020)),
            1u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)), 1u);
  // For its synchronization record alone.
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020)),
            1u);
  // Not read by the analyzer: no callback.
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020)), 0u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute)), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// What the callbacks write is what CUPTI's lean records said: each timed call once, with its
// correlation id, times, thread and return code; the driver call inside a runtime call is not a
// second call; calls the analyzer does not read are not recorded; the waits write their
// synchronization records, with the stream the call named.
TEST_F(CollectorLifecycleTest, TimedCallsReachTheTraceAsCuptisLeanRecordsWouldHave) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.CallLaunch(11, "fakeKernel");                      // cudaLaunchKernel around cuLaunchKernel
  cupti_.CallLaunch(12, "fakeKernel", /*driver_only=*/true);  // a driver-API program's launch
  const CUstream stream = reinterpret_cast<CUstream>(uintptr_t{5});
  const cuStreamSynchronize_params driver_sync{stream};
  const FakeCupti::Call inner{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &driver_sync};
  const cudaStreamSynchronize_v3020_params runtime_sync{stream};
  const FakeCupti::Call outer{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                              &runtime_sync, 4};
  cupti_.CallApi(13, outer, 250'000, &inner);
  const cudaStreamWaitEvent_v3020_params wait{stream, nullptr, 0};
  cupti_.CallApi(14, {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait});
  cupti_.CallApi(15, {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020});
  ASSERT_TRUE(StopCollector(nullptr).ok());

  const core::Trace t = Load();
  std::map<uint64_t, std::string> calls;
  for (const core::ApiCallRow& a : t.api_calls) {
    EXPECT_TRUE(calls.emplace(a.correlation_id, t.dict.function_name(a.function)).second) << a.correlation_id;
    EXPECT_LT(a.start, a.end);
    EXPECT_EQ(t.dict.thread(a.thread).tid(), static_cast<uint64_t>(::syscall(SYS_gettid)));
    if (a.correlation_id == 13) {
      EXPECT_GE(a.end - a.start, 250'000u);
      EXPECT_EQ(a.return_code, 4u);
    }
  }
  EXPECT_EQ(calls, (std::map<uint64_t, std::string>{{11, "cudaLaunchKernel_v7000"},
                                                     {12, "cuLaunchKernel"},
                                                     {13, "cudaStreamSynchronize_v3020"}}));
  ASSERT_EQ(t.syncs.size(), 2u);
  std::map<uint64_t, const core::SyncRecord*> syncs;
  for (const core::SyncRecord& r : t.syncs) syncs[r.correlation_id] = &r;
  ASSERT_TRUE(syncs.count(13) && syncs.count(14));
  EXPECT_EQ(syncs[13]->type, v1::SYNC_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(syncs[13]->stream, 5u);  // the fake's id for stream 5
  EXPECT_EQ(syncs[13]->context, 7u);
  EXPECT_GE(syncs[13]->end - syncs[13]->start, 250'000u);
  EXPECT_EQ(syncs[14]->type, v1::SYNC_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(syncs[14]->stream, 5u);
}

// Calls outside the window are not kept; a call that began inside and ended after a stop (its
// exit never seen) does not hide the next session's calls.
TEST_F(CollectorLifecycleTest, TimedCallsOutsideTheWindowAreLeftOutAndAnUnfinishedCallHidesNothing) {
  config_.capture_range = "cudaProfilerApi";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.CallLaunch(21, "fakeKernel");  // before the window
  cupti_.CallProfilerStart();
  cupti_.CallLaunch(22, "fakeKernel");
  cupti_.CallProfilerStop();
  cupti_.CallLaunch(23, "fakeKernel");  // after it
  ASSERT_TRUE(StopCollector(nullptr).ok());
  const core::Trace t = Load();
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.api_calls[0].correlation_id, 22u);

  // Session two: a runtime call whose exit the first never saw, on this thread...
  const std::string second = path_ + ".second.cuscope";
  settings::Config config = config_;
  config.capture_range = "";
  config.output = second;
  ASSERT_TRUE(StartCollector(config, "session", cupti_).ok());
  CUpti_CallbackData enter;
  std::memset(&enter, 0, sizeof(enter));
  enter.correlationId = 31;
  enter.callbackSite = CUPTI_API_ENTER;
  cupti_.ApiCallbackForTest(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &enter);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  config.output = path_ + ".third.cuscope";
  ASSERT_TRUE(StartCollector(config, "session", cupti_).ok());
  cupti_.CallLaunch(32, "fakeKernel");  // ...does not make this one look nested
  ASSERT_TRUE(StopCollector(nullptr).ok());
  auto third = core::LoadTrace(config.output);
  ASSERT_TRUE(third.ok()) << third.status();
  ASSERT_EQ(third->api_calls.size(), 1u);
  EXPECT_EQ(third->api_calls[0].correlation_id, 32u);
}

// The call callbacks follow the window: none before it (no call of the program pays one), on
// while it is open, off after it; one the launch stacks share stays on.
TEST_F(CollectorLifecycleTest, CallCallbacksAreOnOnlyWhileAWindowIsOpen) {
  config_.capture_range = "cudaProfilerApi";
  config_.stacks = *settings::ParseStackSampling("all");
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const auto sync = std::make_pair(CUPTI_CB_DOMAIN_RUNTIME_API,
                                   static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  const auto launch = std::make_pair(CUPTI_CB_DOMAIN_RUNTIME_API,
                                     static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  const auto on = [&](const std::pair<CUpti_CallbackDomain, uint32_t>& c) {
    return cupti_.Count(CallbackOf(c.first, c.second));
  };
  const auto off = [&](const std::pair<CUpti_CallbackDomain, uint32_t>& c) {
    return cupti_.Count(absl::StrCat("DisableCallback:", static_cast<int>(c.first), ":", c.second));
  };
  EXPECT_EQ(on(sync), 0u);
  const size_t launch_before = on(launch);  // the stacks'
  cupti_.CallProfilerStart();
  EXPECT_EQ(on(sync), 1u);
  EXPECT_EQ(on(launch), launch_before + 1);
  cupti_.CallProfilerStop();
  EXPECT_EQ(off(sync), 1u);
  EXPECT_EQ(off(launch), 0u);  // the stacks still take it
  cupti_.CallProfilerStart();
  EXPECT_EQ(on(sync), 2u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(off(sync), 2u);
  EXPECT_EQ(off(launch), 0u);
}

// A program that makes many timed calls and no kernel: every kTimedCallBatch records wake the
// writer, so they reach the file while the program runs, not only at the stop.
TEST_F(CollectorLifecycleTest, ABatchOfTimedCallsReachesTheFileWithoutABuffer) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const cudaStreamSynchronize_v3020_params sync{nullptr};
  const cudaStreamWaitEvent_v3020_params wait{nullptr, nullptr, 0};
  // A wait for an event makes one record (its synchronization), a stream synchronization two (the
  // call and its synchronization): one wait first, so that the count passes over the batch's size
  // instead of landing on it.
  uint32_t corr = 1'000'000;  // ids no other test here gives
  cupti_.CallApi(corr++, {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait});
  const uint32_t calls = TracePipeline::kTimedCallBatch / 2;
  for (uint32_t i = 0; i < calls; ++i) {
    cupti_.CallApi(corr++, {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &sync});
  }
  EXPECT_TRUE(Eventually([&] {
    auto t = core::LoadTrace(path_);
    return t.ok() && t->api_calls.size() == calls && t->syncs.size() == calls + 1;
  }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// With CUPTI's SYNCHRONIZATION kind asked for, its records are the only ones: the callbacks write none.
TEST_F(CollectorLifecycleTest, TheSyncKindKeepsCuptisSynchronizationRecords) {
  config_.activity_kinds = {"kernel", "api", "sync"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kSyncKind), 1u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020)),
            0u);
  const cudaStreamSynchronize_v3020_params sync{nullptr};
  cupti_.CallApi(41, {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &sync});
  ASSERT_TRUE(StopCollector(nullptr).ok());
  const core::Trace t = Load();
  EXPECT_EQ(t.api_calls.size(), 1u);
  EXPECT_TRUE(t.syncs.empty());
}

// A callback CUPTI refuses: one line, and the trace goes on without calls.
TEST_F(CollectorLifecycleTest, ARefusedCallCallbackLeavesTheTraceWithoutCalls) {
  cupti_.Fail(CallbackOf(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("cuscope: no runtime or driver call is recorded"));
  EXPECT_TRUE(CollectorActive());
  EXPECT_TRUE(cupti_.DeliverKernels(2, 1'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(Load().kernels.size(), 2u);
}

TEST_F(CollectorLifecycleTest, TheRuntimeKindMeansEveryRuntimeCallTheDriverStaysLean) {
  config_.activity_kinds = {"kernel", "api", "runtime"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kRuntimeKind), 1u);
  EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), 0u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kDriverKind), 1u);
  EXPECT_EQ(cupti_.Count(kLeanDriverAttribute + ":0"), 1u);
  EXPECT_EQ(cupti_.Count(kLeanDriverLaunch + ":0"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, WithoutTheApiKindNoCallIsChosen) {
  config_.activity_kinds = {"kernel", "memcpy"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  for (const std::string& call : cupti_.Calls()) EXPECT_EQ(call.rfind("EnableApiRecords", 0), std::string::npos) << call;
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kRuntimeKind), 0u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kDriverKind), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, AFailedApiKindUndoesTheKindsAndTheStart) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.Fail("EnableActivity:" + kDriverKind);  // enabled after the runtime's kind
  absl::Status st = StartCollector(config_, "session", cupti_);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kRuntimeKind), 1u);  // enabled before the failure: taken back
  EXPECT_EQ(PerCallChoices(cupti_, "0"), 0u);
  EXPECT_FALSE(Exists(path_));
  EXPECT_FALSE(CollectorActive());
}

// A call CUPTI will not turn off stays recorded: more records, and profiling goes on.
TEST_F(CollectorLifecycleTest, ACallThatCannotBeTurnedOffLeavesProfilingOn) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.Fail(kLeanGetDevice + ":0");
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(CollectorActive());
  EXPECT_EQ(cupti_.Count(kLeanDriverAttribute + ":0"), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Monitor mode: figures per interval instead of records; every delivered kernel is counted.
TEST_F(CollectorLifecycleTest, MonitorModeWritesFiguresNotRecords) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.monitor_interval_ms = 100;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(10, 1'050'000'000));
  ASSERT_TRUE(cupti_.DeliverKernels(4, 1'350'000'000));
  CollectorSummary summary;
  ASSERT_TRUE(StopCollector(&summary).ok());
  core::Trace trace = Load();
  EXPECT_TRUE(trace.kernels.empty());
  ASSERT_FALSE(trace.monitor_intervals.empty());
  uint64_t kernels = 0, busy = 0;
  for (const v1::MonitorInterval& m : trace.monitor_intervals) {
    EXPECT_EQ(m.end_ns() - m.start_ns() <= 100'000'000u, true);
    for (const v1::MonitorDevice& d : m.devices()) {
      kernels += d.kernels();
      busy += d.busy_ns();
    }
  }
  EXPECT_EQ(kernels, 14u);
  EXPECT_EQ(busy, 14u * 1000);  // each fake kernel runs 1 us, none overlap
  // Intervals follow each other without a gap.
  for (size_t i = 1; i < trace.monitor_intervals.size(); ++i) {
    EXPECT_EQ(trace.monitor_intervals[i].start_ns(), trace.monitor_intervals[i - 1].end_ns());
  }
}

// Monitor mode: the lean calls reach their interval's figures before it closes, without a buffer
// to carry them (a quiet stretch: calls, no kernel record).
TEST_F(CollectorLifecycleTest, MonitorModeCountsTimedCallsInTheirIntervalWithoutABuffer) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.monitor_interval_ms = 100;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(1, cupti_.Timestamp()));  // an interval open before the calls
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // that buffer taken, before the calls
  for (uint32_t corr = 2'000'001; corr <= 2'000'003; ++corr) cupti_.CallLaunch(corr, "fakeKernel");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the writer's ticks
  // Past the lag behind the clock at which intervals close (two flush periods, 60 s here, and 250 ms).
  cupti_.AdvanceClock(200'000'000'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  uint64_t launches = 0, late = 0;
  for (const v1::MonitorInterval& m : Load().monitor_intervals) {
    launches += m.launch_calls();
    late += m.late_records();
  }
  EXPECT_EQ(launches, 3u);
  EXPECT_EQ(late, 0u);  // not folded into a later interval as late records
}

// Monitor mode under a duty cycle: the kinds go off and on again while the session runs, a trace
// window keeps them on while it is open, and the intervals say their figures are estimates.
TEST_F(CollectorLifecycleTest, MonitorModeUnderADutyCycleSwitchesAndSaysItsFiguresAreEstimates) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.monitor_interval_ms = 100;
  config_.duty_cycle = 0.2;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 4 intervals of 8 windows
  EXPECT_GE(cupti_.Count("DisableActivity:" + kKernelKind), 10u);
  EXPECT_GE(cupti_.Count("EnableActivity:" + kKernelKind), 10u);
  // A trace window needs every record: the kinds are on at once and stay on while it is open.
  ASSERT_TRUE(OpenCollectorTraceWindow(0).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const size_t disabled = cupti_.Count("DisableActivity:" + kKernelKind);
  EXPECT_GT(cupti_.LastIndexOf("EnableActivity:" + kKernelKind), cupti_.LastIndexOf("DisableActivity:" + kKernelKind));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), disabled);
  ASSERT_TRUE(CloseCollectorTraceWindow().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_GT(cupti_.Count("DisableActivity:" + kKernelKind), disabled);  // switching again
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_GT(EstimatedSampleWindows(Load()), 0u);
}

// CUPTI records a graph's kernels as its instantiation found recording: under a duty cycle an
// instantiation made while recording is off waits until recording is on, and recording stays on
// until the instantiation ended. Without a duty cycle nothing watches instantiations.
TEST_F(CollectorLifecycleTest, UnderADutyCycleAGraphIsInstantiatedWithRecordingOn) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.monitor_interval_ms = 1000;
  config_.duty_cycle = 0.01;  // a 1.25 ms window every 125 ms: off nearly all the time
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING)), 1u);
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)), 1u);
  const auto kinds_on = [&] {
    return cupti_.LastIndexOf("EnableActivity:" + kKernelKind) > cupti_.LastIndexOf("DisableActivity:" + kKernelKind);
  };
  ASSERT_TRUE(Eventually([&] { return cupti_.Count("DisableActivity:" + kKernelKind) > 0 && !kinds_on(); }));
  cupti_.CallGraphInstantiation(true);
  // The program's thread waits up to 50 ms for the switch; a loaded machine may take longer, and
  // the kinds are on soon after all the same.
  EXPECT_TRUE(Eventually([&] { return kinds_on(); })) << "recording never came on for the instantiation";
  const size_t disabled = cupti_.Count("DisableActivity:" + kKernelKind);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past two windows' ends: none turns it off
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), disabled);
  EXPECT_TRUE(kinds_on());
  cupti_.CallGraphInstantiation(false);
  EXPECT_TRUE(Eventually([&] { return !kinds_on(); }));  // back to the schedule
  // An end without a start seen (the callbacks came on mid-instantiation) changes nothing.
  cupti_.CallGraphInstantiation(false);
  cupti_.CallGraphInstantiation(false);
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("DisableActivity:" + kKernelKind) > disabled + 1; }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// The program's thread, making a runtime call every half millisecond until told to stop.
class ProgramCalls {
 public:
  explicit ProgramCalls(FakeCupti& cupti)
      : thread_([this, &cupti] {
          for (uint32_t correlation = 1; !stop_.load(); ++correlation) {
            cupti.CallLaunch(correlation, "tiny_kernel");
            std::this_thread::sleep_for(std::chrono::microseconds(500));
          }
        }) {}
  ~ProgramCalls() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// CUSCOPE_DUTY_DETACH: after each window CUPTI is finalized at a program call's exit, and attached
// again (buffer callbacks, subscriber, the session's set-up) before the next window turns the
// kinds on; between the two no call of the session's reaches CUPTI.
TEST_F(CollectorLifecycleTest, UnderADutyCycleThatDetachesCuptiIsFinalizedBetweenWindowsAndAttachedForEach) {
  UseDetachingDutyCycle();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ProgramCalls program(cupti_);
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("Finalize") >= 3; }));
  program.Stop();
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.calls_while_detached(), 0u) << "first: " << cupti_.first_call_while_detached();
  const size_t finalized = cupti_.Count("Finalize");
  // One registration at the start, one per attach: every detach but maybe the last was attached.
  EXPECT_GE(cupti_.Count("RegisterBufferCallbacks"), finalized);
  EXPECT_LE(cupti_.Count("RegisterBufferCallbacks"), finalized + 1);
  // Each attach sets up what CUPTI forgot: the graph instantiations' watch among it.
  EXPECT_GE(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING)), finalized);
  // The kinds go on only after an attach: the last Finalize is followed by a registration before
  // any kind.
  const std::vector<std::string> calls = cupti_.Calls();
  const int last_finalize = cupti_.LastIndexOf("Finalize");
  for (int i = last_finalize + 1; i < static_cast<int>(calls.size()); ++i) {
    if (calls[i] == "RegisterBufferCallbacks") break;
    EXPECT_NE(calls[i].rfind("EnableActivity:", 0), 0u) << calls[i] << " before the attach";
  }
  EXPECT_GT(EstimatedSampleWindows(Load()), 2u);
}

// A buffer CUPTI completes as it finalizes is not walked (a walk is CUPTI calls, and CUPTI is
// going away): given back unread and counted in the trace's stats.
TEST_F(CollectorLifecycleTest, UnderADutyCycleThatDetachesABufferCompletedAtTheFinalizeIsNotWalked) {
  UseDetachingDutyCycle();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.CompleteABufferAtFinalize(3);
  ProgramCalls program(cupti_);
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("Finalize") >= 2; }));
  program.Stop();
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.calls_while_detached(), 0u) << "first: " << cupti_.first_call_while_detached();
  const core::Trace trace = Load();
  ASSERT_TRUE(trace.stats.has_value());
  EXPECT_EQ(trace.stats->buffers_not_walked(), cupti_.Count("Finalize"));
  EXPECT_EQ(trace.stats->cupti_detaches(), cupti_.Count("Finalize"));
  EXPECT_GE(trace.stats->cupti_attaches() + 1, trace.stats->cupti_detaches());
}

// What needs CUPTI throughout (launch stacks here: their callbacks read CUPTI's graph node ids on
// the program's threads at any time) keeps it attached: the duty cycle switches the kinds as
// before and never arms a detach (which would turn the runtime's call callbacks on first).
TEST_F(CollectorLifecycleTest, UnderADutyCycleLaunchStacksKeepCuptiAttached) {
  UseDetachingDutyCycle();
  config_.stacks = *settings::ParseStackSampling("all");
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("DisableActivity:" + kKernelKind) >= 3; }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableDomain:", CUPTI_CB_DOMAIN_RUNTIME_API, ":1")), 0u);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
  EXPECT_EQ(cupti_.Count("RegisterBufferCallbacks"), 1u);
}

TEST_F(CollectorLifecycleTest, WithoutADutyCycleGraphInstantiationsAreNotWatched) {
  config_.mode = settings::CollectionMode::kMonitor;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(CallbackOf(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING)), 0u);
  cupti_.CallGraphInstantiation(true);  // (as if another room had the callback on) nothing happens
  cupti_.CallGraphInstantiation(false);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, MonitorModeWithoutAnOutputWritesNoFile) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.output = "";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(CollectorOutputPath(), "");
  ASSERT_TRUE(cupti_.DeliverKernels(3, 1'050'000'000));
  EXPECT_EQ(OpenCollectorTraceWindow(0).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_FALSE(Exists(path_));
}

// Flight mode: nothing is written until a snapshot; a snapshot holds the last seconds (by the
// time each chunk was taken), reads back whole, and is written on a thread of its own.
bool HasKernelAt(const core::Trace& t, uint64_t start) {
  for (const auto& k : t.kernels) {
    if (k.start == start) return true;
  }
  return false;
}

TEST_F(CollectorLifecycleTest, FlightModeWritesNothingUntilASnapshotHoldsTheLastSeconds) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.flight_span_ms = 2000;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(CollectorOutputPath(), "");
  // Ten buffers a (fake) second apart; each reaches the ring before the clock moves on.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(cupti_.DeliverKernels(5, 10'000'000'000ull + i * 1'000'000'000ull));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cupti_.AdvanceClock(1'000'000'000ull);
  }
  EXPECT_FALSE(Exists(path_));
  const std::string snap = dir_ + "/snap.cuscope";
  ASSERT_TRUE(SnapshotCollector(snap, 0).ok());
  core::Trace t = LoadWhenComplete(snap);
  EXPECT_TRUE(HasKernelAt(t, 19'000'000'000ull));   // the last buffer
  EXPECT_FALSE(HasKernelAt(t, 10'000'000'000ull));  // the first, 9 s before: out of the span
  EXPECT_LE(t.kernels.size(), 20u);
  EXPECT_GE(t.kernels.size(), 10u);
  for (const auto& k : t.kernels) EXPECT_FALSE(t.dict.kernel_name(k.signature).empty());
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_FALSE(Exists(path_));  // the stop writes nothing either
}

TEST_F(CollectorLifecycleTest, ASnapshotDuringAnotherIsRefusedAndTheStopHurriesIt) {
  config_.mode = settings::CollectionMode::kFlight;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(3, 2'000'000'000));
  const std::string first = dir_ + "/first.cuscope", second = dir_ + "/second.cuscope";
  ASSERT_TRUE(SnapshotCollector(first, 60).ok());  // waits a minute for what comes after
  absl::Status refused = SnapshotCollector(second, 0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("being written"));
  EXPECT_FALSE(Exists(second));
  ASSERT_TRUE(cupti_.DeliverKernels(2, 3'000'000'000));
  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(StopCollector(nullptr).ok());  // the session ends: the snapshot is written now
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(30));
  core::Trace t = LoadWhenComplete(first);
  EXPECT_EQ(t.kernels.size(), 5u);  // the 2 kernels after the request are in it
}

TEST_F(CollectorLifecycleTest, SnapshotsTakeNumberedNamesAndNeedFlightMode) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/serve";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(2, 2'000'000'000));
  ASSERT_TRUE(SnapshotCollector("", 0).ok());
  const std::string one = dir_ + "/serve_snapshot1.cuscope";
  EXPECT_EQ(LoadWhenComplete(one).kernels.size(), 2u);
  ASSERT_TRUE(cupti_.DeliverKernels(1, 3'000'000'000));
  // The first one is done once it reads back whole; the next takes the next number.
  absl::Status st;
  ASSERT_TRUE(Eventually([&] { return (st = SnapshotCollector("", 0)).ok(); })) << st;
  EXPECT_EQ(LoadWhenComplete(dir_ + "/serve_snapshot2.cuscope").kernels.size(), 3u);
  // An existing file is refused at once, like any output.
  ASSERT_TRUE(Eventually([&] {
    st = SnapshotCollector(one, 0);
    return st.code() != absl::StatusCode::kFailedPrecondition;
  }));
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists) << st;
  EXPECT_EQ(SnapshotCollector(dir_ + "/x.cuscope", -1).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(StopCollector(nullptr).ok());

  config_.mode = settings::CollectionMode::kTrace;
  config_.output = path_;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(SnapshotCollector(dir_ + "/y.cuscope", 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Exists(dir_ + "/y.cuscope"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// An NVTX range of the step range's name that took longer than the threshold starts a snapshot,
// as a slow MarkStep does; quicker ones and other names start none.
TEST_F(CollectorLifecycleTest, ASlowStepRangeStartsASnapshot) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/ranges";
  config_.flight_step_threshold_ms = 250;
  config_.flight_step_range = "step";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'000'000'000));
  ASSERT_TRUE(cupti_.DeliverRange("step", 1, 2'000'000'000, 2'100'000'000));     // 100 ms
  ASSERT_TRUE(cupti_.DeliverRange("forward", 2, 2'000'000'000, 2'900'000'000));  // not a step
  const std::string first = dir_ + "/ranges_snapshot1.cuscope";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(Exists(first));
  ASSERT_TRUE(cupti_.DeliverRange("step", 3, 3'000'000'000, 3'400'000'000));  // 400 ms: slow
  core::Trace t = LoadWhenComplete(first);
  EXPECT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.nvtx.size(), 6u);  // the slow range is in its own snapshot
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_FALSE(Exists(dir_ + "/ranges_snapshot2.cuscope"));
}

// A GPU idle more than the share of the window starts a snapshot; the figures kept for it also
// reach `cuscope status`.
TEST_F(CollectorLifecycleTest, AnIdleGpuStartsASnapshot) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/idle";
  config_.flush_period_ms = 100;  // intervals close 450 ms (fake clock) behind
  config_.flight_idle_share = 0.5;
  config_.flight_idle_window_ms = 2000;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  // One 1-us kernel in each of the first seconds: the device is there, and idle.
  for (uint64_t s = 1; s <= 4; ++s) ASSERT_TRUE(cupti_.DeliverKernels(1, s * 1'000'000'000ull + 50'000'000));
  const std::string first = dir_ + "/idle_snapshot1.cuscope";
  cupti_.AdvanceClock(10'000'000'000ull);
  core::Trace t = LoadWhenComplete(first);
  EXPECT_EQ(t.kernels.size(), 4u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// A slow step the program marks starts a snapshot; quick steps, and slow ones while it is written,
// start none.
TEST_F(CollectorLifecycleTest, ASlowStepStartsASnapshotAQuickOneDoesNot) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/steps";
  config_.flight_step_threshold_ms = 250;
  config_.flight_after_ms = 60'000;  // holds the snapshot open until the stop
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'000'000'000));
  const std::string first = dir_ + "/steps_snapshot1.cuscope";
  EXPECT_EQ(MarkCollectorStep(0.1).value_or(true), false);
  EXPECT_EQ(MarkCollectorStep(0.25).value_or(true), false);  // at the threshold: not above it
  EXPECT_FALSE(Exists(first));
  EXPECT_EQ(MarkCollectorStep(0.251).value_or(false), true);
  EXPECT_TRUE(Exists(first));
  EXPECT_EQ(MarkCollectorStep(9).value_or(true), false);  // one is being written
  EXPECT_FALSE(Exists(dir_ + "/steps_snapshot2.cuscope"));
  EXPECT_FALSE(MarkCollectorStep(-1).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(2, 3'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(LoadWhenComplete(first).kernels.size(), 6u);

  // Without a threshold, a step is only a step.
  config_.flight_step_threshold_ms = 0;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(MarkCollectorStep(100).value_or(true), false);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_FALSE(Exists(dir_ + "/steps_snapshot2.cuscope"));
}

// Slow steps marked on many threads at once are commands on one queue: one snapshot starts, the
// others are refused while it is written, and none is lost or written twice.
TEST_F(CollectorLifecycleTest, SlowStepsOnManyThreadsStartOneSnapshot) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/many";
  config_.flight_step_threshold_ms = 250;
  config_.flight_after_ms = 60'000;  // holds the snapshot open until the stop
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(3, 2'000'000'000));
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> started{0}, refused{0}, failed{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<bool> r = MarkCollectorStep(1.0);
      if (!r.ok()) {
        failed.fetch_add(1);
      } else {
        (*r ? started : refused).fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(refused.load(), kThreads - 1);
  EXPECT_EQ(failed.load(), 0);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(LoadWhenComplete(dir_ + "/many_snapshot1.cuscope").kernels.size(), 3u);
  EXPECT_FALSE(Exists(dir_ + "/many_snapshot2.cuscope"));
}

// Request scopes reach the trace whole, at their ends, with their route and a batch's requests;
// the calls made inside lie inside them. An end without its scope, or of the other kind, is nothing.
TEST_F(CollectorLifecycleTest, RequestScopesReachTheTraceWithTheCallsMadeInside) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EndCollectorScope(/*batch=*/false);  // no scope open: nothing
  BeginCollectorScope(7, "chat", nullptr, 0, /*batch=*/false);
  cupti_.CallLaunch(21, "fakeKernel");
  EndCollectorScope(/*batch=*/true);  // not a batch: the request stays open
  EndCollectorScope(/*batch=*/false);
  const uint64_t ids[] = {5, 6};
  BeginCollectorScope(5, nullptr, ids, 2, /*batch=*/true);
  cupti_.CallLaunch(22, "fakeKernel");
  EndCollectorScope(/*batch=*/true);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EndCollectorScope(/*batch=*/false);  // after the stop: nothing, no crash

  const core::Trace t = Load();
  ASSERT_EQ(t.request_scopes.size(), 2u);
  const core::RequestScopeRow& chat = t.request_scopes[0];
  EXPECT_EQ(chat.id, 7u);
  EXPECT_FALSE(chat.batch);
  EXPECT_EQ(t.dict.str(chat.route), "chat");
  EXPECT_EQ(t.dict.thread(chat.thread).tid(), static_cast<uint64_t>(::syscall(SYS_gettid)));
  const core::RequestScopeRow& batch = t.request_scopes[1];
  EXPECT_TRUE(batch.batch);
  EXPECT_EQ(batch.batch_requests, (std::vector<uint64_t>{5, 6}));
  for (const core::ApiCallRow& a : t.api_calls) {
    const core::RequestScopeRow& scope = a.correlation_id == 21 ? chat : batch;
    EXPECT_LE(scope.start, a.start) << a.correlation_id;
    EXPECT_GE(scope.end, a.end) << a.correlation_id;
  }
}

// A session started late (attach) whose kernel records never arrive while the program launches
// says another CUPTI client has them; too few calls to tell, or records arriving, are fine.
TEST_F(CollectorLifecycleTest, ALateSessionSaysWhenAnotherToolReceivesTheRecords) {
  ASSERT_TRUE(StartCollector(config_, "attach", cupti_).ok());
  for (uint32_t corr = 1; corr <= 10; ++corr) cupti_.CallLaunch(corr, "fakeKernel");
  EXPECT_TRUE(CheckCollectorReceivesRecords(0.0).ok());  // 10 calls: too few to tell
  for (uint32_t corr = 11; corr <= 60; ++corr) cupti_.CallLaunch(corr, "fakeKernel");
  const absl::Status taken = CheckCollectorReceivesRecords(0.0);
  EXPECT_TRUE(absl::IsFailedPrecondition(taken)) << taken;
  EXPECT_THAT(std::string(taken.message()), HasSubstr("another tool in this process"));
  ASSERT_TRUE(cupti_.DeliverKernels(1, cupti_.Timestamp()));
  EXPECT_TRUE(Eventually([] { return CheckCollectorReceivesRecords(0.0).ok(); }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Monitor mode joins the scopes live: the request's figures land in the interval it ended in.
TEST_F(CollectorLifecycleTest, MonitorModeCountsARequestOnceItIsFinal) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.monitor_interval_ms = 100;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  BeginCollectorScope(7, "chat", nullptr, 0, /*batch=*/false);
  cupti_.CallLaunch(31, "fakeKernel");
  EndCollectorScope(/*batch=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the writer's ticks
  cupti_.AdvanceClock(200'000'000'000);  // past the lag at which intervals close
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const absl::StatusOr<v1::ProcessStatus> status = CollectorStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_EQ(status->routes_size(), 1);
  EXPECT_EQ(status->routes(0).route(), "chat");
  EXPECT_EQ(status->routes(0).requests(), 1u);
  EXPECT_GT(status->routes(0).span_max(), 0);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Flight mode: a request slower than CUSCOPE_FLIGHT_REQUEST_THRESHOLD starts a snapshot.
TEST_F(CollectorLifecycleTest, ASlowRequestStartsASnapshotAQuickOneDoesNot) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.output = dir_ + "/requests";
  config_.flight_request_threshold_ms = 250;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(2, 2'000'000'000));
  const std::string first = dir_ + "/requests_snapshot1.cuscope";
  BeginCollectorScope(1, "chat", nullptr, 0, /*batch=*/false);
  cupti_.AdvanceClock(100'000'000);
  EndCollectorScope(/*batch=*/false);
  EXPECT_FALSE(Exists(first));
  BeginCollectorScope(2, "chat", nullptr, 0, /*batch=*/false);
  cupti_.AdvanceClock(300'000'000);
  EndCollectorScope(/*batch=*/false);
  EXPECT_TRUE(Exists(first));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(LoadWhenComplete(first).request_scopes.size(), 2u);
}

// Switching to a full trace and back without a restart: records that started inside the window
// (by CUPTI's clock) reach the file, whenever their buffer arrives; the figures count everything.
TEST_F(CollectorLifecycleTest, MonitorModeTraceWindowRecordsOnlyWhileOpen) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.monitor_interval_ms = 100;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.AdvanceClock(1'000'000);
  const uint64_t before = cupti_.Timestamp();
  ASSERT_TRUE(OpenCollectorTraceWindow(0).ok());
  EXPECT_EQ(OpenCollectorTraceWindow(0).code(), absl::StatusCode::kFailedPrecondition);
  const uint64_t inside = cupti_.Timestamp();
  cupti_.AdvanceClock(1'000'000);
  ASSERT_TRUE(CloseCollectorTraceWindow().ok());
  EXPECT_EQ(CloseCollectorTraceWindow().code(), absl::StatusCode::kFailedPrecondition);
  cupti_.AdvanceClock(1'000'000);
  const uint64_t after = cupti_.Timestamp();
  // Handed over after the window closed, as CUPTI's buffers are: only the middle ones started in it.
  ASSERT_TRUE(cupti_.DeliverKernels(4, before - 100'000));
  ASSERT_TRUE(cupti_.DeliverKernels(5, inside + 1'000));
  ASSERT_TRUE(cupti_.DeliverKernels(6, after + 1'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 5u);
  uint64_t kernels = 0;
  for (const auto& m : trace.monitor_intervals) {
    for (const auto& d : m.devices()) kernels += d.kernels();
  }
  EXPECT_EQ(kernels, 15u);
  int opened = 0, closed = 0;
  for (const auto& w : trace.windows) {
    if (w.reason() != "trace window") continue;
    opened += w.start_ns() != 0;
    closed += w.end_ns() != 0;
  }
  EXPECT_EQ(opened, 1);
  EXPECT_EQ(closed, 1);
}

// Monitor mode's side windows, as the trigger home's commands move them (architecture.md's table):
// one trace window or one capture at a time, each refused with the sentence that says why.
TEST_F(CollectorLifecycleTest, ATraceWindowAndACaptureTakeTurns) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const auto capture = [this](const std::string& name, double seconds) {
    CaptureSpec spec;
    spec.path = dir_ + "/" + name;
    spec.seconds = seconds;
    return CaptureCollector(spec);
  };
  absl::Status st = CloseCollectorTraceWindow();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("no trace window is open"));
  ASSERT_TRUE(OpenCollectorTraceWindow(0).ok());
  st = OpenCollectorTraceWindow(0);
  EXPECT_THAT(std::string(st.message()), HasSubstr("a trace window is already open"));
  st = capture("during_window.cuscope", 1);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("a trace window is open; a capture waits until it closes"));
  EXPECT_FALSE(Exists(dir_ + "/during_window.cuscope"));
  ASSERT_TRUE(CloseCollectorTraceWindow().ok());
  // The capture's window holds the session's trace side until its seconds are over.
  ASSERT_TRUE(capture("first.cuscope", 60).ok());
  st = OpenCollectorTraceWindow(0);
  EXPECT_THAT(std::string(st.message()), HasSubstr("a capture is running"));
  st = CloseCollectorTraceWindow();
  EXPECT_THAT(std::string(st.message()), HasSubstr("the open window is a capture's"));
  st = capture("second.cuscope", 1);
  EXPECT_THAT(std::string(st.message()), HasSubstr("a capture is being written; this capture is refused"));
  EXPECT_FALSE(Exists(dir_ + "/second.cuscope"));
  ASSERT_TRUE(StopCollector(nullptr).ok());  // hurries the capture
  EXPECT_FALSE(LoadWhenComplete(dir_ + "/first.cuscope").windows.empty());
}

TEST_F(CollectorLifecycleTest, ATraceWindowNeedsMonitorMode) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(OpenCollectorTraceWindow(0).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, SecondStartIsRefusedWhileOneIsActive) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  FakeCupti other;
  config_.output = dir_ + "/second.cuscope";
  absl::Status st = StartCollector(config_, "session", other);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(other.Calls().empty());
  EXPECT_FALSE(Exists(dir_ + "/second.cuscope"));
}

TEST_F(CollectorLifecycleTest, NoDriverMeansNoFileAndNoCuptiCall) {
  cupti_.set_driver_loadable(false);
  absl::Status st = StartCollector(config_, "session", cupti_);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(st.message()), HasSubstr("no NVIDIA driver"));
  EXPECT_TRUE(cupti_.Calls().empty());
  EXPECT_FALSE(Exists(path_));
}

TEST_F(CollectorLifecycleTest, AnotherCuptiToolLeavesNoFileAndALaterStartWorks) {
  cupti_.Fail("Subscribe");
  absl::Status st = StartCollector(config_, "session", cupti_);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(Exists(path_));
  EXPECT_FALSE(CollectorActive());
  EXPECT_EQ(cupti_.Count("Unsubscribe"), 0u);

  FakeCupti healthy;
  ASSERT_TRUE(StartCollector(config_, "session", healthy).ok());
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_TRUE(Exists(path_));
}

TEST_F(CollectorLifecycleTest, FailedCallbackRegistrationUndoesTheStart) {
  cupti_.Fail("RegisterBufferCallbacks");
  absl::Status st = StartCollector(config_, "session", cupti_);
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(Exists(path_)) << "the half-made trace is removed";
  EXPECT_EQ(cupti_.Count("Unsubscribe"), 1u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u);
  EXPECT_FALSE(CollectorActive());
}

TEST_F(CollectorLifecycleTest, FailedActivityEnableDisablesWhatWasEnabledAndUndoesTheStart) {
  cupti_.Fail("EnableActivity:" + kMemsetKind);  // the third kind
  absl::Status st = StartCollector(config_, "session", cupti_);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("EnableActivity"));
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kMemcpyKind), 1u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kMemsetKind), 0u);
  EXPECT_EQ(cupti_.Count("Unsubscribe"), 1u);
  EXPECT_FALSE(Exists(path_));
  EXPECT_FALSE(CollectorActive());
  // The buffer callbacks find no session: a late CUPTI request gets no buffer.
  EXPECT_FALSE(cupti_.DeliverKernels(1, 1'000));
}

// Queue times are CUPTI's process-wide latency timestamps: on before the first kind, off again at
// the stop so that a later session without them does not pay for them.
TEST_F(CollectorLifecycleTest, QueueTimesAreOnBeforeTheKindsAndOffAfterTheStop) {
  config_.queue_times = true;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const int on = cupti_.LastIndexOf("EnableLatencyTimestamps:1");
  ASSERT_GE(on, 0);
  EXPECT_LT(on, cupti_.LastIndexOf("EnableActivity:" + kKernelKind));
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:0"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:0"), 1u);
}

// Negative control: by default CUPTI is never asked.
TEST_F(CollectorLifecycleTest, NoQueueTimesByDefault) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:1"), 0u);
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:0"), 0u);
}

// CUPTI refusing them costs the trace only its queue times: one line, and the session records.
TEST_F(CollectorLifecycleTest, RefusedQueueTimesLeaveTheSessionRecording) {
  config_.queue_times = true;
  cupti_.Fail("EnableLatencyTimestamps:1");
  config_.quiet = false;
  ::testing::internal::CaptureStderr();
  const absl::Status st = StartCollector(config_, "session", cupti_);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_THAT(err, HasSubstr("cuscope: kernels carry no queue times"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ASSERT_TRUE(cupti_.DeliverKernels(3, 1'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:0"), 0u) << "never on, never turned off";
  EXPECT_EQ(Load().kernels.size(), 3u);
}

// A failure after them (a kind) turns them off again.
TEST_F(CollectorLifecycleTest, AStartFailingAfterQueueTimesTurnsThemOff) {
  config_.queue_times = true;
  cupti_.Fail("EnableActivity:" + kKernelKind);
  EXPECT_FALSE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableLatencyTimestamps:0"), 1u);
  EXPECT_FALSE(CollectorActive());
}

TEST_F(CollectorLifecycleTest, FailedProfilerGateUndoesTheStart) {
  config_.capture_range = "cudaProfilerApi";
  cupti_.Fail(absl::StrCat("EnableCallback:", static_cast<int>(CUPTI_CB_DOMAIN_DRIVER_API), ":",
                           static_cast<int>(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)));
  EXPECT_FALSE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("Unsubscribe"), 1u);
  EXPECT_FALSE(Exists(path_));
  EXPECT_FALSE(CollectorActive());
}

TEST_F(CollectorLifecycleTest, ProfilerApiGateRecordsOnlyBetweenStartAndStop) {
  config_.capture_range = "cudaProfilerApi";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u) << "nothing is recorded before the gate opens";
  cupti_.CallProfilerStart();
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'000'000'000));
  cupti_.CallProfilerStop();
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  cupti_.CallProfilerStart();
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 2u) << "a second range records again";
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 2u);

  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 4u);
  // Each edge is a window record: opened by the start, closed by the stop, opened again.
  ASSERT_GE(trace.windows.size(), 3u);
  EXPECT_EQ(trace.windows[0].reason(), "cudaProfilerStart");
  EXPECT_GT(trace.windows[0].start_ns(), 0u);
  EXPECT_EQ(trace.windows[1].reason(), "cudaProfilerStop");
  EXPECT_GT(trace.windows[1].end_ns(), trace.windows[0].start_ns());
  EXPECT_EQ(trace.windows[2].reason(), "cudaProfilerStart");
}

// -c nvtx --nvtx-capture step: the first "step" range is the window, as in Nsight Systems.
TEST_F(CollectorLifecycleTest, AnNvtxCaptureRangeRecordsTheFirstRangeOfItsName) {
  config_.capture_range = "nvtx";
  config_.nvtx_capture = "step";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableCallback:", static_cast<int>(CUPTI_CB_DOMAIN_NVTX), ":",
                                      static_cast<int>(CUPTI_CBID_NVTX_nvtxRangePushA))),
            1u);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u) << "nothing is recorded before the range";
  const nvtxRangePushA_params setup{"setup"}, step{"step"}, inner{"forward"};
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &setup);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePop, nullptr);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &step);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(cupti_.DeliverKernels(3, 2'000'000'000));
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &inner);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePop, nullptr);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 0u) << "a range inside the step does not end it";
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePop, nullptr);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &step);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u) << "the first step only";
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 3u);
  ASSERT_GE(trace.windows.size(), 2u);
  EXPECT_EQ(trace.windows[0].reason(), "NVTX range step");
  EXPECT_EQ(trace.windows[1].reason(), "NVTX range step ended");
}

TEST_F(CollectorLifecycleTest, AnNvtxCaptureRangeOfTheExAndStartEndKinds) {
  config_.capture_range = "nvtx";
  config_.nvtx_capture = "request";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "request";
  const nvtxDomainRangeStartEx_params start{nullptr, {&attributes}};
  const nvtxRangeId_t id = 42;
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &start, &id);
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  const nvtxRangeEnd_params other{41};
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, &other);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePop, nullptr);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 0u);
  const nvtxDomainRangeEnd_params end{nullptr, {42}};
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &end);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// A program that never starts the range records nothing.
TEST_F(CollectorLifecycleTest, AnNvtxCaptureRangeThatNeverStartsRecordsNothing) {
  config_.capture_range = "nvtx";
  config_.nvtx_capture = "step";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const nvtxRangePushA_params other{"steps"};
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &other);
  cupti_.CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, nullptr);  // no parameters: ignored
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_TRUE(Load().kernels.empty());
}

// A window that opens once the program runs (a cudaProfilerApi range, a delay) enables the API
// kinds then, which undoes the last window's per-call choice: each window chooses again, after its
// own enabling.
TEST_F(CollectorLifecycleTest, EachWindowTurnsTheUnreadCallsOffAgain) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  config_.capture_range = "cudaProfilerApi";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), 0u) << "nothing is chosen before the gate opens";
  for (size_t window = 1; window <= 2; ++window) {
    cupti_.CallProfilerStart();
    EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), window);
    EXPECT_LT(cupti_.LastIndexOf("EnableActivity:" + kRuntimeKind), cupti_.LastIndexOf(kLeanGetDevice + ":0"));
    EXPECT_EQ(cupti_.Count(kLeanLaunch + ":0"), 0u);
    cupti_.CallProfilerStop();
    EXPECT_EQ(cupti_.Count("DisableActivity:" + kRuntimeKind), window);
  }
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// The top-down chooses its hot kernels a moment after its window closed; a program that ends
// sooner still gets the choice, made at the stop, behind the window's records.
TEST_F(CollectorLifecycleTest, TopDownChoosesAtTheStopWhenTheProgramEndsRightAfterItsWindow) {
  config_.capture_range = "cudaProfilerApi";
  config_.top_down_kernels = 1;
  config_.top_down_launches = 2;
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  config_.metrics_request = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.CallProfilerStart();
  ASSERT_TRUE(cupti_.DeliverKernels(6, 2'000'000'000));
  cupti_.AdvanceClock(2'000'000'000);  // the window closes after its kernels
  cupti_.CallProfilerStop();
  ASSERT_TRUE(StopCollector(nullptr).ok());  // at once: well within the settling time
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 6u);
  ASSERT_EQ(trace.top_down.size(), 1u);
  EXPECT_EQ(trace.top_down[0].kernels_size(), 1);
  EXPECT_TRUE(trace.metrics.empty());
}

TEST_F(CollectorLifecycleTest, DelayedWindowOpensOnTheControlThread) {
  config_.delay_seconds = 0.05;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("EnableActivity:" + kKernelKind) == 1; }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  ASSERT_FALSE(trace.windows.empty());
  EXPECT_EQ(trace.windows[0].reason(), "delay");
}

// Windows that open after the program starts, with the Range Profiler or the GPU counters to run
// in them: the kinds go on at the start and stay on (enabled late, CUPTI gave such a window's
// kernels one correlation id or lost them on the H200; activity_selection.h), and the trace keeps
// only the windows' records.
TEST_F(CollectorLifecycleTest, WindowsWithAProfilerHoldTheKindsFromTheStartAndKeepOnlyTheirRecords) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.set_driver_has_context(false);  // injected: before the program's first call
  config_.capture_range = "cudaProfilerApi";
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u) << "on from the start";
  EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), 1u) << "lean as ever";
  ASSERT_TRUE(cupti_.DeliverKernels(3, 500'000'000));  // before the window: left out
  cupti_.AdvanceClock(1'000'000'000);
  cupti_.CallProfilerStart();
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u) << "the window does not enable again";
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'500'000'000));  // inside it
  cupti_.AdvanceClock(2'000'000'000);
  cupti_.CallProfilerStop();
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 0u) << "held between windows";
  ASSERT_TRUE(cupti_.DeliverKernels(2, 5'000'000'000));  // after it: left out
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u) << "off at the end";
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("correlation id"), std::string::npos);
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 4u);
  ASSERT_GE(trace.windows.size(), 2u);
  EXPECT_EQ(trace.windows[0].reason(), "cudaProfilerStart");
}

// With the kinds held, the program's work after the window keeps CUPTI's buffers incomplete, so
// the window's kernels reach the top-down's choice only through a forced flush (on the H200 a
// default one left the choice with no kernel).
TEST_F(CollectorLifecycleTest, AHeldTopDownChoosesAmongTheWindowsKernelsStillInAnOpenBuffer) {
  cupti_.set_driver_has_context(false);
  config_.capture_range = "cudaProfilerApi";
  config_.top_down_kernels = 1;
  config_.top_down_launches = 2;
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  config_.metrics_request = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.AdvanceClock(1'000'000'000);
  cupti_.CallProfilerStart();
  ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(4, 2'500'000'000));
  cupti_.AdvanceClock(2'000'000'000);
  cupti_.CallProfilerStop();
  // The choice comes a moment after the window closed, while the program still runs.
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("FlushAll:forced") >= 1; }));
  const size_t forced_before_stop = cupti_.Count("FlushAll:forced");
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_GE(forced_before_stop, 1u);
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 4u);
  ASSERT_EQ(trace.top_down.size(), 1u);
  EXPECT_EQ(trace.top_down[0].kernels_size(), 1) << "the window's kernels were there to choose from";
}

// --stacks all: each launch's call stack reaches the trace, joined to its kernel by the launch's
// correlation id; launches from one call site share one stack; cuscope's own frames are left out.
TEST_F(CollectorLifecycleTest, LaunchStacksReachTheTraceJoinedToTheirKernels) {
  // Lean calls by API records, so that the launch callbacks counted are the stacks' alone.
  config_.lean_calls_by_records = true;
  config_.stacks = *settings::ParseStackSampling("all");
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(process::ActiveUnwinder(), process::Unwinder::kLibunwind) << "the default, libunwind8 being installed here";
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableCallback:", static_cast<int>(CUPTI_CB_DOMAIN_RUNTIME_API), ":",
                                      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)),
            1u);
  for (uint32_t corr = 1; corr <= 3; ++corr) cupti_.CallLaunch(corr, "fakeKernel");  // one call site
  cupti_.CallLaunch(4, "fakeKernel", /*driver_only=*/true);                            // another
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  ASSERT_EQ(trace.launch_stacks.size(), 4u) << "a runtime launch's driver call adds no second stack";
  std::map<uint64_t, uint32_t> stack_of;
  for (const core::LaunchStackRow& l : trace.launch_stacks) stack_of[l.correlation_id] = l.stack;
  ASSERT_EQ(stack_of.size(), 4u);
  EXPECT_EQ(stack_of[1], stack_of[2]);
  EXPECT_EQ(stack_of[1], stack_of[3]);
  EXPECT_NE(stack_of[1], stack_of[4]);
  const v1::CallStack& stack = trace.dict.stack(stack_of[1]);
  ASSERT_GT(stack.frames_size(), 2);
  bool this_program = false;
  for (uint32_t f : stack.frames()) {
    const std::string& module = trace.dict.str(trace.dict.frame(f).module());
    EXPECT_EQ(module.find("libcuscope"), std::string::npos) << module;
    this_program |= module.find("collector_lifecycle_test") != std::string::npos || module == "?";
  }
  EXPECT_TRUE(this_program) << "the test's own frames, where the launches were made";
}

// A writer that falls behind (here: no buffer arrives to wake it) holds at most
// kMaxQueuedLaunchStacks stacks; the rest are dropped, counted in the trace's statistics, and the
// launches themselves are unaffected.
TEST_F(CollectorLifecycleTest, LaunchStacksPastTheQueuesBoundAreDroppedAndCounted) {
  // Lean calls by API records, so that the launch callbacks counted are the stacks' alone.
  config_.lean_calls_by_records = true;
  config_.stacks = *settings::ParseStackSampling("all");
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const uint32_t launches = static_cast<uint32_t>(TracePipeline::kMaxQueuedLaunchStacks) + 100;
  for (uint32_t corr = 1; corr <= launches; ++corr) cupti_.CallLaunch(corr, "fakeKernel");
  ASSERT_TRUE(cupti_.DeliverKernels(2, 2'000'000'000));
  CollectorSummary summary;
  ASSERT_TRUE(StopCollector(&summary).ok());
  EXPECT_EQ(summary.launch_stacks_dropped, 100u);
  core::Trace trace = Load();
  EXPECT_EQ(trace.launch_stacks.size(), TracePipeline::kMaxQueuedLaunchStacks);
  ASSERT_TRUE(trace.stats.has_value());
  EXPECT_EQ(trace.stats->launch_stacks_dropped(), 100u);
}

// CUSCOPE_UNWINDER=libgcc: the same stacks, walked by the C runtime's unwinder.
TEST_F(CollectorLifecycleTest, LaunchStacksWithLibgccsUnwinder) {
  config_.stacks = *settings::ParseStackSampling("all");
  config_.unwinder = process::Unwinder::kLibgcc;
  ASSERT_TRUE(process::UseLibunwind().ok());
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(process::ActiveUnwinder(), process::Unwinder::kLibgcc);
  for (uint32_t corr = 1; corr <= 3; ++corr) cupti_.CallLaunch(corr, "fakeKernel");  // one call site
  ASSERT_TRUE(cupti_.DeliverKernels(3, 2'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  ASSERT_EQ(trace.launch_stacks.size(), 3u);
  EXPECT_EQ(trace.launch_stacks[0].stack, trace.launch_stacks[1].stack);
  EXPECT_EQ(trace.launch_stacks[0].stack, trace.launch_stacks[2].stack);
  bool this_program = false;
  for (uint32_t f : trace.dict.stack(trace.launch_stacks[0].stack).frames()) {
    this_program |= trace.dict.str(trace.dict.frame(f).module()).find("collector_lifecycle_test") != std::string::npos;
  }
  EXPECT_TRUE(this_program);
}

// first:K takes the first K launches of each kernel; none (the default) turns nothing on; a launch
// outside the timeline window leaves no kernel to attach a stack to, so none is taken.
TEST_F(CollectorLifecycleTest, LaunchStacksFollowTheirSamplingAndTheWindow) {
  config_.stacks = *settings::ParseStackSampling("first:2");
  config_.capture_range = "cudaProfilerApi";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  cupti_.CallLaunch(1, "fakeKernel");  // before the window
  cupti_.CallProfilerStart();
  static const char* const kOther = "otherKernel";
  for (uint32_t corr = 2; corr <= 6; ++corr) cupti_.CallLaunch(corr, "fakeKernel");
  cupti_.CallLaunch(7, kOther);
  ASSERT_TRUE(cupti_.DeliverKernels(7, 2'000'000'000));
  cupti_.AdvanceClock(2'000'000'000);
  cupti_.CallProfilerStop();
  ASSERT_TRUE(StopCollector(nullptr).ok());
  std::set<uint64_t> taken;
  for (const core::LaunchStackRow& l : Load().launch_stacks) taken.insert(l.correlation_id);
  EXPECT_EQ(taken, (std::set<uint64_t>{2, 3, 7}));
}

// CUDA graphs: each kernel node's creating stack (stream capture makes one per captured launch),
// and the clones instantiation makes, whose ids replayed kernels carry.
TEST_F(CollectorLifecycleTest, GraphNodesKeepTheStackThatCreatedThem) {
  config_.stacks = *settings::ParseStackSampling("first:1");  // nodes are taken whatever the sampling
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableCallback:", static_cast<int>(CUPTI_CB_DOMAIN_RESOURCE), ":",
                                      CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)),
            1u);
  cupti_.CallGraphNodeCreated(0x1000);
  cupti_.CallGraphNodeCreated(0x1010);
  cupti_.CallGraphNodeCloned(0x2000, 0x1000);
  cupti_.CallGraphNodeCloned(0x2010, 0x1010);
  ASSERT_TRUE(cupti_.DeliverKernels(1, 2'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  const core::Trace trace = Load();
  std::map<uint64_t, core::GraphNodeRow> nodes;
  for (const core::GraphNodeRow& g : trace.graph_nodes) nodes[g.node_id] = g;
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_NE(nodes[0x1000].stack, 0u);
  EXPECT_NE(nodes[0x1010].stack, 0u);
  EXPECT_GT(nodes[0x1000].created_ns, 0u) << "when, for the NVTX range open at the capture";
  ASSERT_NE(nodes[0x1000].thread, 0u);
  EXPECT_EQ(trace.dict.thread(nodes[0x1000].thread).tid(), static_cast<uint64_t>(::syscall(SYS_gettid)));
  EXPECT_EQ(nodes[0x2000].thread, 0u);
  EXPECT_EQ(nodes[0x2000].original_node_id, 0x1000u);
  EXPECT_EQ(nodes[0x2000].stack, 0u);
  EXPECT_EQ(nodes[0x2010].original_node_id, 0x1010u);
}

TEST_F(CollectorLifecycleTest, NoLaunchStacksByDefault) {
  // Lean calls by API records, so that the launch callbacks counted are the stacks' alone.
  config_.lean_calls_by_records = true;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableCallback:", static_cast<int>(CUPTI_CB_DOMAIN_RUNTIME_API), ":",
                                      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)),
            0u);
  cupti_.CallLaunch(1, "fakeKernel");  // even if a launch came through
  ASSERT_TRUE(cupti_.DeliverKernels(1, 2'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_TRUE(Load().launch_stacks.empty());
}

// Negative control: without held kinds (the window opens with the session) the choice's flush is a
// default one: a forced flush would hand over the program's running kernels without timestamps.
TEST_F(CollectorLifecycleTest, ATopDownWithoutHeldKindsChoosesAfterADefaultFlush) {
  config_.duration_seconds = 0.05;
  config_.top_down_kernels = 1;
  config_.top_down_launches = 2;
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  config_.metrics_request = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  config_.flush_period_ms = 60'000;  // no periodic flush: the choice's is the only one before the stop
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(3, 1'000'000'000));
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("FlushAll") >= 1; })) << "the choice flushed";
  EXPECT_EQ(cupti_.Count("FlushAll:forced"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  ASSERT_EQ(trace.top_down.size(), 1u);
  EXPECT_EQ(trace.top_down[0].kernels_size(), 1);
}

// Many windows with the kinds held: each record is kept only when it starts inside one of them,
// the first, a middle or the last, and dropped in every gap.
TEST_F(CollectorLifecycleTest, HeldKindsKeepTheRecordsOfEveryWindowAndNoneBetween) {
  cupti_.set_driver_has_context(false);
  config_.capture_range = "cudaProfilerApi";
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  // Windows of 1 s every 3 s on the fake clock; one kernel inside each, one in each gap.
  for (int w = 0; w < 5; ++w) {
    const uint64_t open = 1'000'000'000ull * (3 * w + 2);
    cupti_.AdvanceClock(open - cupti_.Timestamp());
    cupti_.CallProfilerStart();
    ASSERT_TRUE(cupti_.DeliverKernels(1, open + 500'000'000));     // inside
    cupti_.AdvanceClock(1'000'000'000);
    cupti_.CallProfilerStop();
    ASSERT_TRUE(cupti_.DeliverKernels(1, open + 1'500'000'000));   // after it
  }
  ASSERT_TRUE(StopCollector(nullptr).ok());
  const core::Trace trace = Load();
  ASSERT_EQ(trace.kernels.size(), 5u);
  for (int w = 0; w < 5; ++w) {
    EXPECT_EQ(trace.kernels[w].start, 1'000'000'000ull * (3 * w + 2) + 500'000'000) << w;
  }
}

TEST_F(CollectorLifecycleTest, ADelayedWindowWithGpuCountersHoldsTheKindsToo) {
  cupti_.set_driver_has_context(false);
  config_.delay_seconds = 0.05;
  config_.gpu_metrics = true;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
}

// Linked in after the program's first CUDA call, a session cannot hold its kinds from before it:
// it holds them from now and says so once.
TEST_F(CollectorLifecycleTest, AHeldSessionStartedAfterTheProgramsFirstCallSaysSo) {
  cupti_.set_driver_has_context(true);
  config_.delay_seconds = 5;
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("this session starts after the program's first CUDA call"), std::string::npos) << err;
  EXPECT_EQ(err.find("this session starts", err.find("this session starts") + 1), std::string::npos) << "once";
}

// Without a profiler a late window toggles the kinds as before (the cheaper way).
TEST_F(CollectorLifecycleTest, ALateWindowWithoutAProfilerEnablesItsKindsWhenItOpens) {
  config_.capture_range = "cudaProfilerApi";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 0u);
  cupti_.CallProfilerStart();
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kKernelKind), 1u);
  cupti_.CallProfilerStop();
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, ADelayedWindowWithoutAProfilerStaysLeanAndSaysNothing) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  config_.delay_seconds = 0.05;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("EnableActivity:" + kRuntimeKind) == 1; }));
  EXPECT_TRUE(Eventually([&] { return cupti_.Count(kLeanGetDevice + ":0") == 1; }));
  EXPECT_EQ(cupti_.Count(kLeanLaunch + ":0"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("correlation id"), std::string::npos);
}

// The same session started with the program (no context yet) stays lean.
TEST_F(CollectorLifecycleTest, ASessionStartedBeforeTheProgramsFirstCallStaysLeanWithKernelMetrics) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.set_driver_has_context(false);
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(kLeanGetDevice + ":0"), 1u);
  EXPECT_EQ(cupti_.Count(kLeanLaunch + ":0"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Linked in and started once the program has a context: late, like a delayed window.
TEST_F(CollectorLifecycleTest, ASessionStartedAfterTheProgramsFirstCallWithKernelMetricsSaysSo) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.set_driver_has_context(true);
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count("EnableActivity:" + kRuntimeKind), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("one correlation id"), std::string::npos);
}

// Kernel metrics call cuStreamIsCapturing inside the program's launches: with every driver call
// recorded, that one stays out of the trace; without kernel metrics it is the program's and stays.
TEST_F(CollectorLifecycleTest, KernelMetricsKeepTheirOwnDriverCallOutOfTheTrace) {
  cupti_.set_driver_has_context(false);  // injected: started before the program's first call
  config_.activity_kinds = {"kernel", "runtime", "driver"};
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(kOwnStreamIsCapturing), 1u);
  EXPECT_EQ(PerCallChoices(cupti_, "0"), 2u);
  EXPECT_GT(cupti_.LastIndexOf(kOwnStreamIsCapturing), cupti_.LastIndexOf("EnableActivity:" + kDriverKind));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Lean (the default), the call is off already as one the analyzer does not read: once, not twice.
TEST_F(CollectorLifecycleTest, LeanKernelMetricsTurnTheirOwnCallOffOnce) {
  // CUPTI's API records for the lean calls (CUSCOPE_LEAN_CALLS=records): the per-call choices below.
  config_.lean_calls_by_records = true;
  cupti_.set_driver_has_context(false);
  config_.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(kOwnStreamIsCapturing), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, WithoutKernelMetricsTheProgramsStreamIsCapturingIsRecorded) {
  config_.activity_kinds = {"kernel", "runtime", "driver"};
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_EQ(cupti_.Count(kOwnStreamIsCapturing), 0u);
  EXPECT_EQ(PerCallChoices(cupti_, "0"), 0u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorLifecycleTest, DurationClosesTheWindowBeforeTheStop) {
  config_.duration_seconds = 0.05;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("DisableActivity:" + kKernelKind) == 1; }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.Count("DisableActivity:" + kKernelKind), 1u) << "the stop does not close it twice";
}

// A full disk or a quota: the program goes on, the trace keeps what was written before, and
// recording stops with one line.
TEST_F(CollectorLifecycleTest, WriteFailureStopsRecordingAndKeepsTheTraceReadable) {
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(2, 2'000'000'000));
  // Let the file grow by 64 bytes at most once the first chunk is on disk.
  const uint64_t written = SizeOnceWritten(path_);
  ASSERT_GT(written, 0u);
  rlimit small = before;
  small.rlim_cur = static_cast<rlim_t>(written) + 64;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  ASSERT_TRUE(cupti_.DeliverKernels(60, 3'000'000'000));
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("DisableActivity:" + kKernelKind) == 1; }))
      << "recording stops when writing fails";
  absl::Status stopped = StopCollector(nullptr);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &before), 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(err, HasSubstr("cuscope: "));
  EXPECT_THAT(err, HasSubstr("profiling stopped, the trace keeps what was written before"));

  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 2u) << "what was written before the failure stays readable";
}

TEST_F(CollectorLifecycleTest, ForkedChildNeitherWritesNorFlushesTheParentsTrace) {
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(3, 2'000'000'000));
  // Fork once the writer has written that buffer and waits: a thread inside the allocator at the
  // fork would leave it locked in the child under AddressSanitizer, whose allocator (GCC 12's) has
  // no fork handlers. The program's own fork has no such wait: the child's handler allocates nothing.
  ASSERT_GT(SizeOnceWritten(path_), 0u);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MarkCollectorForkedChild();
    const size_t calls = cupti_.Calls().size();
    bool ok = !CollectorActive();
    ok = ok && StopCollector(nullptr).ok();
    ok = ok && !cupti_.DeliverKernels(5, 5'000'000'000);  // the child gets no buffer
    ok = ok && cupti_.Calls().size() == calls;          // and no CUPTI call was made for it
    // A request through the API is refused at once: the child has no control thread to answer it.
    const auto asked = std::chrono::steady_clock::now();
    ok = ok && OpenCollectorTraceWindow(0).code() == absl::StatusCode::kFailedPrecondition;
    ok = ok && std::chrono::steady_clock::now() - asked < std::chrono::seconds(2);
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(cupti_.DeliverKernels(2, 3'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  core::Trace trace = Load();
  EXPECT_EQ(trace.kernels.size(), 5u);
  EXPECT_FALSE(trace.truncated());
}

TEST_F(CollectorLifecycleTest, PoolAtItsCapRefusesBuffersAndSaysHowMany) {
  config_.buffer_pool_cap_bytes = config_.buffer_bytes;  // one buffer
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(1, 2'000'000'000));
  EXPECT_FALSE(cupti_.DeliverKernels(1, 3'000'000'000)) << "the only buffer is still with CUPTI";
  CollectorSummary summary;
  ASSERT_TRUE(StopCollector(&summary).ok());
  EXPECT_EQ(summary.buffers_refused, 1u);
  EXPECT_EQ(summary.kernels, 1u);
}

// Sanitizers keep freed memory aside (ASan's quarantine) and map shadow memory of their own, so
// under them the cycles run (for the races and leaks they look for) but RSS says nothing.
// GCC names the sanitizers with macros, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUSCOPE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CUSCOPE_TEST_SANITIZED 1
#endif
#endif
#if defined(CUSCOPE_TEST_SANITIZED)
constexpr bool kRssMeaningful = false;
constexpr int kCycles = 200;
#else
constexpr bool kRssMeaningful = true;
constexpr int kCycles = 1000;
#endif

// A server starts and stops sessions for years: what a session used (its buffers, its threads) is
// given back at each stop.
TEST_F(CollectorLifecycleTest, ThousandStartStopCyclesKeepMemoryAndThreadsFlat) {
  config_.buffer_bytes = 4ull << 20;  // the default: a kept buffer per session would show at once
  path_ = dir_ + "/cycle.cuscope";
  config_.output = path_;
  config_.force_overwrite = true;
  config_.quiet = true;
  const auto cycle = [&] {
    ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
    // 256 records touch 256 KiB of the buffer: 1,000 kept buffers would add 250 MiB.
    ASSERT_TRUE(cupti_.DeliverKernels(256, 2'000'000'000));
    ASSERT_TRUE(StopCollector(nullptr).ok());
    cupti_.ClearCalls();  // the fake's own log of calls is not the collector's memory
  };
  for (int i = 0; i < 20; ++i) cycle();  // the allocator's and the test's own first-time costs
  const uint64_t rss_kb = ProcessStatus("VmRSS");
  const uint64_t threads = ProcessStatus("Threads");
  for (int i = 0; i < kCycles; ++i) {
    cycle();
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ProcessStatus("Threads"), threads);
  if (kRssMeaningful) {
    EXPECT_LT(ProcessStatus("VmRSS"), rss_kb + 32 * 1024) << "RSS grew by more than 32 MiB over 1,000 sessions";
  }
  EXPECT_EQ(Load().kernels.size(), 256u) << "the last session's trace is whole";
}

// The same for monitor mode with its Prometheus endpoint: the server's threads go with each stop.
TEST_F(CollectorLifecycleTest, MonitorSessionsWithAnEndpointKeepThreadsFlat) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.output = "";
  config_.prometheus = "127.0.0.1:0";
  config_.quiet = true;
  const auto cycle = [&] {
    ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
    ASSERT_GT(CollectorPrometheusPort(), 0);
    ASSERT_TRUE(cupti_.DeliverKernels(16, 2'000'000'000));
    ASSERT_TRUE(StopCollector(nullptr).ok());
  };
  for (int i = 0; i < 5; ++i) cycle();
  const uint64_t threads = ProcessStatus("Threads");
  for (int i = 0; i < 50; ++i) {  // each stop joins the server's threads: ~0.2 s a cycle
    cycle();
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ProcessStatus("Threads"), threads);
}

// A port already taken: one line, and the figures go on without the endpoint.
TEST_F(CollectorLifecycleTest, AnEndpointThatCannotListenIsOneLineAndMonitoringGoesOn) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.monitor_interval_ms = 100;
  config_.prometheus = "127.0.0.1:0";
  config_.quiet = true;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const int taken = CollectorPrometheusPort();
  ASSERT_GT(taken, 0);
  FakeCupti second;
  settings::Config other = config_;
  other.output = dir_ + "/second.cuscope";
  other.prometheus = absl::StrCat("127.0.0.1:", taken);
  other.quiet = false;
  // The port the first session had, now held by someone else (here: another endpoint).
  ASSERT_TRUE(StopCollector(nullptr).ok());
  auto holder = monitor::PrometheusExporter::Start(absl::StrCat("127.0.0.1:", taken));
  ASSERT_TRUE(holder.ok()) << holder.status();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(StartCollector(other, "session", second).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(CollectorPrometheusPort(), 0);
  EXPECT_THAT(err, HasSubstr("cuscope: no Prometheus endpoint"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ASSERT_TRUE(second.DeliverKernels(3, 1'050'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  auto trace = core::LoadTrace(other.output);
  ASSERT_TRUE(trace.ok());
  uint64_t kernels = 0;
  for (const auto& m : trace->monitor_intervals) {
    for (const auto& d : m.devices()) kernels += d.kernels();
  }
  EXPECT_EQ(kernels, 3u);
}

TEST_F(CollectorLifecycleTest, StopWithoutStartIsAnError) {
  EXPECT_EQ(StopCollector(nullptr).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FlushCollector().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace cuscope::cupti
