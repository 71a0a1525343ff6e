// The Python frame reader on a running CPython (embedded here, Debian's libpython): frames,
// qualified names, lines and eval-loop boundaries as the interpreter itself reports them, read
// with the GIL released, from a thread without Python, and every line of real code objects
// compared with CPython's own line lookup.
#include <Python.h>
#include <stdlib.h>

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/process/python_stack.h"

namespace cuscope::process {
namespace {

std::vector<PythonFrame> g_frames;
bool g_release_gil = false;

// probe.capture(): what a launch callback does, from inside a C function Python called.
PyObject* Capture(PyObject*, PyObject*) {
  g_frames.clear();
  auto reader = PythonStackReader::ForThisProcess();
  if (!reader.ok()) {
    PyErr_SetString(PyExc_RuntimeError, std::string(reader.status().message()).c_str());
    return nullptr;
  }
  if (g_release_gil) {
    Py_BEGIN_ALLOW_THREADS
    reader->Capture(g_frames);
    Py_END_ALLOW_THREADS
  } else {
    reader->Capture(g_frames);
  }
  Py_RETURN_NONE;
}

PyMethodDef kProbeMethods[] = {{"capture", Capture, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
PyModuleDef kProbeModule = {PyModuleDef_HEAD_INIT, "probe", nullptr, -1, kProbeMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* InitProbe() { return PyModule_Create(&kProbeModule); }

class PythonFramesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized()) {
#ifdef CUSCOPE_PYTHON_HOME
      ::setenv("PYTHONHOME", CUSCOPE_PYTHON_HOME, 1);  // a CPython built elsewhere (pyenv's) finds its library
#endif
      PyImport_AppendInittab("probe", InitProbe);
      Py_InitializeEx(0);
    }
  }
  // Runs `source` as a module named by `file`; fails the test on a Python error.
  static void Run(const char* source, const char* file) {
    PyObject* code = Py_CompileString(source, file, Py_file_input);
    ASSERT_NE(code, nullptr);
    PyObject* globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject* result = PyEval_EvalCode(code, globals, globals);
    if (result == nullptr) PyErr_Print();
    ASSERT_NE(result, nullptr);
    Py_DECREF(result);
    Py_DECREF(globals);
    Py_DECREF(code);
  }
};

constexpr const char* kNested =
    "import probe\n"
    "def inner():\n"
    "    x = 1\n"
    "    probe.capture()\n"          // 4
    "def middle():\n"
    "    inner()\n"                  // 6
    "class Model:\n"
    "    def forward(self):\n"
    "        middle()\n"             // 9
    "        return 2\n"
    "Model().forward()\n";           // 11

TEST_F(PythonFramesTest, FramesNamesAndLinesInnermostFirst) {
  g_release_gil = false;
  Run(kNested, "/srv/app/model.py");
  ASSERT_EQ(g_frames.size(), 4u);
  EXPECT_EQ(g_frames[0].function, "inner");
  EXPECT_EQ(g_frames[0].line, 4u);
  EXPECT_EQ(g_frames[1].function, "middle");
  EXPECT_EQ(g_frames[1].line, 6u);
  EXPECT_EQ(g_frames[2].function, "Model.forward");
  EXPECT_EQ(g_frames[2].line, 9u);
  EXPECT_EQ(g_frames[3].function, "<module>");
  EXPECT_EQ(g_frames[3].line, 11u);
  for (const PythonFrame& f : g_frames) EXPECT_EQ(f.file, "/srv/app/model.py");
  // Python-to-Python calls run in one call of the eval loop: only the module's frame began one.
  EXPECT_FALSE(g_frames[0].eval_entry);
  EXPECT_FALSE(g_frames[2].eval_entry);
  EXPECT_TRUE(g_frames[3].eval_entry);
}

TEST_F(PythonFramesTest, ReadWithTheGilReleased) {
  g_release_gil = true;
  Run(kNested, "model.py");
  g_release_gil = false;
  ASSERT_EQ(g_frames.size(), 4u);
  EXPECT_EQ(g_frames[0].function, "inner");
  EXPECT_EQ(g_frames[0].line, 4u);
}

TEST_F(PythonFramesTest, ACallThroughCodeInCBeginsAnotherEvalLoop) {
  Run("import probe\n"
      "def leaf(v):\n"
      "    probe.capture()\n"        // 3
      "    return v\n"
      "def run():\n"
      "    return list(map(leaf, [1]))\n"  // 6: map calls leaf from C
      "run()\n",
      "mapped.py");
  ASSERT_EQ(g_frames.size(), 3u);
  EXPECT_EQ(g_frames[0].function, "leaf");
  EXPECT_EQ(g_frames[0].line, 3u);
  EXPECT_TRUE(g_frames[0].eval_entry) << "leaf runs in the eval loop map's C code called";
  EXPECT_EQ(g_frames[1].function, "run");
  EXPECT_EQ(g_frames[1].line, 6u);
  EXPECT_FALSE(g_frames[1].eval_entry);
  EXPECT_TRUE(g_frames[2].eval_entry);
}

// A __del__ that runs while its frame returns. In 3.12 the returning frame has left the chain while
// its eval-loop call is still on the native stack (an eval-loop call with no Python frame): three
// calls are counted, the finalizer's, the one map() made and the module's. In 3.11 the frame is
// cleared after its eval-loop call returned: two.
TEST_F(PythonFramesTest, AnEvalLoopCallWithNoFrameLeftIsCounted) {
  Run("import probe\n"
      "class D:\n"
      "    def __del__(self):\n"
      "        probe.capture()\n"
      "def entry(v):\n"
      "    d = D()\n"
      "    return v\n"
      "def outer():\n"
      "    return list(map(entry, [1]))\n"
      "outer()\n",
      "dying.py");
  ASSERT_GE(g_frames.size(), 3u);
  EXPECT_EQ(g_frames[0].function, "D.__del__");
  EXPECT_TRUE(g_frames[0].eval_entry);
  EXPECT_EQ(g_frames.back().function, "<module>");
  int eval_calls = 0;
  for (const PythonFrame& f : g_frames) eval_calls += f.eval_entry + f.empty_evals_before;
  EXPECT_EQ(eval_calls, PY_VERSION_HEX >= 0x030C0000 ? 3 : 2);
}

TEST_F(PythonFramesTest, NamesAndPathsBeyondAscii) {
  Run("import probe\n"
      "def größe():\n"             // one byte a character, not ASCII
      "    probe.capture()\n"
      "def 関数():\n"               // two bytes a character
      "    größe()\n"
      "関数()\n",
      "/tmp/模型/😀.py");             // four bytes a character
  ASSERT_EQ(g_frames.size(), 3u);
  EXPECT_EQ(g_frames[0].function, "größe");
  EXPECT_EQ(g_frames[1].function, "関数");
  EXPECT_EQ(g_frames[0].file, "/tmp/模型/😀.py");
}

// Names are read once per thread and object, then kept: a frame taken earlier still reads its
// names after its code objects are gone, and code made and freed over and over (its name objects
// landing where freed ones were) is named by its own names each time.
TEST_F(PythonFramesTest, NamesOutliveTheirCodeAndFreedObjectsAreNotMistaken) {
  Run("import probe\n"
      "def first():\n"
      "    probe.capture()\n"
      "first()\n",
      "/srv/app/first_file_of_this_test.py");
  ASSERT_EQ(g_frames.size(), 2u);
  const std::vector<PythonFrame> kept = g_frames;
  for (int i = 0; i < 200; ++i) {
    const std::string function = "made_" + std::to_string(i) + "_and_freed";
    const std::string file = "/srv/app/generated/module_" + std::to_string(i) + ".py";
    const std::string source = "import probe\ndef " + function + "():\n    probe.capture()\n" + function + "()\n";
    Run(source.c_str(), file.c_str());
    ASSERT_EQ(g_frames.size(), 2u) << i;
    ASSERT_EQ(g_frames[0].function, function) << i;
    ASSERT_EQ(g_frames[0].file, file) << i;
    ASSERT_EQ(g_frames[1].function, "<module>") << i;
  }
  PyGC_Collect();
  EXPECT_EQ(kept[0].function, "first");
  EXPECT_EQ(kept[0].file, "/srv/app/first_file_of_this_test.py");
  EXPECT_EQ(kept[1].function, "<module>");
}

TEST_F(PythonFramesTest, AThreadThatRunsNoPythonHasNoFrames) {
  auto reader = PythonStackReader::ForThisProcess();
  ASSERT_TRUE(reader.ok()) << reader.status();
  size_t n = 99;
  std::thread([&] {
    std::vector<PythonFrame> frames;
    n = reader->Capture(frames);
  }).join();
  EXPECT_EQ(n, 0u);
}

TEST_F(PythonFramesTest, TheBoundHolds) {
  Run("import probe\n"
      "def down(n):\n"
      "    if n == 0:\n"
      "        probe.capture()\n"
      "    else:\n"
      "        down(n - 1)\n"
      "down(300)\n",
      "deep.py");
  EXPECT_EQ(g_frames.size(), kMaxPythonFrames);
  EXPECT_EQ(g_frames[0].line, 4u);
  EXPECT_EQ(g_frames[1].line, 6u);
}

// Every code unit of real code objects (loops, jumps back, multi-line expressions, comprehensions,
// exception handlers): our line against the interpreter's own lookup.
TEST_F(PythonFramesTest, EveryLineAgreesWithTheInterpretersOwn) {
  const char* source =
      "import json\n"
      "def f(a, b=2):\n"
      "    total = 0\n"
      "    for i in range(a):\n"
      "        if i % 3 == 0:\n"
      "            total += (i *\n"
      "                      b)\n"
      "        elif i > 100:\n"
      "            break\n"
      "    try:\n"
      "        json.loads('x')\n"
      "    except ValueError as e:\n"
      "        total -= 1\n"
      "    finally:\n"
      "        total += 2\n"
      "    values = [v * v for v in range(3)\n"
      "              if v]\n"
      "    return (total,\n"
      "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
      "            values)\n"
      "class C:\n"
      "    def g(self):\n"
      "        return lambda: [x for x in\n"
      "                        range(2)]\n";
  PyObject* module_code = Py_CompileString(source, "lines.py", Py_file_input);
  ASSERT_NE(module_code, nullptr);
  // Every code object in the module, nested ones included.
  std::vector<PyObject*> codes = {module_code};
  size_t checked_units = 0, with_line = 0;
  for (size_t c = 0; c < codes.size(); ++c) {
    PyObject* code = codes[c];
    PyObject* consts = PyObject_GetAttrString(code, "co_consts");
    for (Py_ssize_t i = 0; i < PyTuple_Size(consts); ++i) {
      PyObject* item = PyTuple_GetItem(consts, i);
      if (PyCode_Check(item)) codes.push_back(item);
    }
    Py_DECREF(consts);
    PyObject* table = PyObject_GetAttrString(code, "co_linetable");
    PyObject* bytecode = PyObject_GetAttrString(code, "co_code");
    const auto* data = reinterpret_cast<const uint8_t*>(PyBytes_AsString(table));
    const int first = reinterpret_cast<PyCodeObject*>(code)->co_firstlineno;
    for (Py_ssize_t unit = 0; unit < PyBytes_Size(bytecode) / 2; ++unit) {
      const int theirs = PyCode_Addr2Line(reinterpret_cast<PyCodeObject*>(code), static_cast<int>(unit * 2));
      const std::optional<uint32_t> ours = LineOfCodeUnit(data, PyBytes_Size(table), first, unit);
      if (theirs <= 0) {  // no location; a module's first instruction is on line 0
        EXPECT_EQ(ours, std::nullopt) << "unit " << unit;
      } else {
        EXPECT_EQ(ours, static_cast<uint32_t>(theirs)) << "unit " << unit;
        ++with_line;
      }
      ++checked_units;
    }
    Py_DECREF(bytecode);
    Py_DECREF(table);
  }
  // The module, f, C, g, the lambda, and before 3.12 (which inlines them) the comprehensions.
  EXPECT_GE(codes.size(), 5u);
  EXPECT_GT(checked_units, 100u);
  EXPECT_GT(with_line, 80u);
  Py_DECREF(module_code);
}

}  // namespace
}  // namespace cuscope::process
