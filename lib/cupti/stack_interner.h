// Launch and graph-node call stacks into the trace: each return address resolved once (module,
// function, build id) and interned with the chunk builder, cuscope's own frames and CUPTI's left
// out, a Python program's frames merged in where CPython's eval loop ran.
//
// Writer thread only. No CUPTI: stacks are taken in callbacks (LaunchStackCollector) and queued.
#ifndef CUSCOPE_LIB_CUPTI_STACK_INTERNER_H_
#define CUSCOPE_LIB_CUPTI_STACK_INTERNER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/core/chunk_builder.h"
#include "lib/process/python_stack.h"

namespace cuscope::cupti {

// One stack as a callback took it: a launch's (correlation_id), a created graph node's
// (graph_node_id, when and on which thread), or a node cloned from another (original_node_id, no
// addresses).
struct QueuedStack {
  uint64_t correlation_id = 0;
  uint64_t graph_node_id = 0;
  uint64_t original_node_id = 0;
  uint64_t created_ns = 0;
  uint64_t tid = 0;
  std::vector<uintptr_t> return_addresses;   // innermost first
  std::vector<process::PythonFrame> python;  // innermost first; empty outside Python
};

// Whether a module is cuscope's or CUPTI's (innermost in every stack taken in a callback).
bool IsProfilerModule(std::string_view module);

class StackInterner {
 public:
  // Addresses resolved past this many are forgotten (a program that keeps loading new code, JIT,
  // must not grow the cache without bound); the builder's interning keeps their ids stable.
  static constexpr size_t kMaxResolvedAddresses = size_t{1} << 20;

  explicit StackInterner(core::ChunkBuilder& builder) : builder_(builder) {}

  // Each stack into the builder's next chunk: a launch stack, a graph node, or a clone. A stack of
  // nothing but profiler frames adds nothing.
  void Add(const std::vector<QueuedStack>& stacks);

  size_t resolved_addresses() const { return frame_of_address_.size(); }

 private:
  core::ChunkBuilder& builder_;
  // Each return address's frame id (0: one of our own frames or CUPTI's, left out) and whether it
  // is CPython's eval loop (its Python frames go there).
  absl::flat_hash_map<uintptr_t, process::MergedFrame> frame_of_address_;
  std::vector<process::MergedFrame> native_, python_;  // reused from stack to stack
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_STACK_INTERNER_H_
