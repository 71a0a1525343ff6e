// `cuscope profile` options, turned into the CUSCOPE_* environment the collector reads in the
// profiled program. Pure: tested without running anything.
#ifndef CUSCOPE_LIB_CLI_PROFILE_OPTIONS_H_
#define CUSCOPE_LIB_CLI_PROFILE_OPTIONS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::cli {

struct ProfilePlan {
  std::map<std::string, std::string> env;  // CUSCOPE_* settings for the program
  std::vector<std::string> program;        // argv of the program
  // What the program is not told but the user should be, one line each (nsys's -t names mapped).
  std::vector<std::string> notes;
  bool help = false;
};

extern const char kProfileUsage[];

absl::StatusOr<ProfilePlan> ParseProfileArgs(const std::vector<std::string>& args);

// Each profile option's long name and the CUSCOPE_* variable it sets (the man page's ENVIRONMENT).
std::vector<std::pair<std::string, std::string>> ProfileOptionVariables();

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_PROFILE_OPTIONS_H_
