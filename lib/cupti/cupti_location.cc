#include "lib/cupti/cupti_location.h"

#include <dlfcn.h>

#include <cupti.h>

namespace cuscope::cupti {

std::string LoadedCuptiLibraryPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

}  // namespace cuscope::cupti
