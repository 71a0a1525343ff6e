#include "lib/cupti/stack_interner.h"

#include <unistd.h>

#include "lib/process/call_stack.h"

namespace cuscope::cupti {

bool IsProfilerModule(std::string_view module) {
  const size_t slash = module.rfind('/');
  const std::string_view file = slash == std::string_view::npos ? module : module.substr(slash + 1);
  return file.starts_with("libcuscope.so") || file.starts_with("libcupti.so");
}

void StackInterner::Add(const std::vector<QueuedStack>& stacks) {
  if (frame_of_address_.size() > kMaxResolvedAddresses) frame_of_address_.clear();
  for (const QueuedStack& q : stacks) {
    if (q.original_node_id != 0) {
      builder_.AddGraphNode(q.graph_node_id, 0, q.original_node_id);
      continue;
    }
    native_.clear();
    for (uintptr_t address : q.return_addresses) {
      auto [it, inserted] = frame_of_address_.try_emplace(address, process::MergedFrame{});
      if (inserted) {
        const process::ResolvedFrame r = process::ResolveReturnAddress(address);
        if (!IsProfilerModule(r.module)) {
          it->second.id = builder_.InternFrame(r.module, r.module_offset, r.function, r.function_offset, r.build_id);
          it->second.eval = r.function == process::kEvalLoopSymbol;
        }
      }
      if (it->second.id != 0) native_.push_back(it->second);
    }
    python_.clear();
    for (const process::PythonFrame& f : q.python) {
      python_.push_back({builder_.InternPythonFrame(f.file, f.function, f.line), f.eval_entry, f.empty_evals_before});
    }
    const std::vector<uint32_t> frames = process::MergeStacks(native_, python_);
    if (frames.empty()) continue;
    const uint32_t stack = builder_.InternStack(frames);
    if (q.graph_node_id != 0) {
      builder_.AddGraphNode(q.graph_node_id, stack, 0, q.created_ns, static_cast<uint32_t>(::getpid()), q.tid);
    } else {
      builder_.AddLaunchStack(q.correlation_id, stack);
    }
  }
}

}  // namespace cuscope::cupti
