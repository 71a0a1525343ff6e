#include "lib/analysis/tables.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/launch_sites.h"
#include "lib/process/call_stack.h"
#include "lib/process/python_stack.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;

class TablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // gemm: 3 launches of 100, 200, 600 us; relu: 1 launch of 100 us, with a different grid.
    s_.Launch("gemm", 0, 5, 10, 100);
    s_.Launch("gemm", 200, 5, 210, 200);
    s_.Launch("gemm", 500, 5, 520, 600);
    s_.Kernel("relu", 1200, 100, 7, 0, 0, 0, 0, /*grid_x=*/64);
    s_.Memcpy(v1::COPY_KIND_HTOD, 1400, 50, 2'000'000, true);
    s_.Memcpy(v1::COPY_KIND_HTOD, 1500, 30, 1'000'000, true);
    s_.Memset(1600, 10, 4096, true);
    trace_ = s_.Load();
  }
  SyntheticTrace s_;
  core::Trace trace_;
};

TEST_F(TablesTest, KernelSummaryHasNsysColumnsAndStatistics) {
  const Timeline t = Timeline::Build(trace_);
  const Table table = KernelSummary(t);
  ASSERT_EQ(table.rows.size(), 2u);
  // Time% of kernel time; total; instances; avg; median; min; max; stddev; name.
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"90.0", "900000", "3", "300000.0", "200000.0", "100000",
                                                      "600000", "264575.1", "gemm"}));
  EXPECT_EQ(table.rows[1][8], "relu");
  const std::string text = RenderText(table);
  EXPECT_NE(text.find("Time (%)  Total Time (ns)  Instances"), std::string::npos) << text;
  EXPECT_NE(text.find("900,000"), std::string::npos) << text;
  EXPECT_NE(text.find("264,575.1"), std::string::npos) << text;
}

TEST_F(TablesTest, GridBlockVariantSplitsByLaunchShape) {
  SyntheticTrace s;
  s.Kernel("gemm", 0, 10, 7, 0, 0, 0, 0, 1);
  s.Kernel("gemm", 20, 30, 7, 0, 0, 0, 0, 8);
  const core::Trace trace = s.Load();
  const Table table = KernelGridBlockSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][8], "8 1 1");
  EXPECT_EQ(table.rows[0][9], "128 1 1");
  EXPECT_EQ(table.rows[0][10], "gemm");
  EXPECT_EQ(KernelSummary(Timeline::Build(trace)).rows.size(), 1u);
}

