#include "lib/process/python_stack.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/process/text_pool.h"

namespace cuscope::process {
namespace {

// Offsets every CPython object shares (PyObject_HEAD, PyObject_VAR_HEAD, PyASCIIObject's start).
constexpr size_t kObjectType = 8;     // ob_type
constexpr size_t kVarSize = 16;       // ob_size
constexpr size_t kStrLength = 16;     // PyASCIIObject.length
constexpr size_t kStrState = 32;      // PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1
constexpr size_t kBytesText = 32;     // PyBytesObject.ob_sval
constexpr int64_t kMaxText = 4096;    // longer names and paths are not read
constexpr int64_t kMaxLineTable = 1 << 20;

template <typename T>
T Load(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof(T));
  return value;
}

bool Aligned(const void* p) { return p != nullptr && (reinterpret_cast<uintptr_t>(p) & 7) == 0; }

void AppendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    if (c >= 0xD800 && c < 0xE000) c = 0xFFFD;  // a lone surrogate (surrogateescape'd file names)
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x110000) {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.append("\xEF\xBF\xBD");
  }
}

// The location table's variable-length integers: 6 bits a byte, 0x40 set on all bytes but the last.
bool ReadVarint(const uint8_t* t, size_t size, size_t& i, uint32_t& value) {
  if (i >= size) return false;
  uint8_t b = t[i++];
  value = b & 63;
  unsigned shift = 0;
  while (b & 64) {
    if (i >= size || shift >= 26) return false;
    b = t[i++];
    shift += 6;
    value |= static_cast<uint32_t>(b & 63) << shift;
  }
  return true;
}

bool ReadSignedVarint(const uint8_t* t, size_t size, size_t& i, int64_t& value) {
  uint32_t u = 0;
  if (!ReadVarint(t, size, i, u)) return false;
  value = (u & 1) ? -static_cast<int64_t>(u >> 1) : static_cast<int64_t>(u >> 1);
  return true;
}

// A location table (co_linetable, CPython 3.11 and later) as the first code unit of each entry and
// its line (0: none), in order, then the unit past the table. A damaged entry ends the ranges there.
std::vector<std::pair<int64_t, uint32_t>> DecodeRanges(const uint8_t* table, size_t size, int first_line) {
  std::vector<std::pair<int64_t, uint32_t>> ranges;
  int64_t line = first_line, start = 0;
  size_t i = 0;
  while (i < size) {
    const uint8_t head = table[i++];
    if ((head & 0x80) == 0) break;
    const int code = (head >> 3) & 15;
    const int64_t length = (head & 7) + 1;
    int64_t delta = 0;
    uint32_t skipped = 0;
    bool ok = true;
    if (code == 14) {
      ok = ReadSignedVarint(table, size, i, delta) && ReadVarint(table, size, i, skipped) &&
           ReadVarint(table, size, i, skipped) && ReadVarint(table, size, i, skipped);
    } else if (code == 13) {
      ok = ReadSignedVarint(table, size, i, delta);
    } else if (code >= 10 && code <= 12) {
      delta = code - 10;
      i += 2;
    } else if (code != 15) {
      i += 1;
    }
    if (!ok || i > size) break;
    line += delta;
    const uint32_t shown = code == 15 || line <= 0 || line > UINT32_MAX ? 0 : static_cast<uint32_t>(line);
    ranges.emplace_back(start, shown);
    start += length;
  }
  ranges.emplace_back(start, 0);  // past the table
  return ranges;
}

// The line of `unit`: the last range starting at or before it (the final one, past the table, has none).
uint32_t LineInRanges(const std::vector<std::pair<int64_t, uint32_t>>& ranges, int64_t unit) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), unit,
                                [](int64_t u, const std::pair<int64_t, uint32_t>& r) { return u < r.first; });
  return after == ranges.begin() ? 0 : std::prev(after)->second;
}

}  // namespace

