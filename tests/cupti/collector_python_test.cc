// Launch stacks in a Python program, CUPTI faked: an embedded CPython calls into C code that
// "launches" (the fake's launch callback), and the trace's stacks carry the Python functions and
// lines in place of the interpreter's eval-loop frames, each launch attributed to its function.
#include <Python.h>
#include <stdlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/analysis/launch_sites.h"
#include "lib/core/config.h"
#include "lib/core/python_stack.h"
#include "lib/core/stack_sampling.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

testing::FakeCupti* g_cupti = nullptr;

// probe.launch(correlation): a kernel launch made from C code Python called, like torch's ops.
PyObject* Launch(PyObject*, PyObject* arg) {
  g_cupti->CallLaunch(static_cast<uint32_t>(PyLong_AsLong(arg)), "fakeKernel");
  Py_RETURN_NONE;
}

PyMethodDef kProbeMethods[] = {{"launch", Launch, METH_O, nullptr}, {nullptr, nullptr, 0, nullptr}};
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

TEST(CollectorPythonTest, LaunchesFromPythonCarryTheirFunctionsAndLines) {
  PyImport_AppendInittab("probe", InitProbe);
  Py_InitializeEx(0);
  char pattern[] = "/tmp/cuscope_python_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/run.cuscope";
  core::Config config;
  config.output = path;
  config.quiet = false;
  config.flush_period_ms = 60'000;
  config.buffer_bytes = 64 * testing::FakeCupti::kRecordSlot;
  config.stacks = *core::ParseStackSampling("all");
  testing::FakeCupti cupti;
  g_cupti = &cupti;
  ASSERT_TRUE(StartCollector(config, "session", cupti).ok());
  PyObject* code = Py_CompileString(kProgram, "/srv/app/train.py", Py_file_input);
  ASSERT_NE(code, nullptr);
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* result = PyEval_EvalCode(code, globals, globals);
  if (result == nullptr) PyErr_Print();
  ASSERT_NE(result, nullptr);
  ASSERT_TRUE(cupti.DeliverKernels(2, 2'000'000'000));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  auto trace = core::LoadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
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
      } else if (dict.str(dict.frame(stack.frames(i)).function()) == core::kEvalLoopSymbol) {
        ++eval_loops;
      }
    }
    const std::string all = absl::StrJoin(texts, " <- ");
    EXPECT_EQ(python_frames, 3) << all;
    EXPECT_EQ(eval_loops, 0) << "each eval loop frame stands for its Python frames: " << all;
    EXPECT_GT(first_python, 0) << "native frames (the probe's C code) inside the Python ones: " << all;
    EXPECT_LT(last_python, stack.frames_size() - 1) << "native frames (this test) outside them: " << all;
    const std::string site = analysis::FrameText(dict, analysis::LaunchSiteFrame(dict, l.stack));
    EXPECT_EQ(site, l.correlation_id == 1 ? "scale (train.py:3)" : "shift (train.py:5)") << all;
    EXPECT_EQ(texts[first_python + 1], l.correlation_id == 1 ? "step (train.py:7)" : "step (train.py:8)") << all;
    EXPECT_EQ(texts[first_python + 2], "<module> (train.py:9)") << all;
  }
  Py_DECREF(result);
  Py_DECREF(globals);
  Py_DECREF(code);
  std::system(absl::StrCat("rm -rf '", pattern, "'").c_str());
}

}  // namespace
}  // namespace cuscope::cupti