TEST_F(TablesTest, MemoryAndApiAndExecutionSummaries) {
  const Timeline t = Timeline::Build(trace_);
  const Table time = MemoryTimeSummary(t);
  ASSERT_EQ(time.rows.size(), 2u);
  EXPECT_EQ(time.rows[0].back(), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(time.rows[0][1], "80000");
  EXPECT_EQ(time.rows[1].back(), "[CUDA memset]");
  const Table size = MemorySizeSummary(t);
  EXPECT_EQ(size.rows[0][0], "3.000");  // MB
  EXPECT_EQ(size.rows[0][3], "1.500");  // median of 1 and 2 MB

  const Table api = ApiSummary(t);
  ASSERT_EQ(api.rows.size(), 1u);
  EXPECT_EQ(api.rows[0].back(), "cudaLaunchKernel");
  EXPECT_EQ(api.rows[0][2], "3");

  const Table exec = KernelExecutionSummary(t);
  ASSERT_EQ(exec.rows.size(), 1u);
  // nsys's columns: PID, TID, DevId, Count, QCount, then T (total), A (API), Q (queue), K (kernel) x
  // Avg Med Min Max StdDev, the API and the kernel.
  ASSERT_EQ(exec.columns.size(), 27u);
  EXPECT_EQ(exec.columns[0].name, "PID");
  EXPECT_EQ(exec.columns[1].name, "TID");
  EXPECT_EQ(exec.columns[2].name, "DevId");
  EXPECT_EQ(exec.columns[5].name, "TAvg (ns)");
  EXPECT_EQ(exec.columns[10].name, "AAvg (ns)");
  EXPECT_EQ(exec.columns[15].name, "QAvg (ns)");
  EXPECT_EQ(exec.rows[0][0], "42");      // the synthetic trace's process
  EXPECT_EQ(exec.rows[0][1], "1");       // and thread
  EXPECT_EQ(exec.rows[0][2], "0");       // device
  EXPECT_EQ(exec.rows[0][3], "3");       // launches
  EXPECT_EQ(exec.rows[0][15], "8333.3");  // queue avg: (5 + 5 + 15) us / 3
  EXPECT_EQ(exec.rows[0][18], "15000");   // queue max
  // Total = API start to kernel end: the API time plus the queue delay plus the kernel, here.
  const double total = std::stod(exec.rows[0][5]), api_avg = std::stod(exec.rows[0][10]),
               kernel_avg = std::stod(exec.rows[0][20]);
  EXPECT_NEAR(total, api_avg + 8333.3 + kernel_avg, 0.2);
  EXPECT_EQ(exec.rows[0][25], "cudaLaunchKernel");
  EXPECT_EQ(exec.rows[0][26], "gemm");
}

// The same kernel launched from two threads: a row each, as nsys groups by process and thread.
TEST_F(TablesTest, ExecutionSummaryHasARowPerLaunchingThread) {
  SyntheticTrace s;
  s.Launch("gemm", 0, 10, 20, 30, /*stream=*/7, /*tid=*/1);
  s.Launch("gemm", 100, 10, 120, 30, /*stream=*/7, /*tid=*/2);
  s.Launch("gemm", 200, 10, 220, 30, /*stream=*/7, /*tid=*/2);
  const core::Trace trace = s.Load();
  const Table exec = KernelExecutionSummary(Timeline::Build(trace));
  ASSERT_EQ(exec.rows.size(), 2u);
  EXPECT_EQ(exec.rows[0][1], "2");  // the thread with more launches first
  EXPECT_EQ(exec.rows[0][3], "2");
  EXPECT_EQ(exec.rows[1][1], "1");
  EXPECT_EQ(exec.rows[1][3], "1");
}

TEST_F(TablesTest, NvtxSummaryGroupsRangesByNameAcrossThreads) {
  SyntheticTrace s;
  s.NvtxRange("train_step", 0, 100, 1);
  s.NvtxRange("train_step", 200, 500, 1);
  s.NvtxRange("train_step", 0, 200, 2);  // another thread
  s.NvtxRange("forward", 10, 60, 1);     // nested in the first step
  const core::Trace trace = s.Load();
  const Table table = NvtxSummary(Timeline::Build(trace));
  EXPECT_EQ(table.name, "nvtx_sum");
  ASSERT_EQ(table.rows.size(), 2u);
  // Time% of all range time; total; instances; avg; median; min; max; stddev; style; range.
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"92.3", "600000", "3", "200000.0", "200000.0", "100000",
                                                      "300000", "100000.0", "PushPop", "train_step"}));
  EXPECT_EQ(table.rows[1][2], "1");
  EXPECT_EQ(table.rows[1][9], "forward");
  // No ranges: no rows.
  EXPECT_TRUE(NvtxSummary(Timeline::Build(trace_)).rows.empty());
}

// nsys's Style column: a range ended on another thread than it began is a start/end range, a row of
// its own beside the push/pop ranges of the same name.
TEST_F(TablesTest, NvtxSummarySaysTheStyleOfEachRange) {
  SyntheticTrace s;
  s.NvtxRange("load", 0, 100, 1);
  s.NvtxRange("load", 0, 300, 1, /*end_tid=*/2);  // nvtxRangeStart on one thread, End on another
  const core::Trace trace = s.Load();
  const Table table = NvtxSummary(Timeline::Build(trace));
  ASSERT_EQ(table.columns[8].name, "Style");
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][8], "StartEnd");
  EXPECT_EQ(table.rows[0][1], "300000");
  EXPECT_EQ(table.rows[1][8], "PushPop");
  EXPECT_EQ(table.rows[1][9], "load");
}