std::optional<CPythonLayout> CPythonLayoutFor(uint32_t version_hex) {
  CPythonLayout l;
  switch (version_hex & 0xFFFF0000u) {
    case 0x030B0000u:  // 3.11
      l.thread_cframe = 56;
      l.current_frame = 8;  // after use_tracing
      l.frame_code = 32;
      l.frame_previous = 48;
      l.frame_prev_instr = 56;
      l.frame_is_entry = 68;
      l.frame_owner = 69;
      l.code_first_line = 72;
      l.code_filename = 112;
      l.code_qualname = 128;
      l.code_linetable = 136;
      l.code_first_traceable = 168;
      l.code_bytecode = 184;
      l.ascii_header = 48;  // with wstr
      l.compact_header = 72;
      return l;
    case 0x030C0000u:  // 3.12
      l.thread_cframe = 56;
      l.current_frame = 0;
      l.frame_code = 0;
      l.frame_previous = 8;
      l.frame_prev_instr = 56;
      l.frame_owner = 70;
      l.owner_c_stack = 3;
      l.code_first_line = 68;
      l.code_filename = 112;
      l.code_qualname = 128;
      l.code_linetable = 136;
      l.code_first_traceable = 176;
      l.code_bytecode = 192;
      l.ascii_header = 40;
      l.compact_header = 56;
      return l;
    case 0x030D0000u: {  // 3.13: 3.12's frames and code objects, without _PyCFrame
      l = *CPythonLayoutFor(0x030C0000u);
      l.thread_cframe.reset();
      l.current_frame = 72;  // PyThreadState.current_frame
      l.code_first_traceable = 184;
      l.code_bytecode = 200;
      return l;  // the frame's instr_ptr lies where 3.12's prev_instr did, and names the same code unit
    }
    default:
      return std::nullopt;
  }
}

absl::Status CheckDebugOffsets313(const void* debug_offsets, uint32_t version_hex, const CPythonLayout& layout) {
  if (debug_offsets == nullptr || std::memcmp(debug_offsets, "xdebugpy", 8) != 0) {
    return absl::UnimplementedError("Python frames: this CPython 3.13 publishes no debugger offsets (_PyRuntime)");
  }
  // _Py_DebugOffsets of 3.13 (Include/internal/pycore_runtime.h): the cookie, the version, whether
  // free-threaded, then sections of 8-byte offsets, each led by its struct's size.
  const auto at = [debug_offsets](size_t offset) { return Load<uint64_t>(debug_offsets, offset); };
  const uint64_t version = at(8);
  if ((version & 0xFFFF0000u) != (version_hex & 0xFFFF0000u)) {
    return absl::UnimplementedError(absl::StrFormat(
        "Python frames: the debugger offsets are of CPython %d.%d, the process runs %d.%d", (version >> 24) & 0xFF,
        (version >> 16) & 0xFF, (version_hex >> 24) & 0xFF, (version_hex >> 16) & 0xFF));
  }
  if (at(16) != 0) {
    return absl::UnimplementedError("Python frames: a free-threaded CPython 3.13 is not read (its objects differ)");
  }
  struct Expected {
    const char* field;
    size_t at;
    uint64_t value;
  };
  const Expected expected[] = {
      {"thread_state.current_frame", 184, layout.current_frame},
      {"interpreter_frame.previous", 232, layout.frame_previous},
      {"interpreter_frame.executable", 240, layout.frame_code},
      {"interpreter_frame.instr_ptr", 248, layout.frame_prev_instr},
      {"interpreter_frame.owner", 264, layout.frame_owner},
      {"code_object.filename", 280, layout.code_filename},
      {"code_object.qualname", 296, layout.code_qualname},
      {"code_object.linetable", 304, layout.code_linetable},
      {"code_object.firstlineno", 312, layout.code_first_line},
      {"code_object.co_code_adaptive", 344, layout.code_bytecode},
      {"pyobject.ob_type", 360, kObjectType},
      {"bytes_object.ob_size", 520, kVarSize},
      {"bytes_object.ob_sval", 528, kBytesText},
      {"unicode_object.state", 544, kStrState},
      {"unicode_object.length", 552, kStrLength},
      {"unicode_object.asciiobject_size", 560, layout.ascii_header},
  };
  for (const Expected& e : expected) {
    if (at(e.at) != e.value) {
      return absl::UnimplementedError(absl::StrFormat(
          "Python frames: this CPython 3.13 build lays out %s at %d, not %d", e.field, at(e.at), e.value));
    }
  }
  return absl::OkStatus();
}

