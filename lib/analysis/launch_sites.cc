#include "lib/analysis/launch_sites.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/kernel_selection.h"

namespace cuscope::analysis {
namespace {

std::string_view FileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool IsCudaLibrary(std::string_view module) {
  const std::string_view file = FileName(module);
  for (std::string_view prefix :
       {"libcudart.so", "libcuda.so", "libcupti.so", "libcuscope.so", "libcublas.so", "libcublasLt.so", "libcudnn",
        "libnccl.so", "libcufft.so", "libcurand.so", "libcusparse.so", "libcusolver.so", "libnvrtc.so", "libnvJitLink"}) {
    if (file.starts_with(prefix)) return true;
  }
  return false;
}

std::string FrameText(const core::Dictionary& dict, uint32_t frame) {
  if (!dict.has_frame(frame)) return "(unknown frame)";
  const v1::StackFrame& f = dict.frame(frame);
  const std::string_view module = FileName(dict.str(f.module()));
  if (f.function() == 0) return absl::StrFormat("%s+0x%x", std::string(module), f.module_offset());
  const std::string name = core::FunctionBaseName(core::DemangleName(dict.str(f.function())));
  return absl::StrCat(name, " (", absl::string_view(module.data(), module.size()), ")");
}

uint32_t LaunchSiteFrame(const core::Dictionary& dict, uint32_t stack) {
  if (!dict.has_stack(stack)) return 0;
  const v1::CallStack& s = dict.stack(stack);
  for (uint32_t frame : s.frames()) {
    if (!IsCudaLibrary(dict.str(dict.frame(frame).module()))) return frame;
  }
  return s.frames(0);
}

LaunchStackIndex::LaunchStackIndex(const std::vector<core::LaunchStackRow>& launch_stacks,
                                   const std::vector<core::GraphNodeRow>& graph_nodes) {
  by_correlation_.reserve(launch_stacks.size());
  for (const core::LaunchStackRow& l : launch_stacks) by_correlation_[l.correlation_id] = l.stack;
  for (const core::GraphNodeRow& g : graph_nodes) {
    if (g.stack != 0) {
      by_node_[g.node_id] = g.stack;
    } else {
      original_of_[g.node_id] = g.original_node_id;
    }
  }
}

uint32_t LaunchStackIndex::StackOf(const core::KernelRow& kernel) const {
  // A graph's kernels share their graph launch's correlation id: the node says more.
  if (kernel.graph_node_id != 0) {
    uint64_t node = kernel.graph_node_id;
    for (int hop = 0; hop <= kMaxCloneHops; ++hop) {
      if (auto it = by_node_.find(node); it != by_node_.end()) return it->second;
      auto original = original_of_.find(node);
      if (original == original_of_.end()) break;
      node = original->second;
    }
  }
  if (kernel.correlation_id != 0) {
    if (auto it = by_correlation_.find(kernel.correlation_id); it != by_correlation_.end()) return it->second;
  }
  return 0;
}

}  // namespace cuscope::analysis
