// cuscope version: the version line, also the first line of `cuscope info`.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/cli/commands.h"
#include "lib/core/version.h"

namespace cuscope::cli {

std::string VersionLine() { return absl::StrCat("cuscope ", core::kVersion, " (trace format cuscope.v1)\n"); }

int RunVersion(const Args& args) {
  std::fputs(VersionLine().c_str(), stdout);
  return 0;
}

}  // namespace cuscope::cli
