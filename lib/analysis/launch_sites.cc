#include "lib/analysis/launch_sites.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/timeline.h"
#include "lib/process/call_stack.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"
#include "lib/process/python_stack.h"

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

bool IsPythonLibraryFile(std::string_view file) {
  const auto has = [&](std::string_view part) { return file.find(part) != std::string_view::npos; };
  // Code the program did not write but had generated: torch.compile's (Inductor's cache) and FX's
  // ("<eval_with_key>.N"), frozen modules; of the pseudo-files, only what a person typed is theirs.
  if (file.starts_with("<")) {
    return !(file.starts_with("<stdin>") || file.starts_with("<string>") || file.starts_with("<ipython-input"));
  }
  return has("/site-packages/") || has("/dist-packages/") || has("/lib/python3") || has("/lib64/python3") ||
         has("/torchinductor_");
}

// The interpreter's executable or library (the collector names the executable by its file, so a
// virtual environment's `python` reads as the python3.X it links to).
bool IsPythonInterpreter(std::string_view module) {
  const std::string_view file = FileName(module);
  return file == "python" || file.starts_with("python3") || file.starts_with("libpython3");
}

bool IsPythonFrame(const core::Dictionary& dict, uint32_t frame) {
  // A Python frame names its file as its module too; a native frame given a source line keeps its
  // module's path.
  return dict.has_frame(frame) && dict.frame(frame).source_file() != 0 &&
         dict.frame(frame).source_file() == dict.frame(frame).module();
}

std::string FrameText(const core::Dictionary& dict, uint32_t frame) {
  if (!dict.has_frame(frame)) return "(unknown frame)";
  const v1::StackFrame& f = dict.frame(frame);
  if (IsPythonFrame(dict, frame)) {
    const std::string_view file = FileName(dict.str(f.source_file()));
    const std::string_view function = dict.str(f.function());
    std::string text = absl::StrCat(absl::string_view(function.data(), function.size()), " (",
                                     absl::string_view(file.data(), file.size()));
    if (f.line() != 0) absl::StrAppend(&text, ":", f.line());
    return absl::StrCat(text, ")");
  }
  // Native: the function, or module+0xOFFSET without one; then where, its source line when read
  // from the module's DWARF (lib/symbolize), else its module.
  const std::string_view module = FileName(dict.str(f.module()));
  const std::string at_offset = absl::StrFormat("%s+0x%x", std::string(module), f.module_offset());
  if (f.source_file() == 0) {
    if (f.function() == 0) return at_offset;
    return absl::StrCat(core::FunctionBaseName(core::DemangleName(dict.str(f.function()))), " (",
                        absl::string_view(module.data(), module.size()), ")");
  }
  const std::string_view file = FileName(dict.str(f.source_file()));
  const std::string name =
      f.function() == 0 ? at_offset : core::FunctionBaseName(core::DemangleName(dict.str(f.function())));
  return absl::StrCat(name, " (", absl::string_view(file.data(), file.size()), ":", f.line(), ")");
}

bool IsLaunchGlue(const core::Dictionary& dict, uint32_t frame, const KernelNameSet& kernels) {
  if (!dict.has_frame(frame) || IsPythonFrame(dict, frame)) return false;
  const v1::StackFrame& f = dict.frame(frame);
  if (f.function() != 0 && core::IsLaunchGlueFunction(dict.str(f.function()), kernels)) return true;
  if (f.source_file() == 0) return false;
  const std::string_view path = dict.str(f.source_file());
  const std::string_view file = FileName(path);
  return path.ends_with(".cudafe1.stub.c") ||
         ((file == "device_functions.h" || file == "host_runtime.h" || file == "cuda_runtime.h") &&
          path.find("/include/") != std::string_view::npos);
}

uint32_t LaunchSiteFrame(const core::Dictionary& dict, uint32_t stack, const KernelNameSet& kernels) {
  if (!dict.has_stack(stack)) return 0;
  const v1::CallStack& s = dict.stack(stack);
  // A launch from Python: the program's own line that asked for it (the innermost Python frame
  // outside installed packages and the standard library), else the innermost Python frame.
  uint32_t innermost_python = 0;
  for (uint32_t frame : s.frames()) {
    if (!IsPythonFrame(dict, frame)) continue;
    if (!IsPythonLibraryFile(dict.str(dict.frame(frame).source_file()))) return frame;
    if (innermost_python == 0) innermost_python = frame;
  }
  if (innermost_python != 0) return innermost_python;
  for (uint32_t frame : s.frames()) {
    if (!IsCudaLibrary(dict.str(dict.frame(frame).module())) && !IsLaunchGlue(dict, frame, kernels)) return frame;
  }
  return s.frames(0);
}

LaunchStackIndex::LaunchStackIndex(const std::vector<core::LaunchStackRow>& launch_stacks,
                                   const std::vector<core::GraphNodeRow>& graph_nodes) {
  by_correlation_.reserve(launch_stacks.size());
  for (const core::LaunchStackRow& l : launch_stacks) by_correlation_[l.correlation_id] = l.stack;
  for (const core::GraphNodeRow& g : graph_nodes) {
    if (g.stack != 0) by_node_[g.node_id] = Origin{g.stack, g.thread, g.created_ns};
    if (g.original_node_id != 0) original_of_[g.node_id] = g.original_node_id;
  }
}

