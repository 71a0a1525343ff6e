// cuscope info: GPUs, driver, CUPTI and whether this user may read hardware counters; the
// libraries call stacks use (libunwind when they are taken, libdw when they are read).
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/library_path.h"
#include "lib/process/call_stack.h"
#include "lib/symbolize/libdw.h"
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
  // Whether this machine has them: loading libunwind here changes nothing for a program.
  const absl::Status unwinder = process::UseLibunwind();
  process::UseLibgcc();
  std::printf("call stacks (--stacks): %s\n",
              unwinder.ok() ? "libunwind's unwinder (libunwind.so.8)" : std::string(unwinder.message()).c_str());
  std::printf("native source lines: %s\n", symbolize::LoadLibdw().loaded()
                                                ? "read with elfutils' libdw.so.1"
                                                : "none: elfutils' libdw.so.1 is missing (Debian and Ubuntu: libdw1)");
  return 0;
}

}  // namespace cuscope::cli
