// Launch stacks in a Python program, CUPTI faked: an embedded CPython calls into C code that
// "launches" (the fake's launch callback), and the trace's stacks carry the Python functions and
// lines in place of the interpreter's eval-loop frames, each launch attributed to its function.
#include <Python.h>
#include <stdlib.h>

#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/analysis/launch_sites.h"
#include "lib/settings/config.h"
#include "lib/process/python_stack.h"
#include "lib/settings/stack_sampling.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "tests/cupti/collector_test_support.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

testing::FakeCupti* g_cupti = nullptr;

// probe.launch(correlation): a kernel launch made from C code Python called, like torch's ops.
PyObject* Launch(PyObject*, PyObject* arg) {
  g_cupti->CallLaunch(static_cast<uint32_t>(PyLong_AsLong(arg)), "fakeKernel");
  Py_RETURN_NONE;
}

// probe.launch_released(correlation): the same with the GIL released around the launch, so that
// launching threads take their stacks at the same time.
PyObject* LaunchReleased(PyObject*, PyObject* arg) {
  const auto correlation = static_cast<uint32_t>(PyLong_AsLong(arg));
  Py_BEGIN_ALLOW_THREADS
  g_cupti->CallLaunch(correlation, "fakeKernel");
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyMethodDef kProbeMethods[] = {{"launch", Launch, METH_O, nullptr},
                               {"launch_released", LaunchReleased, METH_O, nullptr},
                               {nullptr, nullptr, 0, nullptr}};
PyModuleDef kProbeModule = {PyModuleDef_HEAD_INIT, "probe", nullptr, -1, kProbeMethods, nullptr, nullptr, nullptr,
                            nullptr};
PyObject* InitProbe() { return PyModule_Create(&kProbeModule); }

constexpr const char* kProgram =
    "import probe\n"
    "def scale():\n"
    "    probe.launch(1)\n"        // 3
    "def shift():\n"
    "    probe.launch(2)\n"        // 5
    "def step():\n"
    "    scale()\n"                // 7
    "    shift()\n"                // 8
    "step()\n";                    // 9

class CollectorPythonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifdef CUSCOPE_PYTHON_HOME
    ::setenv("PYTHONHOME", CUSCOPE_PYTHON_HOME, 1);  // a CPython built elsewhere (pyenv's) finds its library
#endif
    PyImport_AppendInittab("probe", InitProbe);
    Py_InitializeEx(0);
  }
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    dir_ = scratch_.path();
    config_.output = dir_ + "/run.cuscope";
    config_.quiet = false;
    config_.flush_period_ms = 60'000;
    config_.buffer_bytes = 64 * testing::FakeCupti::kRecordSlot;
    config_.stacks = *settings::ParseStackSampling("all");
    g_cupti = &cupti_;
  }
  // Runs `program` as the file /srv/app/train.py under a collector, then loads its trace.
  core::Trace ProfilePython(const char* program) {
    EXPECT_TRUE(StartCollector(config_, "session", cupti_).ok());
    PyObject* code = Py_CompileString(program, "/srv/app/train.py", Py_file_input);
    EXPECT_NE(code, nullptr);
    PyObject* globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject* result = code == nullptr ? nullptr : PyEval_EvalCode(code, globals, globals);
    if (result == nullptr) PyErr_Print();
    EXPECT_NE(result, nullptr);
    Py_XDECREF(result);
    Py_DECREF(globals);
    Py_XDECREF(code);
    EXPECT_TRUE(cupti_.DeliverKernels(2, 2'000'000'000));
    EXPECT_TRUE(StopCollector(nullptr).ok());
    auto trace = core::LoadTrace(config_.output);
    EXPECT_TRUE(trace.ok()) << trace.status();
    return trace.ok() ? *std::move(trace) : core::Trace{};
  }

  testing::ScratchDir scratch_{"cuscope_python"};
  std::string dir_;
  settings::Config config_;
  testing::FakeCupti cupti_;
};

TEST_F(CollectorPythonTest, LaunchesFromPythonCarryTheirFunctionsAndLines) {
  const std::optional<core::Trace> trace = ProfilePython(kProgram);
  ASSERT_FALSE(trace->corruption.has_value()) << trace->corruption->message();
  ASSERT_EQ(trace->launch_stacks.size(), 2u);
  for (const core::LaunchStackRow& l : trace->launch_stacks) {
    const core::Dictionary& dict = trace->dict;
    std::vector<std::string> texts;
    int python_frames = 0, first_python = -1, last_python = -1, eval_loops = 0;
    const v1::CallStack& stack = dict.stack(l.stack);
    for (int i = 0; i < stack.frames_size(); ++i) {
      texts.push_back(analysis::FrameText(dict, stack.frames(i)));
      if (analysis::IsPythonFrame(dict, stack.frames(i))) {
        ++python_frames;
        if (first_python < 0) first_python = i;
        last_python = i;
      } else if (dict.str(dict.frame(stack.frames(i)).function()) == process::kEvalLoopSymbol) {
        ++eval_loops;
      }
    }
    const std::string all = absl::StrJoin(texts, " <- ");
    EXPECT_EQ(python_frames, 3) << all;
    EXPECT_EQ(eval_loops, 0) << "each eval loop frame stands for its Python frames: " << all;
    EXPECT_GT(first_python, 0) << "native frames (the probe's C code) inside the Python ones: " << all;
    EXPECT_LT(last_python, stack.frames_size() - 1) << "native frames (this test) outside them: " << all;
    const std::string site = analysis::FrameText(dict, analysis::LaunchSiteFrame(dict, l.stack, analysis::KernelNames(dict)));
    EXPECT_EQ(site, l.correlation_id == 1 ? "scale (train.py:3)" : "shift (train.py:5)") << all;
    EXPECT_EQ(texts[first_python + 1], l.correlation_id == 1 ? "step (train.py:7)" : "step (train.py:8)") << all;
    EXPECT_EQ(texts[first_python + 2], "<module> (train.py:9)") << all;
  }
}

// A launch from a __del__ that runs while another frame returns (map() calling back into Python
// from C): every eval-loop frame of the native stack is accounted for, the Python frames keep their
// order, and the finalizer is the launch site.
TEST_F(CollectorPythonTest, ALaunchFromAFinalizerKeepsEveryFrameInPlace) {
  const core::Trace trace = ProfilePython(
      "import probe\n"
      "class D:\n"
      "    def __del__(self):\n"
      "        probe.launch(7)\n"  // 4
      "def entry(v):\n"
      "    d = D()\n"
      "    return v\n"
      "def outer():\n"
      "    return list(map(entry, [1]))\n"  // 9
      "outer()\n");                        // 10
  ASSERT_FALSE(trace.corruption.has_value()) << trace.corruption->message();
  ASSERT_EQ(trace.launch_stacks.size(), 1u);
  const core::Dictionary& dict = trace.dict;
  const v1::CallStack& stack = dict.stack(trace.launch_stacks[0].stack);
  std::vector<std::string> python;
  std::string all;
  for (uint32_t f : stack.frames()) {
    absl::StrAppend(&all, all.empty() ? "" : " <- ", analysis::FrameText(dict, f));
    if (analysis::IsPythonFrame(dict, f)) python.push_back(analysis::FrameText(dict, f));
    EXPECT_NE(dict.str(dict.frame(f).function()), process::kEvalLoopSymbol) << all;
  }
  EXPECT_EQ(python, (std::vector<std::string>{"D.__del__ (train.py:4)", "outer (train.py:9)", "<module> (train.py:10)"}))
      << all;
}

// Sixteen Python threads launching at once (the GIL released around each launch, as a C extension
// may): no hang, every launch's stack taken, each attributed to the thread function's line.
TEST_F(CollectorPythonTest, SixteenLaunchingThreads) {
  const core::Trace trace = ProfilePython(
      "import probe, threading\n"
      "def worker(base):\n"
      "    for i in range(50):\n"
      "        probe.launch_released(base + i)\n"  // 4
      "threads = [threading.Thread(target=worker, args=(1000 * (t + 1),)) for t in range(16)]\n"
      "for t in threads: t.start()\n"
      "for t in threads: t.join()\n");
  ASSERT_FALSE(trace.corruption.has_value()) << trace.corruption->message();
  EXPECT_EQ(trace.launch_stacks.size(), 16u * 50u);
  std::set<std::string> sites;
  for (const core::LaunchStackRow& l : trace.launch_stacks) {
    sites.insert(analysis::FrameText(trace.dict, analysis::LaunchSiteFrame(trace.dict, l.stack, analysis::KernelNames(trace.dict))));
  }
  EXPECT_EQ(sites, (std::set<std::string>{"worker (train.py:4)"}));
}

}  // namespace
}  // namespace cuscope::cupti
