// The ways in that need no code change: CUDA_INJECTION64_PATH and LD_PRELOAD.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
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

// This library's file, made absolute (the driver may load it after the program changed directory).
std::string OwnPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnPath), &info) == 0 || info.dli_fname == nullptr) return "";
  char resolved[PATH_MAX];
  return ::realpath(info.dli_fname, resolved) != nullptr ? std::string(resolved) : std::string(info.dli_fname);
}

bool SameFile(const char* a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a, &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Set when LD_PRELOAD brought the library in and it left the start to the driver's injection hook.
std::atomic<bool> g_waiting_for_driver{false};

// Under LD_PRELOAD the library stays dormant until the process uses CUDA: it names itself in
// CUDA_INJECTION64_PATH, which the driver reads at cuInit to load the library and call
// InitializeInjection. A process that never initializes CUDA (a shell, a launcher script) sees no
// thread, no file and no line of cuscope's. Children inherit both variables: each that uses CUDA
// starts a session of its own (name outputs with %p). Only when CUDA_INJECTION64_PATH already
// names another tool's library does cuscope start at once, as that hook is taken.
__attribute__((constructor)) void StartWhenPreloaded() {
  if (!LoadedByPreload()) return;
  const std::string self = OwnPath();
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if ((injection == nullptr || *injection == '\0') && !self.empty()) {
    ::setenv("CUDA_INJECTION64_PATH", self.c_str(), 1);
    g_waiting_for_driver.store(true);
    return;
  }
  if (injection != nullptr && SameFile(injection, self)) {
    g_waiting_for_driver.store(true);
    return;
  }
  cuscope::inject::StartFromEnvironmentOnce("preload");
}

}  // namespace

// Called by the CUDA driver at initialization when CUDA_INJECTION64_PATH names this library.
extern "C" CUSCOPE_EXPORT int InitializeInjection(void) {
  cuscope::inject::StartFromEnvironmentOnce(g_waiting_for_driver.load() ? "preload" : "injection");
  return 1;
}