// Two "train_step" instances launch work (one's last kernel ends after the range), a nested range
// launches one kernel, and ranges that launch nothing (another thread's, an idle one) are left out.
core::Trace StepsTrace() {
  SyntheticTrace s;
  s.NvtxRange("train_step", 0, 100, 1);
  s.NvtxRange("forward", 10, 60, 1);
  s.Launch("k", 20, 5, 30, 10);   // in both: forward 30..40
  s.Launch("k", 70, 5, 90, 60);   // step 1: 30..150
  s.NvtxRange("train_step", 200, 500, 1);
  s.Launch("k", 250, 5, 260, 40);  // step 2: 260..300
  s.NvtxRange("train_step", 0, 200, 2);  // another thread, nothing launched
  s.NvtxRange("idle", 600, 700, 1);
  s.Launch("k", 800, 5, 810, 10);  // in no range
  return s.Load();
}

TEST_F(TablesTest, NvtxGpuProjectionIsEachRangesGpuSpanFromItsLaunches) {
  const core::Trace trace = StepsTrace();
  const Table table = NvtxGpuProjectionSummary(Timeline::Build(trace));
  EXPECT_EQ(table.name, "nvtx_gpu_proj_sum");
  ASSERT_EQ(table.rows.size(), 2u);
  // Time%; total projected; total range time; instances; proj avg, med, min, max, stddev; GPU ops
  // total and per instance; range.
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"94.1", "160000", "400000", "2", "80000.0", "80000.0", "40000",
                                                      "120000", "56568.5", "3", "1.5", "train_step"}));
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"5.9", "10000", "50000", "1", "10000.0", "10000.0", "10000",
                                                      "10000", "0.0", "1", "1.0", "forward"}));
  EXPECT_TRUE(NvtxGpuProjectionSummary(Timeline::Build(trace_)).rows.empty());
}

