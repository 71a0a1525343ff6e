// cuscope info: GPUs, driver, CUPTI and whether this user may read hardware counters.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "lib/cli/commands.h"
#include "lib/cli/library_path.h"

namespace cuscope::cli {

int RunInfo(const Args& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "usage: cuscope info\n");
    return args[0] == "--help" ? 0 : 2;
  }
  std::printf("cuscope 0.1.0 (trace format cuscope.v1)\n");
  const std::string lib = CollectorLibraryPath();
  std::printf("collector library: %s\n", lib.c_str());
  // The collector library holds the CUPTI and driver code; loading it here keeps this command
  // usable on machines with no CUDA at all.
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::printf("GPU: unknown: the collector library cannot be loaded (%s)\n", dlerror());
    return 0;
  }
  using Describe = size_t (*)(char*, size_t);
  auto describe = reinterpret_cast<Describe>(dlsym(handle, "cuscope_describe_system"));
  if (describe == nullptr) {
    std::printf("GPU: unknown: %s does not export cuscope_describe_system\n", lib.c_str());
    return 0;
  }
  std::string text(describe(nullptr, 0) + 1, '\0');
  describe(text.data(), text.size());
  text.resize(text.size() - 1);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace cuscope::cli
