// The ways in that need no code change: CUDA_INJECTION64_PATH and LD_PRELOAD.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "cuscope/export.h"
#include "lib/inject/process_hooks.h"

namespace {

// True when this library was named in LD_PRELOAD (by path or by file name).
bool LoadedByPreload() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return false;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadedByPreload), &info) == 0 || info.dli_fname == nullptr) return false;
  const std::string self = info.dli_fname;
  const std::string base = self.substr(self.find_last_of('/') + 1);
  std::string list = preload;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find_first_of(": ", pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    if (!item.empty() && (item == self || item.substr(item.find_last_of('/') + 1) == base)) return true;
    pos = end + 1;
  }
  return false;
}

__attribute__((constructor)) void StartWhenPreloaded() {
  if (LoadedByPreload()) cuscope::inject::StartFromEnvironmentOnce("preload");
}

}  // namespace

// Called by the CUDA driver at initialization when CUDA_INJECTION64_PATH names this library.
extern "C" CUSCOPE_EXPORT int InitializeInjection(void) {
  cuscope::inject::StartFromEnvironmentOnce("injection");
  return 1;
}
