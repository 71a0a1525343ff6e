// cuscope info: GPUs, driver, CUPTI and whether this user may read hardware counters.
#include <cstdio>
#include <string>

#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/library_path.h"
#if CUSCOPE_HAVE_CUDA
#include "lib/cupti/device_info.h"
#endif

namespace cuscope::cli {

int RunInfo(const Args& args) {
  // No options: the usage goes to stderr, asked for (--help, exit 0) or not (anything else, 2).
  absl::StatusOr<ParsedArguments> parsed = ArgumentParser().HelpNames({"--help"}).Parse(args);
  if (!parsed.ok() || parsed->help) {
    std::fprintf(stderr, "usage: cuscope info\n");
    return parsed.ok() ? 0 : 2;
  }
  std::fputs(VersionLine().c_str(), stdout);
  std::printf("collector library: %s\n", CollectorLibraryPath().c_str());
#if CUSCOPE_HAVE_CUDA
  std::fputs(cupti::DescribeSystem(cupti::QuerySystem()).c_str(), stdout);
#else
  std::printf("GPU: unknown: this cuscope was built without the CUDA Toolkit (analysis only)\n");
#endif
  return 0;
}

}  // namespace cuscope::cli