TEST_F(TablesTest, AnalyzeShowsTheProjectionOnlyForRangesThatRepeat) {
  const auto has_projection = [](const core::Trace& trace) {
    for (const Table& t : Analyze(trace, AnalyzeOptions{}).tables) {
      if (t.name == "nvtx_gpu_proj_sum") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_projection(StepsTrace()));
  SyntheticTrace once;
  once.NvtxRange("setup", 0, 100, 1);
  once.Launch("k", 20, 5, 30, 10);
  once.NvtxRange("run", 200, 300, 1);
  once.Launch("k", 220, 5, 230, 10);
  EXPECT_FALSE(has_projection(once.Load()));
  EXPECT_FALSE(has_projection(trace_));
}

TEST_F(TablesTest, CsvAndJsonRenderings) {
  const Table table = KernelSummary(Timeline::Build(trace_));
  const std::string csv = RenderCsv(table);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name");
  EXPECT_NE(csv.find("90.0,900000,3,300000.0,200000.0,100000,600000,264575.1,gemm"), std::string::npos);
  const std::string json = RenderJson(table);
  EXPECT_NE(json.find("{\"report\":\"cuda_gpu_kern_sum\""), std::string::npos);
  EXPECT_NE(json.find("\"Instances\":3,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"Name\":\"gemm\""), std::string::npos);
  EXPECT_EQ(JsonQuote("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
}

// Kernels by launch site: launches from two places in the program, through the CUDA runtime (its
// frames are how, not where from), and a launch without a stack, which the table leaves out.
TEST(KernelStackSummaryTest, GroupsLaunchesByTheirFirstFrameOutsideTheCudaLibraries) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> runtime = {"/usr/local/cuda/lib64/libcudart.so.13", "cudaLaunchKernel"};
  const std::pair<std::string, std::string> driver = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", ""};
  const std::pair<std::string, std::string> train = {"/opt/app/bin/trainer", "_ZN5model5trainEv"};
  const std::pair<std::string, std::string> eval = {"/opt/app/bin/trainer", "_ZN5model8evaluateEv"};
  const std::pair<std::string, std::string> main_frame = {"/opt/app/bin/trainer", "main"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 100.0 * i, 5);
    s.Kernel("gemm", 100.0 * i + 10, 50, 7, corr);
    s.LaunchStack(corr, {driver, runtime, train, main_frame});
  }
  const uint64_t from_eval = s.Api("cudaLaunchKernel_v7000", 400, 5);
  s.Kernel("gemm", 410, 20, 7, from_eval);
  s.LaunchStack(from_eval, {runtime, eval, main_frame});
  s.Launch("relu", 500, 5, 510, 10);  // no stack taken
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  const Table table = KernelStackSummary(t);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.columns[table.columns.size() - 3].name, "Launched From");
  EXPECT_EQ(table.rows[0][2], "3");
  EXPECT_EQ(table.rows[0][8], "model::train (trainer)");
  EXPECT_EQ(table.rows[0][10], "gemm");
  EXPECT_EQ(table.rows[1][8], "model::evaluate (trainer)");
  EXPECT_EQ(table.rows[1][1], "20000");
  // The analysis shows it only when stacks were taken.
  const auto has_table = [](const core::Trace& tr) {
    const Timeline tl = Timeline::Build(tr);
    for (const Table& x : Analyze(tl, AnalyzeOptions()).tables) {
      if (x.name == "cuda_kern_stack_sum") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_table(trace));
  SyntheticTrace plain;
  plain.Launch("relu", 500, 5, 510, 10);
  EXPECT_FALSE(has_table(plain.Load()));
}

// Under CUDA graphs every kernel of one replay shares the graph launch's correlation id: each is
// attributed by its node, created by stream capture from a stack, cloned at instantiation.
TEST(KernelStackSummaryTest, GraphKernelsAreAttributedByTheirNodesCreatingStack) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> forward = {"/opt/app/bin/trainer", "_ZN5model7forwardEv"};
  const std::pair<std::string, std::string> backward = {"/opt/app/bin/trainer", "_ZN5model8backwardEv"};
  s.GraphNode(101, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, forward});
  s.GraphNode(102, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, backward});
  // The executable graph's nodes: CUDA creates them at instantiation (with that call's stack, as the
  // H200 showed) and reports them cloned from the captured ones: the clone's origin says where.
  const std::pair<std::string, std::string> instantiate = {"/opt/app/bin/trainer", "_ZN5model11instantiateEv"};
  s.GraphNode(201, {{"/lib/libcudart.so.13", "cudaGraphInstantiateWithFlags"}, instantiate});
  s.GraphNode(202, {{"/lib/libcudart.so.13", "cudaGraphInstantiateWithFlags"}, instantiate});
  s.GraphNodeClone(201, 101);
  s.GraphNodeClone(202, 102);
  for (int replay = 0; replay < 4; ++replay) {
    const uint64_t corr = s.Api("cudaGraphLaunch_v10000", 100.0 * replay, 5);
    s.GraphKernel("fwd", 100.0 * replay + 10, 30, 1, 201, corr);
    s.GraphKernel("bwd", 100.0 * replay + 45, 40, 1, 202, corr);
  }
  s.GraphKernel("lost", 500, 10, 1, 999, 0);  // a node without a creating stack: left out
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 2u) << RenderText(table);
  EXPECT_EQ(table.rows[0][8], "model::backward (trainer)") << RenderText(table);
  EXPECT_EQ(table.rows[0][10], "bwd");
  EXPECT_EQ(table.rows[0][2], "4");
  EXPECT_EQ(table.rows[1][8], "model::forward (trainer)");
  EXPECT_EQ(table.rows[1][10], "fwd");
  // 280 of the 290 us of kernel time are attributed; no NVTX range in this trace.
  EXPECT_NE(table.title.find("96.6% of the GPU kernel time has a launch site, 0.0% also an NVTX range"),
            std::string::npos) << table.title;
}

