// cuscope info: GPUs, driver, CUPTI and whether this user may read hardware counters.
#include <cstdio>
#include <string>

#include "lib/cli/commands.h"
#include "lib/cli/library_path.h"
#if CUSCOPE_HAVE_CUDA
#include "lib/cupti/device_info.h"
#endif

namespace cuscope::cli {

int RunInfo(const Args& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "usage: cuscope info\n");
    return args[0] == "--help" ? 0 : 2;
  }
  std::printf("cuscope 0.1.0 (trace format cuscope.v1)\n");
  std::printf("collector library: %s\n", CollectorLibraryPath().c_str());
#if CUSCOPE_HAVE_CUDA
  std::fputs(cupti::DescribeSystem(cupti::QuerySystem()).c_str(), stdout);
#else
  std::printf("GPU: unknown: this cuscope was built without the CUDA Toolkit (analysis only)\n");
#endif
  return 0;
}

}  // namespace cuscope::cli
