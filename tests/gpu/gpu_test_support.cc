#include "tests/gpu/gpu_test_support.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include <gtest/gtest.h>

namespace cuscope::testing {

bool HaveGpu() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return false;
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  return init != nullptr && count != nullptr && init(0) == 0 && count(&n) == 0 && n > 0;
}

CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::map<std::string, std::string> ParseKeyValues(const std::string& output) {
  std::map<std::string, std::string> kv;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

std::string BuildDirOfThisExecutable() {
  char exe[4096] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir(exe, n > 0 ? static_cast<size_t>(n) : 0);
  dir = dir.substr(0, dir.find_last_of('/'));
  return dir.substr(0, dir.find_last_of('/'));
}

std::string TempTracePath(const std::string& stem) {
  std::string path = ::testing::TempDir() + "/" + stem + "_" + std::to_string(::getpid()) + ".cuscope";
  ::unlink(path.c_str());
  return path;
}

const std::string& BuildTree::Dir() {
  static const std::string* dir = new std::string(BuildDirOfThisExecutable());
  return *dir;
}
std::string BuildTree::Cli() { return Dir() + "/bin/cuscope"; }
std::string BuildTree::Library() { return Dir() + "/lib/libcuscope.so"; }
std::string BuildTree::Bin(const std::string& name) { return Dir() + "/bin/" + name; }
std::string BuildTree::Example(const std::string& name) { return Dir() + "/examples/example_" + name; }

}  // namespace cuscope::testing
