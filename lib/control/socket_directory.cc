#include "lib/control/socket_directory.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace cuscope::control {
namespace {

constexpr char kSuffix[] = ".sock";

// The user's private run-time directory, when the environment names a usable one.
std::string RuntimeDirectory() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg == nullptr || xdg[0] != '/') return "";
  struct stat st;
  if (::stat(xdg, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) return "";
  return xdg;
}

}  // namespace

absl::Status PrepareDirectory(const std::string& directory, bool create) {
  if (create && ::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", directory, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (::lstat(directory.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(directory, " does not exist"));
    return absl::FailedPreconditionError(absl::StrCat("cannot read ", directory, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(directory, " is not a directory"));
  if (st.st_uid != ::getuid()) {
    return absl::FailedPreconditionError(absl::StrCat(directory, " belongs to user ", st.st_uid, ", not to this one"));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(directory, " may be entered by other users (mode ", absl::StrFormat("%o", st.st_mode & 0777),
                     "); it must be 700"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ControlDirectory(bool create) {
  const std::string runtime = RuntimeDirectory();
  const std::string directory =
      runtime.empty() ? absl::StrCat("/tmp/cuscope-", ::getuid()) : absl::StrCat(runtime, "/cuscope");
  if (auto st = PrepareDirectory(directory, create); !st.ok()) return st;
  return directory;
}

std::string SocketPath(const std::string& directory, pid_t pid) { return absl::StrCat(directory, "/", pid, kSuffix); }

std::vector<pid_t> SocketPids(const std::string& directory) {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return pids;
  while (const dirent* e = ::readdir(dir)) {
    absl::string_view name = e->d_name;
    int pid = 0;
    if (absl::ConsumeSuffix(&name, kSuffix) && absl::SimpleAtoi(name, &pid) && pid > 0) pids.push_back(pid);
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

int RemoveStaleSockets(const std::string& directory) {
  int removed = 0;
  for (pid_t pid : SocketPids(directory)) {
    if (!ProcessExists(pid) && ::unlink(SocketPath(directory, pid).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace cuscope::control