// The NVTX range of a kernel: for a direct launch the range open around its launch call, for a
// graph's kernel the range open where its node was captured (its replay may run under any range).
TEST(KernelStackSummaryTest, EachKernelCarriesTheNvtxRangeOfItsLaunchOrItsNodesCapture) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> train = {"/opt/app/trainer", "_ZN5model5trainEv"};
  s.NvtxRange("step", 0, 100);  // thread 1
  const uint64_t direct = s.Api("cudaLaunchKernel_v7000", 10, 5);
  s.Kernel("direct_kernel", 20, 10, 7, direct);
  s.LaunchStack(direct, {train});
  s.NvtxRange("capture_forward", 200, 300);
  s.GraphNodeAt(501, {train}, /*created_us=*/250, /*tid=*/1);
  s.GraphNodeClone(601, 501);
  s.NvtxRange("replay", 1000, 2000);
  const uint64_t replay = s.Api("cudaGraphLaunch_v10000", 1000, 5);
  s.GraphKernel("graph_kernel", 1010, 40, 1, 601, replay);
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 2u) << RenderText(table);
  EXPECT_EQ(table.rows[0][10], "graph_kernel");
  EXPECT_EQ(table.rows[0][9], "capture_forward") << "where the node was captured, not where it replayed";
  EXPECT_EQ(table.rows[1][10], "direct_kernel");
  EXPECT_EQ(table.rows[1][9], "step");
  EXPECT_NE(table.title.find("100.0% of the GPU kernel time has a launch site, 100.0% also an NVTX range"),
            std::string::npos) << table.title;
}

// Two call sites in one function (two offsets, one symbol) are one launch site.
TEST(KernelStackSummaryTest, CallSitesInOneFunctionAreOneLaunchSite) {
  SyntheticTrace s;
  for (int i = 0; i < 2; ++i) {
    const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 100.0 * i, 5);
    s.Kernel("gemm", 100.0 * i + 10, 50, 7, corr);
    const uint32_t frame = s.builder().InternFrame("/opt/app/trainer", 0x1000 + 0x40 * i, "_ZN5model5trainEv", 0x10);
    s.builder().AddLaunchStack(corr, s.builder().InternStack({frame}));
  }
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 1u) << RenderText(table);
  EXPECT_EQ(table.rows[0][2], "2");
}

// `kernel<<<...>>>` in a C++ program: below cudaLaunchKernel lie the stub and the host wrapper nvcc
// writes, in the program's own module and named by the kernel's own mangled name. The launch site
// is the function that wrote the launch, not the kernel's wrapper.
TEST(KernelStackSummaryTest, NvccsLaunchCodeIsNotTheLaunchSite) {
  SyntheticTrace s;
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 0, 5);
  s.Kernel("_Z9tiny_stepPjii", 10, 50, 7, corr);
  s.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"},
                       {"/opt/app/server", "_Z30__device_stub__Z9tiny_stepPjiiPjii"},
                       {"/opt/app/server", "_Z9tiny_stepPjii"},
                       {"/opt/app/server", "_ZN6Worker5ServeEv"}});
  // A function that is not a kernel's wrapper stays the site, named like a kernel or not.
  const uint64_t other = s.Api("cudaLaunchKernel_v7000", 100, 5);
  s.Kernel("_Z4gemmPf", 110, 50, 7, other);
  s.LaunchStack(other, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, {"/opt/app/server", "_Z9tiny_stepPji"}});
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 2u) << RenderText(table);
  std::map<std::string, std::string> site_of;  // kernel -> launched from
  for (const auto& row : table.rows) site_of[row[10]] = row[8];
  EXPECT_EQ(site_of["_Z9tiny_stepPjii"], "Worker::Serve (server)") << RenderText(table);
  EXPECT_EQ(site_of["_Z4gemmPf"], "tiny_step (server)") << "another signature: not tiny_step(unsigned*, int, int)'s wrapper";
}

