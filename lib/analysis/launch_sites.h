// Where kernels were launched from: the call stacks sampled at launch (CUSCOPE_STACKS), joined to
// the kernels by correlation id, and each stack's launch site, the frame a person reads first.
#ifndef CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_
#define CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/core/dictionary.h"
#include "lib/core/launch_glue.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {

// Whether a module (a path) is one of the CUDA libraries a launch passes through on its way to the
// GPU: the runtime, the driver, CUPTI, the math and communication libraries, cuscope itself. Their
// frames are how a kernel was launched, not where from.
bool IsCudaLibrary(std::string_view module);

// Whether a Python source file is installed or generated code (site-packages, dist-packages, the
// standard library, frozen modules, torch.compile's and FX's generated code) rather than the
// program's own.
bool IsPythonLibraryFile(std::string_view file);

// Whether a frame is a Python one (its source file is also its module).
bool IsPythonFrame(const core::Dictionary& dict, uint32_t frame);

// One frame as a person reads it: "function (module)", the function's short demangled name, or
// "module+0xOFFSET" when no symbol was found; a Python frame "qualified.name (file.py:LINE)"; a
// native frame whose line was read from its module (lib/symbolize) "function (file.cc:LINE)".
std::string FrameText(const core::Dictionary& dict, uint32_t frame);

// The names of a trace's kernels (mangled, as CUDA reports them), for IsLaunchGlue.
using core::KernelNames;
using core::KernelNameSet;

// Whether a native frame is the host code nvcc writes for a launch (`kernel<<<...>>>`): the
// kernel's host-side wrapper, which bears the kernel's own mangled name (one of `kernels`); its
// `__device_stub__` function; or code whose source line lies in the CUDA Toolkit's launch headers
// (crt/device_functions.h and the like, where the stub inlined into the wrapper calls
// cudaLaunchKernel). It sits in the program's own module but says how the launch was made, not
// where from: the line that wrote `<<<...>>>` is the frame outside it.
bool IsLaunchGlue(const core::Dictionary& dict, uint32_t frame, const KernelNameSet& kernels);

// The launch site of a call stack: with Python frames, the innermost one in the program's own files
// (the innermost Python frame when all are installed code); else its innermost frame outside the
// CUDA libraries and the launch glue (IsLaunchGlue; the innermost frame when all are inside them).
// 0 for an unknown stack.
uint32_t LaunchSiteFrame(const core::Dictionary& dict, uint32_t stack, const KernelNameSet& kernels);

class Timeline;
struct NvtxRange;

// Each kernel's call stack: its launch's (by correlation id), or for a kernel a CUDA graph ran, the
// stack that created its node (following the clones instantiation made).
class LaunchStackIndex {
 public:
  explicit LaunchStackIndex(const core::Trace& trace) : LaunchStackIndex(trace.launch_stacks, trace.graph_nodes) {}
  LaunchStackIndex(const std::vector<core::LaunchStackRow>& launch_stacks,
                   const std::vector<core::GraphNodeRow>& graph_nodes);
  // Where a kernel's launch came from: its stack (0 when none was taken) and, for a kernel a CUDA
  // graph ran, the host thread and time its node was created (0 for a direct launch: its launch
  // call says).
  struct Origin {
    uint32_t stack = 0;
    uint32_t thread = 0;  // dictionary thread id
    uint64_t time = 0;
  };
  Origin OriginOf(const core::KernelRow& kernel) const;
  uint32_t StackOf(const core::KernelRow& kernel) const { return OriginOf(kernel).stack; }
  bool empty() const { return by_correlation_.empty() && by_node_.empty(); }

  // Clone chains longer than this are not followed (a damaged trace could make a cycle).
  static constexpr int kMaxCloneHops = 16;

 private:
  absl::flat_hash_map<uint64_t, uint32_t> by_correlation_;
  absl::flat_hash_map<uint64_t, Origin> by_node_;
  absl::flat_hash_map<uint64_t, uint64_t> original_of_;
};

// The innermost NVTX range open on a host thread at a time (its name's string id; 0: none).
class NvtxRangeLocator {
 public:
  explicit NvtxRangeLocator(const Timeline& timeline);
  uint32_t RangeAt(uint32_t thread, uint64_t time) const;

 private:
  absl::flat_hash_map<uint32_t, const std::vector<NvtxRange>*> ranges_by_thread_;
};

// GPU time by call path, for a flame graph: from the outermost frame of each kernel's stack down to
// its launch site, then the kernel (its short name) as the leaf. Children are ordered by time,
// most first. CUDA-library frames below the launch site are left out (they are how, not where).
struct CallPathNode {
  std::string name;
  uint64_t time_ns = 0;
  uint64_t launches = 0;
  std::vector<CallPathNode> children;
};

// The root holds the GPU time of every kernel with a stack on the timeline. At most `max_nodes`
// nodes: paths past that fold into their deepest existing node.
CallPathNode BuildCallPathTree(const Timeline& timeline, size_t max_nodes = 4000);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_
