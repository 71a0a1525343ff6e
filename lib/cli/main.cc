// cuscope: profile CUDA programs and read what they did.
#include <cstdio>
#include <cstring>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "lib/cli/command_catalog.h"
#include "lib/cli/commands.h"
#include "lib/core/output_file.h"

namespace {

constexpr const char kUsage[] =
    "usage: cuscope <command> [options]\n"
    "\n"
    "commands:\n"
    "  profile [options] -- PROGRAM [ARGS...]   run PROGRAM and record its CUDA timeline\n"
    "                                           (and kernel metrics with --metrics)\n"
    "  analyze TRACE                            say what holds the program back, with evidence\n"
    "  stats --report NAME[,NAME...] TRACE      summary tables (cuda_gpu_kern_sum, cuda_api_sum, ...)\n"
    "  report TRACE -o FILE.html                one self-contained HTML report: findings, timeline, roofline\n"
    "  diff BASE NEW (or BASE... -- NEW...)     did the change help? time, GPU busy, kernels, findings\n"
    "  log add --change TEXT BASE NEW | show    a tuning log of changes and their effect\n"
    "  dump TRACE                               print the records of a trace\n"
    "  export [--format F] TRACE -o FILE        a timeline for Perfetto (ui.perfetto.dev) or Chrome JSON\n"
    "  metrics [LIST]                           the metric sets and the ncu metric names behind them\n"
    "  capture --pid PID [--duration S] [--snapshot] -o NAME\n"
    "                                           a trace from a running process with cuscope inside\n"
    "  status --pid PID                         what such a process is doing: mode, live figures\n"
    "  attach --pid PID [--mode M] [--duration S]  load cuscope into a running process that started\n"
    "                                           without it; detach --pid PID ends its session\n"
    "  ps                                       this user's processes with cuscope inside\n"
    "  info                                     GPUs, driver, CUPTI and counter permissions\n"
    "  completion bash|zsh                      print a shell completion script\n"
    "  man                                      print the manual page, cuscope(1)\n"
    "  version                                  print the version\n"
    "\n"
    "'cuscope help <command>' or 'cuscope <command> --help' describes a command's options.\n";

// Runs `command` with `args`; -1 when there is no such command.
int RunCommand(const std::string& command, const cuscope::cli::Args& args) {
  if (command == "--version") return cuscope::cli::RunVersion(args);
  const cuscope::cli::Command* found = cuscope::cli::FindCommand(command);
  return found != nullptr ? found->run(args) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  // A damaged trace is reported by the reader in one line; protobuf's own log lines about the
  // same bytes ("[libprotobuf ERROR ...] String field contains invalid UTF-8") would only bury it.
  google::protobuf::SetLogHandler(nullptr);
  // An export or report stopped by Ctrl-C or kill leaves no partial file behind.
  cuscope::core::RemovePartialOutputsOnSignals();
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      (std::strcmp(argv[1], "help") == 0 && argc == 2)) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  // `cuscope help COMMAND` is `cuscope COMMAND --help`.
  const bool help = std::strcmp(argv[1], "help") == 0;
  const std::string command = help ? argv[2] : argv[1];
  const cuscope::cli::Args args = help ? cuscope::cli::Args{"--help"} : cuscope::cli::Args(argv + 2, argv + argc);
  if (help && argc > 3) {
    std::fprintf(stderr, "cuscope: help takes one command\n%s", kUsage);
    return 2;
  }
  const int status = RunCommand(command, args);
  if (status >= 0) return status;
  std::fprintf(stderr, "cuscope: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 2;
}
