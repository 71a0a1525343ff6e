#include "lib/core/launch_glue.h"

namespace cuscope::core {

KernelNameSet KernelNames(const Dictionary& dict) {
  KernelNameSet names;
  for (uint32_t id = 1; id <= dict.signature_count(); ++id) {
    const std::string& name = dict.kernel_name(id);
    if (!name.empty()) names.insert(std::string_view(name));
  }
  return names;
}

bool IsLaunchGlueFunction(std::string_view function, const KernelNameSet& kernels) {
  return function.find("__device_stub__") != std::string_view::npos || kernels.contains(function);
}

}  // namespace cuscope::core
