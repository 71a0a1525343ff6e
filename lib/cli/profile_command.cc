// cuscope profile: run a program with the collector injected.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lib/cli/commands.h"
#include "lib/cli/library_path.h"
#include "lib/cli/profile_options.h"
#include "lib/core/output_name.h"

namespace cuscope::cli {

int RunProfile(const Args& args) {
  auto plan = ParseProfileArgs(args);
  if (!plan.ok()) {
    // One line, as every other command says a mistake: 80 lines of usage would bury it.
    std::fprintf(stderr, "cuscope: %s\n(cuscope profile --help lists the options)\n",
                 std::string(plan.status().message()).c_str());
    return 2;
  }
  if (plan->help) {
    std::fputs(kProfileUsage, stdout);
    return 0;
  }
  if (!plan->env.count("CUSCOPE_QUIET")) {
    for (const std::string& note : plan->notes) std::fprintf(stderr, "cuscope: %s\n", note.c_str());
  }
  const std::string lib = CollectorLibraryPath();
  if (::access(lib.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "cuscope: collector library %s not found (set CUSCOPE_LIBRARY)\n", lib.c_str());
    return 2;
  }
  // A name without per-process parts can be checked now, before the program runs.
  const auto out = plan->env.count("CUSCOPE_OUTPUT") ? plan->env["CUSCOPE_OUTPUT"] : std::string("cuscope_%p");
  const auto overwrite = plan->env.find("CUSCOPE_FORCE_OVERWRITE");
  if (out.find('%') == std::string::npos && (overwrite == plan->env.end() || overwrite->second != "1")) {
    auto name = core::ExpandOutputName(out, core::CurrentProcessOutputContext());
    if (name.ok() && ::access(name->c_str(), F_OK) == 0) {
      std::fprintf(stderr, "cuscope: output file %s already exists (use --force-overwrite to replace it)\n",
                   name->c_str());
      return 2;
    }
  }
  // The driver loads the collector; without a driver nothing would, and nothing would say so.
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL); driver == nullptr) {
    if (!plan->env.count("CUSCOPE_QUIET")) {
      std::fprintf(stderr, "cuscope: no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded); running %s unprofiled\n",
                   plan->program[0].c_str());
    }
  } else {
    dlclose(driver);
  }

  std::vector<char*> argv;
  for (auto& a : plan->program) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "cuscope: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    // The settings reach the program only, not this process.
    for (const auto& [k, v] : plan->env) setenv(k.c_str(), v.c_str(), 1);
    setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "cuscope: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  // The terminal's interrupt reaches the program too; let it decide, and report how it ended.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 2;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 2;
}

}  // namespace cuscope::cli