LaunchStackIndex::Origin LaunchStackIndex::OriginOf(const core::KernelRow& kernel) const {
  // A graph's kernels share their graph launch's correlation id: the node says more. An executable
  // graph's node is created at instantiation (with that call's stack) and cloned from the node the
  // capture created: the clone chain is followed to its origin, whose stack says where the kernel
  // was asked for; a node's own stack serves when the chain has none.
  if (kernel.graph_node_id != 0) {
    uint64_t node = kernel.graph_node_id;
    std::optional<Origin> found;
    for (int hop = 0; hop <= kMaxCloneHops; ++hop) {
      if (auto it = by_node_.find(node); it != by_node_.end()) found = it->second;
      auto original = original_of_.find(node);
      if (original == original_of_.end()) break;
      node = original->second;
    }
    if (found.has_value()) return *found;
  }
  if (kernel.correlation_id != 0) {
    if (auto it = by_correlation_.find(kernel.correlation_id); it != by_correlation_.end()) {
      return Origin{it->second, 0, 0};
    }
  }
  return Origin{};
}

NvtxRangeLocator::NvtxRangeLocator(const Timeline& timeline) {
  for (const ThreadTimeline& t : timeline.threads()) {
    if (!t.ranges.empty()) ranges_by_thread_[t.thread] = &t.ranges;
  }
}

uint32_t NvtxRangeLocator::RangeAt(uint32_t thread, uint64_t time) const {
  auto it = ranges_by_thread_.find(thread);
  if (it == ranges_by_thread_.end()) return 0;
  const std::vector<NvtxRange>& ranges = *it->second;
  // Ranges by start: among those open at `time`, the latest to start is the innermost. The scan
  // back stops after a bounded number of ranges that ended before `time`.
  auto after = std::upper_bound(ranges.begin(), ranges.end(), time,
                                [](uint64_t t, const NvtxRange& r) { return t < r.begin; });
  constexpr int kMaxScan = 4096;
  int scanned = 0;
  while (after != ranges.begin() && scanned++ < kMaxScan) {
    --after;
    if (after->end >= time) return after->name;
  }
  return 0;
}

namespace {

// Children by name while the tree grows (the node's own children vector holds them).
struct Building {
  CallPathNode node;
  absl::flat_hash_map<std::string, size_t> child_of;
  std::vector<Building> kids;
};

void Finish(Building& b, CallPathNode* out) {
  *out = std::move(b.node);
  out->children.reserve(b.kids.size());
  for (Building& k : b.kids) {
    out->children.emplace_back();
    Finish(k, &out->children.back());
  }
  std::sort(out->children.begin(), out->children.end(), [](const CallPathNode& a, const CallPathNode& c) {
    return a.time_ns != c.time_ns ? a.time_ns > c.time_ns : a.name < c.name;
  });
}

}  // namespace

CallPathNode BuildCallPathTree(const Timeline& timeline, size_t max_nodes) {
  const core::Trace& trace = timeline.trace();
  const core::Dictionary& dict = trace.dict;
  const LaunchStackIndex stacks(trace);
  const KernelNameSet kernels = KernelNames(dict);
  Building root;
  root.node.name = "all kernels with a stack";
  size_t nodes = 1;
  // A stack's path (outermost first, to the launch site), built once per stack.
  absl::flat_hash_map<uint32_t, std::vector<std::string>> path_of;
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k) || !dict.has_signature(k.signature)) continue;
    const uint32_t stack = stacks.StackOf(k);
    if (stack == 0 || !dict.has_stack(stack)) continue;
    auto [path, inserted] = path_of.try_emplace(stack);
    if (inserted) {
      const v1::CallStack& s = dict.stack(stack);
      const uint32_t site = LaunchSiteFrame(dict, stack, kernels);
      int site_index = 0;
      while (site_index < s.frames_size() && s.frames(site_index) != site) ++site_index;
      // At most the collector's own bound of frames, the ones nearest the launch site: a damaged
      // trace's stack of any length must not make the tree (and its writers' recursion) as deep.
      const int bound = static_cast<int>(process::kMaxCallStackFrames + process::kMaxPythonFrames);
      const int outermost = std::min(s.frames_size() - 1, site_index + bound - 1);
      // With Python frames, the interpreter's own C frames between them are how Python ran, not
      // where: the path reads as the program's Python.
      const bool python = IsPythonFrame(dict, site);
      for (int i = outermost; i >= site_index; --i) {
        const uint32_t frame = s.frames(i);
        if (python && !IsPythonFrame(dict, frame) && IsPythonInterpreter(dict.str(dict.frame(frame).module()))) continue;
        path->second.push_back(FrameText(dict, frame));
      }
    }
    const uint64_t time = k.end > k.start ? k.end - k.start : 0;
    Building* at = &root;
    at->node.time_ns += time;
    ++at->node.launches;
    std::vector<std::string_view> names(path->second.begin(), path->second.end());
    const std::string kernel = core::ShortKernelName(dict.kernel_name(k.signature));
    names.push_back(kernel);
    for (std::string_view name : names) {
      auto it = at->child_of.find(absl::string_view(name.data(), name.size()));
      if (it == at->child_of.end()) {
        if (nodes >= max_nodes) break;  // folds into the deepest node there is
        ++nodes;
        it = at->child_of.emplace(std::string(name), at->kids.size()).first;
        at->kids.emplace_back();
        at->kids.back().node.name = std::string(name);
      }
      at = &at->kids[it->second];
      at->node.time_ns += time;
      ++at->node.launches;
    }
  }
  CallPathNode out;
  Finish(root, &out);
  return out;
}

}  // namespace cuscope::analysis