// With the program's line tables read (lib/symbolize), the stub inlined into the wrapper has its
// line in the CUDA Toolkit's crt/device_functions.h: skipped whatever the wrapper is called; the
// same file name outside an include directory is the program's own.
TEST(KernelStackSummaryTest, CodeInTheToolkitsLaunchHeadersIsNotTheLaunchSite) {
  SyntheticTrace s;
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 0, 5);
  s.Kernel("_Z9tiny_stepPjii", 10, 50, 7, corr);
  s.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, {"/opt/app/server", ""}, {"/opt/app/server", ""}});
  const uint64_t own = s.Api("cudaLaunchKernel_v7000", 100, 5);
  s.Kernel("_Z4gemmPf", 110, 50, 7, own);
  s.LaunchStack(own, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, {"/opt/app/server", "_Z3runv"}});
  core::Trace trace = s.Load();
  const v1::CallStack glue_stack = trace.dict.stack(trace.launch_stacks[0].stack);
  ASSERT_EQ(glue_stack.frames_size(), 3);
  trace.dict.SetNativeFrameSource(glue_stack.frames(1),
                                  trace.dict.AddString("/usr/local/cuda-13.0/targets/x86_64-linux/include/crt/device_functions.h"),
                                  2963, trace.dict.AddString("_Z9other_wrapperv"));
  trace.dict.SetNativeFrameSource(glue_stack.frames(2), trace.dict.AddString("/opt/app/src/launch.cu"), 89,
                                  trace.dict.AddString("main"));
  const v1::CallStack own_stack = trace.dict.stack(trace.launch_stacks[1].stack);
  trace.dict.SetNativeFrameSource(own_stack.frames(1), trace.dict.AddString("/opt/app/src/device_functions.h"), 12, 0);
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 2u) << RenderText(table);
  std::map<std::string, std::string> site_of;  // kernel -> launched from
  for (const auto& row : table.rows) site_of[row[10]] = row[8];
  EXPECT_EQ(site_of["_Z9tiny_stepPjii"], "main (launch.cu:89)") << RenderText(table);
  EXPECT_EQ(site_of["_Z4gemmPf"], "run (device_functions.h:12)") << "the program's own header";
}

// A trace's strings may hold tabs: the table keeps its cells where they belong.
TEST(KernelStackSummaryTest, TabsInNamesStayInTheirCells) {
  SyntheticTrace s;
  s.NvtxRange("a\trange", 0, 100);
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 10, 5);
  s.Kernel("kernel\twith tab", 20, 10, 7, corr);
  s.LaunchStack(corr, {{"/opt/app\tdir/trainer", ""}});
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 1u);
  ASSERT_EQ(table.rows[0].size(), table.columns.size());
  EXPECT_EQ(table.rows[0][9], "a range");
  EXPECT_EQ(table.rows[0][10], "kernel\twith tab");
}

// A damaged trace's stack of ten thousand frames makes a tree no deeper than the collector's bound.
TEST(CallPathTreeTest, AnEndlessStackIsCutToTheBound) {
  SyntheticTrace s;
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 0, 5);
  s.Kernel("k", 10, 5, 7, corr);
  std::vector<uint32_t> frames;
  for (int i = 0; i < 10000; ++i) frames.push_back(s.builder().InternFrame("/opt/app/deep", 0x10 * i, "", 0));
  s.builder().AddLaunchStack(corr, s.builder().InternStack(frames));
  const core::Trace trace = s.Load();
  CallPathNode node = BuildCallPathTree(Timeline::Build(trace));
  size_t depth = 0;
  while (!node.children.empty()) {
    CallPathNode next = node.children[0];
    node = std::move(next);
    ++depth;
  }
  EXPECT_EQ(depth, process::kMaxCallStackFrames + process::kMaxPythonFrames + 1) << "the bound's frames and the kernel";
}

