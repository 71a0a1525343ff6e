// Python frames of the calling thread, read from CPython's own frame chain.
//
// A kernel launched from Python has a native stack that says "torch's dispatcher, called by the
// interpreter's eval loop": the line of Python that asked for it is in the interpreter's frames.
// This reader walks them the way sampling profilers do, without the GIL and without calling into the
// interpreter: it follows the thread state's current frame through each frame's code object (file,
// qualified name, line table) with the struct layouts of the CPython versions it knows (3.11, 3.12
// and 3.13; 3.13's are confirmed at start against the offsets the interpreter publishes for
// debuggers, _PyRuntime.debug_offsets), and checks every object's type before it reads the object. It reads only the calling
// thread's own frames, which cannot change while that thread is in a launch call, so no other
// thread's frame or code object is read while it may be freed.
#ifndef CUSCOPE_LIB_PROCESS_PYTHON_STACK_H_
#define CUSCOPE_LIB_PROCESS_PYTHON_STACK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::process {

// The deepest Python stack read.
inline constexpr size_t kMaxPythonFrames = 128;

// `file` and `function` view text interned for the process's life (process::TextPool): a frame is
// copied and kept without copying them, and they stay valid after the interpreter freed its code.
struct PythonFrame {
  std::string_view file;      // co_filename
  std::string_view function;  // co_qualname ("Model.forward", "<module>")
  uint32_t line = 0;     // of the instruction running (the call, in every frame but the innermost); 0: none
  // The outermost frame one call of the interpreter's eval loop (_PyEval_EvalFrameDefault) runs: a
  // native stack's eval frames each stand for the frames up to the next one of these.
  bool eval_entry = false;
  // Calls of the eval loop between this frame and the one before it (inner) that run no Python frame
  // of their own (a __del__ run while a frame returns leaves one): their native eval frames stand
  // for nothing.
  uint16_t empty_evals_before = 0;
};

// Where the fields a frame walk reads lie in one CPython version's structs (x86-64, release build).
struct CPythonLayout {
  std::optional<size_t> thread_cframe;  // PyThreadState.cframe (3.11, 3.12; 3.13 has none)
  size_t current_frame = 0;             // _PyCFrame.current_frame, or 3.13's PyThreadState.current_frame
  size_t frame_code = 0;                // _PyInterpreterFrame.f_code (3.13: f_executable)
  size_t frame_previous = 0;            // .previous
  size_t frame_prev_instr = 0;          // .prev_instr (3.13: instr_ptr, the same code unit)
  size_t frame_owner = 0;               // .owner (a char)
  std::optional<size_t> frame_is_entry; // 3.11: .is_entry (a bool)
  std::optional<int> owner_c_stack;     // 3.12+: the entry shim frames' owner, FRAME_OWNED_BY_CSTACK
  int owner_generator = 1;              // FRAME_OWNED_BY_GENERATOR
  size_t code_first_line = 0;           // PyCodeObject.co_firstlineno (an int)
  size_t code_filename = 0;             // .co_filename
  size_t code_qualname = 0;             // .co_qualname
  size_t code_linetable = 0;            // .co_linetable (bytes)
  size_t code_first_traceable = 0;      // ._co_firsttraceable (an int)
  size_t code_bytecode = 0;             // .co_code_adaptive: the first code unit
  size_t ascii_header = 0;              // sizeof(PyASCIIObject): a compact ASCII string's text
  size_t compact_header = 0;            // sizeof(PyCompactUnicodeObject): other compact text
};

// The layout of a CPython version (PY_VERSION_HEX; the micro version and release level do not
// matter), or nothing for a version this reader does not know.
std::optional<CPythonLayout> CPythonLayoutFor(uint32_t version_hex);

// Whether a CPython 3.13 runtime's debugger offsets (the _Py_DebugOffsets at the start of
// _PyRuntime) describe `layout`: the "xdebugpy" cookie, the same minor version, not a
// free-threaded build (whose objects have another header), and every offset the walk reads equal.
// The message says what differs.
absl::Status CheckDebugOffsets313(const void* debug_offsets, uint32_t version_hex, const CPythonLayout& layout);

// The line of the code unit at `index` in a code object's location table (co_linetable, the format
// of CPython 3.11 and later), counting from `first_line`; nothing for an instruction with no line,
// an index past the table, or a damaged table.
std::optional<uint32_t> LineOfCodeUnit(const uint8_t* table, size_t size, int first_line, int64_t index);

// The native symbol of CPython's eval loop: each of its frames in a native stack runs Python frames.
inline constexpr std::string_view kEvalLoopSymbol = "_PyEval_EvalFrameDefault";

// A frame of a stack being merged: its interned id, and for a native frame whether it is the eval
// loop, for a Python frame whether it is its eval loop call's outermost (PythonFrame::eval_entry)
// and the empty eval-loop calls before it (PythonFrame::empty_evals_before).
struct MergedFrame {
  uint32_t id = 0;
  bool eval = false;
  uint16_t empty_evals_before = 0;
};

// One stack, innermost first, from a launch's native and Python frames: each native eval-loop frame
// stands for the Python frames that call of the loop ran (up to and including the next
// eval-entry frame; nothing for an empty call), so the Python lines sit between the C code that
// called into Python and the C code Python called. Python frames left over when the native stack
// ends (it is bounded) follow it; eval-loop frames left over when the Python frames end stay.
std::vector<uint32_t> MergeStacks(const std::vector<MergedFrame>& native, const std::vector<MergedFrame>& python);

// Reads the calling thread's Python frames in a process that runs CPython.
class PythonStackReader {
 public:
  // The reader for the CPython this process runs. NotFound: no CPython in the process (say
  // nothing); Unimplemented: a CPython this reader has no layout for (the message says which), or
  // a 3.13 whose published offsets differ from the layout (a free-threaded build).
  static absl::StatusOr<PythonStackReader> ForThisProcess();

  // Appends the calling thread's Python frames to `out`, innermost first, at most `max`; returns
  // how many. None for a thread that runs no Python, or while the interpreter is not running.
  // A frame whose objects fail their type checks ends the walk, as does a name that no longer fits
  // the process's text pool (64 MiB of distinct file and function names).
  size_t Capture(std::vector<PythonFrame>& out, size_t max = kMaxPythonFrames) const;

 private:
  struct Symbols {
    void* (*this_thread_state)() = nullptr;  // PyGILState_GetThisThreadState: a thread-local read
    int (*is_initialized)() = nullptr;
    int (*is_finalizing)() = nullptr;
    const void* code_type = nullptr;  // &PyCode_Type
    const void* str_type = nullptr;   // &PyUnicode_Type
    const void* bytes_type = nullptr; // &PyBytes_Type
  };
  PythonStackReader(const CPythonLayout& layout, const Symbols& symbols) : layout_(layout), symbols_(symbols) {}
  // A str object's text: a view of its characters when they are ASCII, else converted to UTF-8 in
  // `converted` and a view of that.
  bool ReadText(const void* object, std::string& converted, std::string_view& out) const;
  // A str object's text, interned: each thread keeps the view it got for each object and checks it
  // against the object's characters before using it again (an object freed and another made at its
  // address gets its own text).
  bool PooledText(const void* object, std::string_view& out) const;
  // The line of `unit` in `code`: a location table is decoded once per thread and code object
  // (the launches of one function, torch.compile's generated `call` among them, reuse it).
  uint32_t LineOf(const void* code, int64_t unit) const;

  CPythonLayout layout_;
  Symbols symbols_;
};

}  // namespace cuscope::process

#endif  // CUSCOPE_LIB_PROCESS_PYTHON_STACK_H_