std::optional<uint32_t> LineOfCodeUnit(const uint8_t* table, size_t size, int first_line, int64_t index) {
  if (table == nullptr || index < 0) return std::nullopt;
  const uint32_t line = LineInRanges(DecodeRanges(table, size, first_line), index);
  if (line == 0) return std::nullopt;
  return line;
}

std::vector<uint32_t> MergeStacks(const std::vector<MergedFrame>& native, const std::vector<MergedFrame>& python) {
  std::vector<uint32_t> out;
  out.reserve(native.size() + python.size());
  size_t p = 0;
  uint16_t empties_taken = 0;  // of python[p].empty_evals_before
  for (const MergedFrame& n : native) {
    if (!n.eval || p == python.size()) {
      out.push_back(n.id);
      continue;
    }
    if (empties_taken < python[p].empty_evals_before) {
      ++empties_taken;  // an eval-loop call that ran no Python frame: its native frame stands for nothing
      continue;
    }
    while (p < python.size()) {
      out.push_back(python[p].id);
      empties_taken = 0;
      if (python[p++].eval) break;
    }
  }
  for (; p < python.size(); ++p) out.push_back(python[p].id);
  return out;
}

absl::StatusOr<PythonStackReader> PythonStackReader::ForThisProcess() {
  const auto* version = static_cast<const unsigned long*>(::dlsym(RTLD_DEFAULT, "Py_Version"));
  if (version == nullptr) {
    using GetVersion = const char* (*)();
    auto get_version = reinterpret_cast<GetVersion>(::dlsym(RTLD_DEFAULT, "Py_GetVersion"));
    if (get_version == nullptr) return absl::NotFoundError("no CPython in this process");
    const char* text = get_version();
    std::string v = text == nullptr ? "?" : std::string(text, strnlen(text, 16));
    if (const size_t space = v.find(' '); space != std::string::npos) v.resize(space);
    return absl::UnimplementedError(
        absl::StrFormat("Python frames need CPython 3.11, 3.12 or 3.13; this process runs %s", v));
  }
  const auto hex = static_cast<uint32_t>(*version);
  const std::optional<CPythonLayout> layout = CPythonLayoutFor(hex);
  if (!layout.has_value()) {
    return absl::UnimplementedError(absl::StrFormat(
        "Python frames need CPython 3.11, 3.12 or 3.13; this process runs %d.%d", (hex >> 24) & 0xFF, (hex >> 16) & 0xFF));
  }
  if ((hex & 0xFFFF0000u) == 0x030D0000u) {
    if (auto st = CheckDebugOffsets313(::dlsym(RTLD_DEFAULT, "_PyRuntime"), hex, *layout); !st.ok()) return st;
  }
  Symbols s;
  s.this_thread_state = reinterpret_cast<void* (*)()>(::dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  s.is_initialized = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  s.is_finalizing = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "_Py_IsFinalizing"));
  if (s.is_finalizing == nullptr) {  // public from 3.13
    s.is_finalizing = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "Py_IsFinalizing"));
  }
  s.code_type = ::dlsym(RTLD_DEFAULT, "PyCode_Type");
  s.str_type = ::dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  s.bytes_type = ::dlsym(RTLD_DEFAULT, "PyBytes_Type");
  if (s.this_thread_state == nullptr || s.is_initialized == nullptr || s.code_type == nullptr ||
      s.str_type == nullptr || s.bytes_type == nullptr) {
    return absl::UnimplementedError("Python frames: this CPython does not export the symbols its frames are found with");
  }
  return PythonStackReader(*layout, s);
}

