// What reading the launching thread's Python frames costs (--stacks in a Python program), on an
// embedded CPython: a Python function `depth` calls deep, in files with paths as long as a
// site-packages one, calls a C function that reads the frames as a launch callback would.
#include <Python.h>
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "lib/process/python_stack.h"

namespace {

benchmark::State* g_state = nullptr;
const cuscope::process::PythonStackReader* g_reader = nullptr;
size_t g_frames = 0;

// probe.measure(): the benchmark's loop, run from inside Python at the depth asked for.
PyObject* Measure(PyObject*, PyObject*) {
  std::vector<cuscope::process::PythonFrame> frames;
  for (auto _ : *g_state) {
    frames.clear();
    g_reader->Capture(frames);
    benchmark::DoNotOptimize(frames.data());
  }
  g_frames = frames.size();
  Py_RETURN_NONE;
}

PyMethodDef kProbeMethods[] = {{"measure", Measure, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
PyModuleDef kProbeModule = {PyModuleDef_HEAD_INIT, "probe", nullptr, -1, kProbeMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* InitProbe() { return PyModule_Create(&kProbeModule); }

// A module whose functions call each other `depth` deep, then probe.measure().
constexpr const char* kProgram =
    "import probe\n"
    "class TransformerBlock:\n"
    "    def forward(self, depth):\n"
    "        if depth == 0:\n"
    "            probe.measure()\n"
    "        else:\n"
    "            self.forward(depth - 1)\n"
    "TransformerBlock().forward(DEPTH)\n";

void BM_PythonCapture(benchmark::State& state) {
  auto reader = cuscope::process::PythonStackReader::ForThisProcess();
  if (!reader.ok()) {
    state.SkipWithError(std::string(reader.status().message()).c_str());
    return;
  }
  g_reader = &*reader;
  g_state = &state;
  std::string source = kProgram;
  source.replace(source.find("DEPTH"), 5, std::to_string(state.range(0)));
  PyObject* code = Py_CompileString(source.c_str(), "/opt/venv/lib/python3/site-packages/model/blocks/transformer.py",
                                    Py_file_input);
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* result = code != nullptr ? PyEval_EvalCode(code, globals, globals) : nullptr;
  if (result == nullptr) {
    PyErr_Print();
    state.SkipWithError("the Python program failed");
  }
  Py_XDECREF(result);
  Py_DECREF(globals);
  Py_XDECREF(code);
  state.counters["frames"] = static_cast<double>(g_frames);
}
BENCHMARK(BM_PythonCapture)->Arg(5)->Arg(20)->Arg(60);

}  // namespace

int main(int argc, char** argv) {
  PyImport_AppendInittab("probe", InitProbe);
  Py_InitializeEx(0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Py_FinalizeEx();
  return 0;
}
