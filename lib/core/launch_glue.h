// The host code nvcc writes for `kernel<<<...>>>`: the kernel's host-side wrapper, which bears the
// kernel's own mangled name, and its stub (`__device_stub__...`, mangled too:
// _Z30__device_stub__Z9tiny_stepPjiiPjii). Both sit in the program's module but say how a launch
// was made, not where from: the launch-site analysis passes over their frames and the source-line
// reader over their inlined code.
#ifndef CUSCOPE_LIB_CORE_LAUNCH_GLUE_H_
#define CUSCOPE_LIB_CORE_LAUNCH_GLUE_H_

#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "lib/core/dictionary.h"

namespace cuscope::core {

// The names of a trace's kernels (mangled, as CUDA reports them); views into `dict`.
using KernelNameSet = absl::flat_hash_set<std::string_view>;
KernelNameSet KernelNames(const Dictionary& dict);

// Whether a function symbol is nvcc's launch code for one of `kernels`: its wrapper or its stub.
bool IsLaunchGlueFunction(std::string_view function, const KernelNameSet& kernels);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_LAUNCH_GLUE_H_