// A clone chain that loops (only a damaged trace has one) ends without an answer.
TEST(KernelStackSummaryTest, ACloneLoopEnds) {
  SyntheticTrace s;
  s.GraphNodeClone(1, 2);
  s.GraphNodeClone(2, 1);
  s.GraphKernel("k", 0, 10, 1, 1, 0);
  const core::Trace trace = s.Load();
  EXPECT_EQ(LaunchStackIndex(trace).StackOf(trace.kernels[0]), 0u);
  EXPECT_TRUE(KernelStackSummary(Timeline::Build(trace)).rows.empty());
}

// A stack all inside the CUDA libraries (a launch from a library's own thread) names its innermost
// frame; a frame without a symbol reads as module+offset.
TEST(KernelStackSummaryTest, AStackAllInsideTheLibrariesAndAFrameWithoutASymbol) {
  SyntheticTrace s;
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 0, 5);
  s.Kernel("k", 10, 5, 7, corr);
  s.LaunchStack(corr, {{"/lib/libcublasLt.so.13", ""}, {"/lib/libcudart.so.13", "cudaLaunchKernel"}});
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][8], "libcublasLt.so.13+0x110");
}

// A launch from Python: its stack has the interpreter's C frames, the installed packages' Python
// (torch.nn) and the program's own; the launch site is the program's innermost line, and the flame
// graph's path is the program's Python, without the interpreter's C frames.
TEST(KernelStackSummaryTest, ALaunchFromPythonIsAttributedToTheProgramsOwnLine) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> runtime = {"/usr/local/cuda/lib64/libcudart.so.13", "cudaLaunchKernel"};
  const std::pair<std::string, std::string> aten = {"/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so", ""};
  const std::pair<std::string, std::string> vectorcall = {"/usr/bin/python3.12", "PyObject_Vectorcall"};
  const std::pair<std::string, std::string> linear = {"py:/usr/lib/python3/dist-packages/torch/nn/modules/linear.py:125",
                                                      "Linear.forward"};
  const std::pair<std::string, std::string> forward = {"py:/home/u/train.py:12", "Model.forward"};
  const std::pair<std::string, std::string> loss = {"py:/home/u/train.py:20", "loss_of"};
  const std::pair<std::string, std::string> module = {"py:/home/u/train.py:30", "<module>"};
  const std::pair<std::string, std::string> run_main = {"/usr/bin/python3.12", "Py_RunMain"};
  for (int i = 0; i < 2; ++i) {
    const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 100.0 * i, 5);
    s.Kernel("gemm", 100.0 * i + 10, 50, 7, corr);
    s.LaunchStack(corr, {runtime, aten, vectorcall, linear, vectorcall, forward, module, run_main});
  }
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 300, 5);
  s.Kernel("reduce", 310, 20, 7, corr);
  s.LaunchStack(corr, {runtime, aten, vectorcall, loss, module, run_main});
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  const Table table = KernelStackSummary(t);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][8], "Model.forward (train.py:12)");
  EXPECT_EQ(table.rows[1][8], "loss_of (train.py:20)");
  const CallPathNode root = BuildCallPathTree(t);
  ASSERT_EQ(root.children.size(), 1u);
  const CallPathNode& top = root.children[0];
  EXPECT_EQ(top.name, "<module> (train.py:30)") << "Py_RunMain is the interpreter's, not the program's";
  ASSERT_EQ(top.children.size(), 2u);
  EXPECT_EQ(top.children[0].name, "Model.forward (train.py:12)");
  ASSERT_EQ(top.children[0].children.size(), 1u);
  EXPECT_EQ(top.children[0].children[0].name, "gemm");
  EXPECT_EQ(top.children[1].name, "loss_of (train.py:20)");
}

