#include "lib/cli/library_path.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

namespace cuscope::cli {

std::string CollectorLibraryPath() {
  if (const char* env = std::getenv("CUSCOPE_LIBRARY"); env != nullptr && *env != '\0') return env;
  char exe[PATH_MAX] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "libcuscope.so";
  std::string dir(exe, static_cast<size_t>(n));
  dir = dir.substr(0, dir.find_last_of('/'));
  return dir + "/../lib/libcuscope.so";
}

}  // namespace cuscope::cli
