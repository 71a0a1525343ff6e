#include "lib/cli/command_catalog.h"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

namespace cuscope::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"profile", RunProfile, "run PROGRAM and record its CUDA timeline (and kernel metrics with --metrics)"},
      {"analyze", RunAnalyze, "say what holds the program back, with evidence"},
      {"stats", RunStats, "summary tables (cuda_gpu_kern_sum, cuda_api_sum, ...)"},
      {"report", RunReport, "one self-contained HTML report: findings, timeline, roofline"},
      {"diff", RunDiff, "did the change help? time, GPU busy, kernels, findings"},
      {"log", RunLog, "a tuning log of changes and their effect"},
      {"dump", RunDump, "print the records of a trace"},
      {"export", RunExport, "a timeline for Perfetto (ui.perfetto.dev) or Chrome JSON, or an SQLite database"},
      {"metrics", RunMetrics, "the metric sets and the ncu metric names behind them"},
      {"capture", RunCapture, "a trace from a running process with cuscope inside"},
      {"status", RunStatus, "what such a process is doing: mode, live figures"},
      {"attach", RunAttach, "load cuscope into a running process that started without it"},
      {"detach", RunDetach, "end the cuscope session of a running process"},
      {"ps", RunPs, "this user's processes with cuscope inside"},
      {"info", RunInfo, "GPUs, driver, CUPTI and counter permissions"},
      {"completion", RunCompletion, "print a shell completion script (bash or zsh)"},
      {"man", RunMan, "print the manual page, cuscope(1)"},
      {"version", RunVersion, "print the version"},
  };
  return commands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& command : Commands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

namespace {

// Runs `run` with stdout and stderr going to a temporary file; returns what it wrote there.
std::string CaptureOutput(const std::function<void()>& run) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::FILE* capture = std::tmpfile();
  if (capture == nullptr) {
    run();
    return "";
  }
  const int saved_out = dup(STDOUT_FILENO);
  const int saved_err = dup(STDERR_FILENO);
  dup2(fileno(capture), STDOUT_FILENO);
  dup2(fileno(capture), STDERR_FILENO);
  run();
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, STDOUT_FILENO);
  dup2(saved_err, STDERR_FILENO);
  close(saved_out);
  close(saved_err);
  std::string text;
  std::rewind(capture);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture)) > 0;) text.append(buffer, n);
  std::fclose(capture);
  return text;
}

}  // namespace

std::vector<CommandDescription> DescribeCommands() {
  std::vector<CommandDescription> descriptions;
  for (const Command& command : Commands()) {
    CommandDescription description{command.name, command.summary, "", {}, false};
    const std::string name = command.name;
    if (name == "version") {
      // It takes no arguments and prints the version whatever it is given.
      description.usage = "usage: cuscope version\n";
      descriptions.push_back(std::move(description));
      continue;
    }
    // `log` reads its action first; its options belong to both actions.
    const Args help = name == "log" ? Args{"add", "--help"} : Args{"--help"};
    DeclarationRecorder recorder([&description](const ArgumentParser& parser) {
      description.takes_positional = description.takes_positional || parser.TakesPositionalArguments();
      for (ArgumentParser::Declaration& declared : parser.Declarations()) {
        // --top-down and --top-down=N are two declarations of one name: one entry says both.
        bool known = false;
        for (ArgumentParser::Declaration& option : description.options) {
          if (option.names != declared.names) continue;
          known = true;
          if (!declared.description.empty()) option.description += "; " + declared.description;
        }
        if (!known) description.options.push_back(std::move(declared));
      }
    });
    description.usage = CaptureOutput([&] { command.run(help); });
    descriptions.push_back(std::move(description));
  }
  return descriptions;
}

}  // namespace cuscope::cli
