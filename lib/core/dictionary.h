// File-wide interned definitions, as the trace reader accumulates them chunk by chunk.
#ifndef CUSCOPE_LIB_CORE_DICTIONARY_H_
#define CUSCOPE_LIB_CORE_DICTIONARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::core {

// Ids are dense and start at 1; id 0 means "none" for strings and is never defined. Vectors are
// indexed by id (slot 0 holds an empty definition).
class Dictionary {
 public:
  Dictionary();

  // Adds the definitions a chunk carries. Fails on an id that is out of order or defined twice,
  // which only a corrupt file has.
  absl::Status Absorb(const v1::Chunk& chunk);

  const std::string& str(uint32_t id) const;
  bool has_signature(uint32_t id) const { return id > 0 && id < signatures_.size(); }
  const v1::KernelSignature& signature(uint32_t id) const;
  const v1::ApiFunction& function(uint32_t id) const;
  const v1::HostThread& thread(uint32_t id) const;
  bool has_frame(uint32_t id) const { return id > 0 && id < frames_.size(); }
  bool has_stack(uint32_t id) const { return id > 0 && id < stacks_.size(); }
  const v1::StackFrame& frame(uint32_t id) const;
  const v1::CallStack& stack(uint32_t id) const;
  // The kernel name of a signature, as a string.
  const std::string& kernel_name(uint32_t signature_id) const { return str(signature(signature_id).name()); }
  const std::string& function_name(uint32_t function_id) const { return str(function(function_id).name()); }

  // For a reader that adds what it learns after the whole trace is read (native frames' source lines):
  // a new string's id (after every id the trace defined), and the native frame `id` given its source
  // file, line and, when it had none, function. A chunk absorbed after these would clash: not done.
  uint32_t AddString(std::string s);
  void SetNativeFrameSource(uint32_t frame, uint32_t source_file, uint32_t line, uint32_t function_if_none);

  size_t string_count() const { return strings_.size() - 1; }
  size_t signature_count() const { return signatures_.size() - 1; }
  size_t function_count() const { return functions_.size() - 1; }
  size_t thread_count() const { return threads_.size() - 1; }
  size_t frame_count() const { return frames_.size() - 1; }
  size_t stack_count() const { return stacks_.size() - 1; }

 private:
  std::vector<std::string> strings_;
  std::vector<v1::KernelSignature> signatures_;
  std::vector<v1::ApiFunction> functions_;
  std::vector<v1::HostThread> threads_;
  std::vector<v1::StackFrame> frames_;
  std::vector<v1::CallStack> stacks_;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_DICTIONARY_H_
