// Expansion of output file name patterns, as nsys users know them.
#ifndef CUSCOPE_LIB_CORE_OUTPUT_NAME_H_
#define CUSCOPE_LIB_CORE_OUTPUT_NAME_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace cuscope::core {

struct OutputNameContext {
  uint32_t pid = 0;
  std::string host;
  // Looks up an environment variable for %q{NAME}; nullopt when unset.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // Whether a file of that name exists, for %n.
  std::function<bool(const std::string&)> exists;
};

// Expands %p, %h, %r (the rank in a distributed job, launch_place.h; "p<pid>" outside one), %n,
// %q{VAR} and %%; appends ".cuscope" unless the name already ends with it.
// An unknown escape or an unset %q variable is an error that names it.
absl::StatusOr<std::string> ExpandOutputName(const std::string& pattern, const OutputNameContext& ctx);

// The context of this process: getpid, gethostname, getenv, stat.
OutputNameContext CurrentProcessOutputContext();

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_OUTPUT_NAME_H_