// A launch whose Python frames are all installed code (a library's own thread, torch's hooks) is
// attributed to the innermost of them; a native program's stack is untouched by the Python rule.
TEST(KernelStackSummaryTest, ALaunchFromInstalledPythonOnlyNamesItsInnermostPythonFrame) {
  SyntheticTrace s;
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 0, 5);
  s.Kernel("k", 10, 5, 7, corr);
  s.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"},
                       {"py:/usr/lib/python3.12/threading.py:1010", "Thread.run"},
                       {"py:/opt/venv/lib/python3.12/site-packages/torch/utils/data/loader.py:50", "pin"}});
  const core::Trace trace = s.Load();
  const Table table = KernelStackSummary(Timeline::Build(trace));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][8], "Thread.run (threading.py:1010)");
  EXPECT_TRUE(IsPythonLibraryFile("/usr/lib/python3.12/threading.py"));
  EXPECT_TRUE(IsPythonLibraryFile("/usr/lib64/python3.12/threading.py")) << "Fedora's standard library";
  EXPECT_TRUE(IsPythonLibraryFile("<frozen importlib._bootstrap>"));
  EXPECT_TRUE(IsPythonLibraryFile("/tmp/torchinductor_u/ab/cabxyz.py")) << "torch.compile's generated code";
  EXPECT_TRUE(IsPythonLibraryFile("<eval_with_key>.3")) << "FX's generated code";
  EXPECT_FALSE(IsPythonLibraryFile("<stdin>"));
  EXPECT_FALSE(IsPythonLibraryFile("<string>")) << "python -c";
  EXPECT_FALSE(IsPythonLibraryFile("<ipython-input-3-1f2e>"));
  EXPECT_FALSE(IsPythonLibraryFile("/home/u/python3_tools/train.py"));
}

// The flame graph's tree: outermost frame first, down to the launch site, then the kernel; times
// add up at every level; children most time first.
TEST(CallPathTreeTest, OutermostFrameFirstDownToTheKernel) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> runtime = {"/lib/libcudart.so.13", "cudaLaunchKernel"};
  const std::pair<std::string, std::string> main_frame = {"/opt/app/trainer", "main"};
  const std::pair<std::string, std::string> train = {"/opt/app/trainer", "_ZN5model5trainEv"};
  const std::pair<std::string, std::string> eval = {"/opt/app/trainer", "_ZN5model8evaluateEv"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 100.0 * i, 5);
    s.Kernel("gemm", 100.0 * i + 10, 50, 7, corr);
    s.LaunchStack(corr, {runtime, train, main_frame});
  }
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 400, 5);
  s.Kernel("relu", 410, 20, 7, corr);
  s.LaunchStack(corr, {runtime, eval, main_frame});
  s.Launch("untracked", 500, 5, 510, 10);
  const core::Trace trace = s.Load();
  const CallPathNode root = BuildCallPathTree(Timeline::Build(trace));
  EXPECT_EQ(root.time_ns, 170'000u);
  EXPECT_EQ(root.launches, 4u);
  ASSERT_EQ(root.children.size(), 1u);
  const CallPathNode& m = root.children[0];
  EXPECT_EQ(m.name, "main (trainer)");
  ASSERT_EQ(m.children.size(), 2u);
  EXPECT_EQ(m.children[0].name, "model::train (trainer)");
  EXPECT_EQ(m.children[0].time_ns, 150'000u);
  ASSERT_EQ(m.children[0].children.size(), 1u);
  EXPECT_EQ(m.children[0].children[0].name, "gemm");
  EXPECT_TRUE(m.children[0].children[0].children.empty()) << "the runtime's frame is not on the path";
  EXPECT_EQ(m.children[1].name, "model::evaluate (trainer)");
  // A node budget: paths fold into the deepest node there is.
  const CallPathNode small = BuildCallPathTree(Timeline::Build(trace), 3);
  EXPECT_EQ(small.time_ns, 170'000u);
  ASSERT_EQ(small.children.size(), 1u);
  ASSERT_EQ(small.children[0].children.size(), 1u);
  EXPECT_TRUE(small.children[0].children[0].children.empty());
}

}  // namespace
}  // namespace cuscope::analysis