namespace {

// A thread's decoded location tables, by code object: each table as its ranges of code units
// (first unit, line; 0: none), in order. Bounded: a thread that runs more code objects than this
// starts over. A code object freed and another made at its address with its table's address and
// size could only give a wrong line: the ranges are ours, nothing is read through them.
struct LineRanges {
  const void* table = nullptr;
  int64_t size = 0;
  std::vector<std::pair<int64_t, uint32_t>> ranges;
};
constexpr size_t kMaxCachedTables = 256;
constexpr size_t kMaxCachedRanges = 1 << 18;  // entries over all tables (16 bytes each)
thread_local absl::flat_hash_map<const void*, LineRanges> t_lines;
thread_local size_t t_cached_ranges = 0;

// File and function names of every thread's frames; never destroyed, so the views frames hold stay
// valid through the program's exit handlers.
TextPool& NamePool() {
  static TextPool* pool = new TextPool(size_t{64} << 20);
  return *pool;
}
constexpr size_t kMaxCachedTexts = 1 << 16;
thread_local absl::flat_hash_map<const void*, std::string_view> t_texts;  // str object -> pooled text
thread_local std::string t_converted;                                      // a non-ASCII text, as UTF-8

}  // namespace

uint32_t PythonStackReader::LineOf(const void* code, int64_t unit) const {
  if (unit < 0) return 0;
  const void* table = Load<const void*>(code, layout_.code_linetable);
  if (!Aligned(table) || Load<const void*>(table, kObjectType) != symbols_.bytes_type) return 0;
  const auto size = Load<int64_t>(table, kVarSize);
  if (size < 0 || size > kMaxLineTable) return 0;
  auto it = t_lines.find(code);
  if (it == t_lines.end() || it->second.table != table || it->second.size != size) {
    if (t_lines.size() >= kMaxCachedTables || t_cached_ranges >= kMaxCachedRanges) {
      t_lines.clear();
      t_cached_ranges = 0;
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(static_cast<const char*>(table) + kBytesText);
    LineRanges decoded{table, size, DecodeRanges(bytes, static_cast<size_t>(size), Load<int32_t>(code, layout_.code_first_line))};
    t_cached_ranges += decoded.ranges.size();
    it = t_lines.insert_or_assign(code, std::move(decoded)).first;
  }
  return LineInRanges(it->second.ranges, unit);
}

bool PythonStackReader::ReadText(const void* object, std::string& converted, std::string_view& out) const {
  if (!Aligned(object) || Load<const void*>(object, kObjectType) != symbols_.str_type) return false;
  const auto length = Load<int64_t>(object, kStrLength);
  if (length < 0 || length > kMaxText) return false;
  const auto state = Load<uint32_t>(object, kStrState);
  const unsigned kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1;
  const bool ascii = (state >> 6) & 1;
  if (!compact) return false;  // code objects' names and paths are always compact
  const char* text = static_cast<const char*>(object) + (ascii ? layout_.ascii_header : layout_.compact_header);
  if (ascii) {
    out = std::string_view(text, static_cast<size_t>(length));
    return true;
  }
  converted.clear();
  converted.reserve(static_cast<size_t>(length) * 2);
  for (int64_t i = 0; i < length; ++i) {
    switch (kind) {
      case 1: AppendUtf8(converted, Load<uint8_t>(text, static_cast<size_t>(i))); break;
      case 2: AppendUtf8(converted, Load<uint16_t>(text, static_cast<size_t>(i) * 2)); break;
      case 4: AppendUtf8(converted, Load<uint32_t>(text, static_cast<size_t>(i) * 4)); break;
      default: return false;
    }
  }
  out = converted;
  return true;
}

bool PythonStackReader::PooledText(const void* object, std::string_view& out) const {
  std::string_view text;
  if (!ReadText(object, t_converted, text)) return false;
  if (auto it = t_texts.find(object); it != t_texts.end() && it->second == text) {
    out = it->second;
    return true;
  }
  const std::optional<std::string_view> pooled = NamePool().Intern(text);
  if (!pooled.has_value()) return false;
  if (t_texts.size() >= kMaxCachedTexts) t_texts.clear();
  t_texts.insert_or_assign(object, *pooled);
  out = *pooled;
  return true;
}

size_t PythonStackReader::Capture(std::vector<PythonFrame>& out, size_t max) const {
  // Not while the interpreter starts or ends: finalization frees other threads' states. (A daemon
  // thread launching with the GIL released in the instant finalization begins is not covered.)
  if (symbols_.is_initialized() == 0) return 0;
  if (symbols_.is_finalizing != nullptr && symbols_.is_finalizing() != 0) return 0;
  const void* thread = symbols_.this_thread_state();
  if (!Aligned(thread)) return 0;
  const void* holder = thread;  // of the current frame: the thread state, or its _PyCFrame before 3.13
  if (layout_.thread_cframe.has_value()) {
    holder = Load<const void*>(thread, *layout_.thread_cframe);
    if (!Aligned(holder)) return 0;
  }
  const void* frame = Load<const void*>(holder, layout_.current_frame);
  const size_t first = out.size();
  // Where one eval-loop call's frames end: a frame marked so (3.11's is_entry), or the frame before a
  // shim (3.12, 3.13). A boundary with no frame since the last one is an eval-loop call that runs none.
  bool group_open = false;
  uint16_t empty_evals = 0;
  const auto boundary = [&] {
    if (group_open) {
      out.back().eval_entry = true;
      group_open = false;
    } else if (empty_evals < UINT16_MAX) {
      ++empty_evals;
    }
  };
  // A walk through more frames than a Python stack can hold (the recursion limit) is a cycle.
  for (int walked = 0; Aligned(frame) && out.size() - first < max && walked < 100000; ++walked) {
    const void* previous = Load<const void*>(frame, layout_.frame_previous);
    const auto owner = static_cast<int>(Load<char>(frame, layout_.frame_owner));
    const bool entry = layout_.frame_is_entry.has_value() && Load<bool>(frame, *layout_.frame_is_entry);
    if (layout_.owner_c_stack.has_value() && owner == *layout_.owner_c_stack) {
      boundary();  // the entry shim (3.12, 3.13), below each eval-loop call's frames
      frame = previous;
      continue;
    }
    const void* code = Load<const void*>(frame, layout_.frame_code);
    if (!Aligned(code) || Load<const void*>(code, kObjectType) != symbols_.code_type) break;
    const char* bytecode = static_cast<const char*>(code) + layout_.code_bytecode;
    const auto* prev_instr = Load<const char*>(frame, layout_.frame_prev_instr);
    const int64_t unit = (prev_instr - bytecode) / 2;
    // A frame still being set up (before its first traceable instruction) is not shown, as
    // CPython's own tracebacks do not show it; its eval-loop boundary still counts.
    if (owner != layout_.owner_generator && unit < Load<int32_t>(code, layout_.code_first_traceable)) {
      if (entry) boundary();
      frame = previous;
      continue;
    }
    PythonFrame f;
    if (!PooledText(Load<const void*>(code, layout_.code_filename), f.file) ||
        !PooledText(Load<const void*>(code, layout_.code_qualname), f.function)) {
      break;
    }
    f.line = LineOf(code, unit);
    f.empty_evals_before = empty_evals;
    empty_evals = 0;
    out.push_back(std::move(f));
    group_open = true;
    if (entry) boundary();
    frame = previous;
  }
  return out.size() - first;
}

}  // namespace cuscope::process
