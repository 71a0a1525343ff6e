#include "lib/core/python_stack.h"

#include <dlfcn.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace cuscope::core {
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

}  // namespace

std::optional<CPythonLayout> CPythonLayoutFor(uint32_t version_hex) {
  CPythonLayout l;
  switch (version_hex & 0xFFFF0000u) {
    case 0x030B0000u:  // 3.11
      l.version = 0x030B0000u;
      l.thread_cframe = 56;
      l.cframe_current_frame = 8;  // after use_tracing
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
      l.version = 0x030C0000u;
      l.thread_cframe = 56;
      l.cframe_current_frame = 0;
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
    default:
      return std::nullopt;
  }
}

std::optional<uint32_t> LineOfCodeUnit(const uint8_t* table, size_t size, int first_line, int64_t index) {
  if (table == nullptr || index < 0) return std::nullopt;
  int64_t line = first_line;
  int64_t start = 0;  // the entry's first code unit
  size_t i = 0;
  while (i < size) {
    const uint8_t head = table[i++];
    if ((head & 0x80) == 0) return std::nullopt;  // not an entry's first byte: damaged
    const int code = (head >> 3) & 15;
    const int64_t length = (head & 7) + 1;
    int64_t delta = 0;
    bool has_line = true;
    uint32_t skipped = 0;
    switch (code) {
      case 15:  // no location
        has_line = false;
        break;
      case 14:  // long form: line delta, end line delta, column + 1, end column + 1
        if (!ReadSignedVarint(table, size, i, delta) || !ReadVarint(table, size, i, skipped) ||
            !ReadVarint(table, size, i, skipped) || !ReadVarint(table, size, i, skipped)) {
          return std::nullopt;
        }
        break;
      case 13:  // no column: line delta
        if (!ReadSignedVarint(table, size, i, delta)) return std::nullopt;
        break;
      case 10:
      case 11:
      case 12:  // one line: the delta is the code's, then column and end column
        delta = code - 10;
        i += 2;
        break;
      default:  // short form, same line: one byte of columns
        i += 1;
        break;
    }
    if (i > size) return std::nullopt;
    line += delta;
    if (index < start + length) {
      if (!has_line || line <= 0 || line > UINT32_MAX) return std::nullopt;
      return static_cast<uint32_t>(line);
    }
    start += length;
  }
  return std::nullopt;
}

std::vector<uint32_t> MergeStacks(const std::vector<MergedFrame>& native, const std::vector<MergedFrame>& python) {
  std::vector<uint32_t> out;
  out.reserve(native.size() + python.size());
  size_t p = 0;
  for (const MergedFrame& n : native) {
    if (!n.eval || p == python.size()) {
      out.push_back(n.id);
      continue;
    }
    while (p < python.size()) {
      out.push_back(python[p].id);
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
        absl::StrFormat("Python frames need CPython 3.11 or 3.12; this process runs %s", v));
  }
  const auto hex = static_cast<uint32_t>(*version);
  const std::optional<CPythonLayout> layout = CPythonLayoutFor(hex);
  if (!layout.has_value()) {
    return absl::UnimplementedError(absl::StrFormat("Python frames need CPython 3.11 or 3.12; this process runs %d.%d",
                                                    (hex >> 24) & 0xFF, (hex >> 16) & 0xFF));
  }
  Symbols s;
  s.this_thread_state = reinterpret_cast<void* (*)()>(::dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  s.is_initialized = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  s.is_finalizing = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "_Py_IsFinalizing"));
  s.code_type = ::dlsym(RTLD_DEFAULT, "PyCode_Type");
  s.str_type = ::dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  s.bytes_type = ::dlsym(RTLD_DEFAULT, "PyBytes_Type");
  if (s.this_thread_state == nullptr || s.is_initialized == nullptr || s.code_type == nullptr ||
      s.str_type == nullptr || s.bytes_type == nullptr) {
    return absl::UnimplementedError("Python frames: this CPython does not export the symbols its frames are found with");
  }
  return PythonStackReader(*layout, s);
}

bool PythonStackReader::ReadText(const void* object, std::string& out) const {
  out.clear();
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
    out.assign(text, static_cast<size_t>(length));
    return true;
  }
  out.reserve(static_cast<size_t>(length) * 2);
  for (int64_t i = 0; i < length; ++i) {
    switch (kind) {
      case 1: AppendUtf8(out, Load<uint8_t>(text, static_cast<size_t>(i))); break;
      case 2: AppendUtf8(out, Load<uint16_t>(text, static_cast<size_t>(i) * 2)); break;
      case 4: AppendUtf8(out, Load<uint32_t>(text, static_cast<size_t>(i) * 4)); break;
      default: return false;
    }
  }
  return true;
}

size_t PythonStackReader::Capture(std::vector<PythonFrame>& out, size_t max) const {
  if (symbols_.is_initialized() == 0) return 0;
  if (symbols_.is_finalizing != nullptr && symbols_.is_finalizing() != 0) return 0;
  const void* thread = symbols_.this_thread_state();
  if (!Aligned(thread)) return 0;
  const void* cframe = Load<const void*>(thread, layout_.thread_cframe);
  if (!Aligned(cframe)) return 0;
  const void* frame = Load<const void*>(cframe, layout_.cframe_current_frame);
  const size_t first = out.size();
  // A walk through more frames than a Python stack can hold (the recursion limit) is a cycle.
  for (int walked = 0; Aligned(frame) && out.size() - first < max && walked < 100000; ++walked) {
    const void* previous = Load<const void*>(frame, layout_.frame_previous);
    const auto owner = static_cast<int>(Load<char>(frame, layout_.frame_owner));
    if (layout_.owner_c_stack.has_value() && owner == *layout_.owner_c_stack) {
      // 3.12's entry shim: the frame before it was the outermost of its eval loop's call.
      if (out.size() > first) out.back().eval_entry = true;
      frame = previous;
      continue;
    }
    const void* code = Load<const void*>(frame, layout_.frame_code);
    if (!Aligned(code) || Load<const void*>(code, kObjectType) != symbols_.code_type) break;
    const char* bytecode = static_cast<const char*>(code) + layout_.code_bytecode;
    const auto* prev_instr = Load<const char*>(frame, layout_.frame_prev_instr);
    const int64_t unit = (prev_instr - bytecode) / 2;
    // A frame still being set up (before its first traceable instruction) is not shown, as
    // CPython's own tracebacks do not show it.
    if (owner != layout_.owner_generator && unit < Load<int32_t>(code, layout_.code_first_traceable)) {
      frame = previous;
      continue;
    }
    PythonFrame f;
    if (!ReadText(Load<const void*>(code, layout_.code_filename), f.file) ||
        !ReadText(Load<const void*>(code, layout_.code_qualname), f.function)) {
      break;
    }
    const void* table = Load<const void*>(code, layout_.code_linetable);
    if (Aligned(table) && Load<const void*>(table, kObjectType) == symbols_.bytes_type) {
      const auto size = Load<int64_t>(table, kVarSize);
      if (size >= 0 && size <= kMaxLineTable) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(static_cast<const char*>(table) + kBytesText);
        f.line = LineOfCodeUnit(bytes, static_cast<size_t>(size), Load<int32_t>(code, layout_.code_first_line), unit)
                     .value_or(0);
      }
    }
    if (layout_.frame_is_entry.has_value()) f.eval_entry = Load<bool>(frame, *layout_.frame_is_entry);
    out.push_back(std::move(f));
    frame = previous;
  }
  return out.size() - first;
}

}  // namespace cuscope::core
