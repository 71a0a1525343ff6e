#include "lib/core/dictionary.h"

#include "absl/strings/str_cat.h"

namespace cuscope::core {
namespace {

// Appends `def` at slot `id`, which must be the next free slot.
template <typename T>
absl::Status Define(std::vector<T>& table, uint32_t id, T def, const char* what) {
  if (id != table.size()) {
    return absl::DataLossError(absl::StrCat("corrupt trace: ", what, " id ", id, " defined out of order (expected ",
                                            table.size(), ")"));
  }
  table.push_back(std::move(def));
  return absl::OkStatus();
}

template <typename T>
const T& Lookup(const std::vector<T>& table, uint32_t id) {
  return id < table.size() ? table[id] : table[0];
}

}  // namespace

Dictionary::Dictionary() : strings_(1), signatures_(1), functions_(1), threads_(1), frames_(1), stacks_(1) {}

absl::Status Dictionary::Absorb(const v1::Chunk& chunk) {
  for (const auto& s : chunk.strings()) {
    if (auto st = Define(strings_, s.id(), s.value(), "string"); !st.ok()) return st;
  }
  for (const auto& s : chunk.kernel_signatures()) {
    if (auto st = Define(signatures_, s.id(), s, "kernel signature"); !st.ok()) return st;
  }
  for (const auto& f : chunk.api_functions()) {
    if (auto st = Define(functions_, f.id(), f, "API function"); !st.ok()) return st;
  }
  for (const auto& t : chunk.threads()) {
    if (auto st = Define(threads_, t.id(), t, "thread"); !st.ok()) return st;
  }
  // A frame names strings, a stack frames: each defined before (a reader then never checks again).
  for (const auto& f : chunk.stack_frames()) {
    // A native frame names its module, a Python frame its file (and only that).
    if (f.module() == 0 || f.module() >= strings_.size() || f.function() >= strings_.size() ||
        f.source_file() >= strings_.size()) {
      return absl::DataLossError(absl::StrCat("corrupt trace: stack frame ", f.id(), " names an undefined string"));
    }
    if (auto st = Define(frames_, f.id(), f, "stack frame"); !st.ok()) return st;
  }
  for (const auto& c : chunk.call_stacks()) {
    if (c.frames().empty()) return absl::DataLossError(absl::StrCat("corrupt trace: call stack ", c.id(), " is empty"));
    for (uint32_t f : c.frames()) {
      if (f == 0 || f >= frames_.size()) {
        return absl::DataLossError(absl::StrCat("corrupt trace: call stack ", c.id(), " names undefined frame ", f));
      }
    }
    if (auto st = Define(stacks_, c.id(), c, "call stack"); !st.ok()) return st;
  }
  return absl::OkStatus();
}

const std::string& Dictionary::str(uint32_t id) const { return Lookup(strings_, id); }
const v1::KernelSignature& Dictionary::signature(uint32_t id) const { return Lookup(signatures_, id); }
const v1::ApiFunction& Dictionary::function(uint32_t id) const { return Lookup(functions_, id); }
const v1::HostThread& Dictionary::thread(uint32_t id) const { return Lookup(threads_, id); }
const v1::StackFrame& Dictionary::frame(uint32_t id) const { return Lookup(frames_, id); }
const v1::CallStack& Dictionary::stack(uint32_t id) const { return Lookup(stacks_, id); }

uint32_t Dictionary::AddString(std::string s) {
  strings_.push_back(std::move(s));
  return static_cast<uint32_t>(strings_.size() - 1);
}

void Dictionary::SetNativeFrameSource(uint32_t frame, uint32_t source_file, uint32_t line, uint32_t function_if_none) {
  if (!has_frame(frame) || source_file >= strings_.size() || function_if_none >= strings_.size()) return;
  v1::StackFrame& f = frames_[frame];
  f.set_source_file(source_file);
  f.set_line(line);
  if (f.function() == 0) f.set_function(function_if_none);
}

}  // namespace cuscope::core
