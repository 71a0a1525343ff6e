// cuscope attach --pid PID [--mode monitor|flight|trace] [--duration S] [-o NAME] [-f]
// cuscope detach --pid PID
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "lib/attach/attach_policy.h"
#include "lib/attach/injector.h"
#include "lib/attach/process_facts.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/control_target.h"
#include "lib/cli/library_path.h"
#include "lib/control/control_client.h"
#include "lib/core/output_name.h"
#include "lib/core/terminal_text.h"

namespace cuscope::cli {
namespace {

constexpr const char kAttachUsage[] =
    "usage: cuscope attach --pid PID [--mode monitor|flight|trace] [--duration S] [-o NAME] [-f]\n"
    "                      [--prometheus [ADDRESS:]PORT]\n"
    "\n"
    "Loads cuscope into a running process that started without it and starts a session there, as if it had\n"
    "started with cuscope inside: then cuscope status, capture and ps work on it. One of its threads, waiting in\n"
    "a system call, runs the C library's dlopen for about a millisecond; the rest of the process runs on.\n"
    "Records of what the process did before are not there: the trace says when the session began and that it\n"
    "was attached. Refused, with the reason: a process of another user (without CAP_SYS_PTRACE), one the\n"
    "kernel's Yama setting keeps from this user, one being debugged, one statically linked or under seccomp,\n"
    "one that never used CUDA, one with cuscope or another CUDA injection tool inside.\n"
    "  --pid PID        the process\n"
    "  --mode M         monitor (default: figures per interval, always on), flight (the last seconds in\n"
    "                   memory, for cuscope capture --snapshot) or trace (every record to the file)\n"
    "  --duration S     end the session after S seconds (this command waits, then detaches); without it\n"
    "                   the session runs until cuscope detach or the process's end\n"
    "  -o, --output NAME  the file, relative to this directory (default attach_%p): %p the process id\n"
    "  -f, --force-overwrite [true|false]  replace an existing file\n"
    "  --prometheus [ADDRESS:]PORT  monitor mode: serve the figures on /metrics\n";

constexpr const char kDetachUsage[] =
    "usage: cuscope detach --pid PID\n"
    "\n"
    "Ends the cuscope session of a running process (one attached, or started with cuscope inside): it writes\n"
    "what it holds and goes on without profiling. The library stays loaded, dormant; cuscope attach starts a\n"
    "new session later.\n";

// The outcome the attached session wrote ("ok PATH" or why not), waited for at most `seconds`.
absl::StatusOr<std::string> WaitForOutcome(const std::string& path, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      return std::string(absl::StripTrailingAsciiWhitespace(text.str()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("the process did not say within ", seconds,
                                                  " s whether its session started (see its stderr)"));
}

// Asks the process to end its session and waits until its control socket is gone.
absl::Status Detach(const ControlTarget& target, double wait_seconds) {
  v1::ControlRequest request;
  request.mutable_detach();
  auto reply = control::AskProcess(target.directory, target.pid, request, std::chrono::milliseconds(5000));
  if (!reply.ok()) return reply.status();
  if (!reply->error().empty()) return absl::FailedPreconditionError(reply->error());
  v1::ControlRequest ask;
  ask.mutable_status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    auto status = control::AskProcess(target.directory, target.pid, ask, std::chrono::milliseconds(1000));
    if (!status.ok() || !status->error().empty()) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("process ", target.pid, " still answers after ", wait_seconds, " s: its session is still ending"));
}

// What the command line asks for; the parser's actions write into it after the declaring function
// has returned, so it must outlive the parse.
struct AttachOptions {
  std::string pid_text, output = "attach_%p", mode = "monitor", prometheus;
  double duration = 0;
  bool force = false;
};

void DeclareAttachOptions(ArgumentParser& parser, AttachOptions& o) {
  parser.UnknownOptionMessage(UnknownOptionOf("attach"));
  parser.Option(
      {"--pid", "-p"}, "--pid takes a process id",
      [&](const std::string& v) {
        o.pid_text = v;
        return absl::OkStatus();
      },
      "the process");
  parser.Option(
      {"--mode"}, "--mode takes monitor, flight or trace",
      [&](const std::string& v) {
        if (v != "monitor" && v != "flight" && v != "trace") {
          return absl::InvalidArgumentError(absl::StrCat("--mode takes monitor, flight or trace, not '", v, "'"));
        }
        o.mode = v;
        return absl::OkStatus();
      },
      "monitor (default: figures per interval), flight (the last seconds in memory) or trace (every record to the "
      "file)");
  parser.Option(
      {"--duration", "-d"}, "--duration takes seconds",
      [&](const std::string& v) {
        if (!absl::SimpleAtod(v, &o.duration) || !(o.duration > 0) || o.duration > 86400 * 365) {
          return absl::InvalidArgumentError(absl::StrCat("--duration takes seconds above 0, not '", v, "'"));
        }
        return absl::OkStatus();
      },
      "end the session after S seconds (this command waits, then detaches)");
  parser.Option(
      {"--output", "-o"}, "--output takes a file name",
      [&](const std::string& v) {
        o.output = v;
        return absl::OkStatus();
      },
      "the file, relative to this directory (default attach_%p): %p the process id");
  parser.Option(
      {"--prometheus"}, "--prometheus takes [ADDRESS:]PORT",
      [&](const std::string& v) {
        o.prometheus = v;
        return absl::OkStatus();
      },
      "monitor mode: serve the figures on /metrics at [ADDRESS:]PORT");
  parser.Switch(
      {"--force-overwrite", "-f"},
      [&](bool on) {
        o.force = on;
        return absl::OkStatus();
      },
      "replace an existing file");
}

// Never twice: a session that answers on its control socket is running already.
absl::Status CheckNoSession(const ControlTarget& target) {
  v1::ControlRequest ask;
  ask.mutable_status();
  auto running = control::AskProcess(target.directory, target.pid, ask, std::chrono::milliseconds(2000));
  if (running.ok() && running->error().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("attach: process ", target.pid, " already has a cuscope session (",
                                                      running->status().mode(), " mode, ", running->status().entry(),
                                                      "): cuscope status --pid ", target.pid, "; cuscope detach --pid ",
                                                      target.pid, " ends it"));
  }
  return absl::OkStatus();
}

// The settings file the library reads to start its session: the only way to hand it options, since
// the process's environment was fixed when it started.
absl::Status WriteSessionSettings(const std::string& settings, const AttachOptions& o, const std::string& path) {
  std::ofstream out(settings, std::ios::trunc);
  out << "CUSCOPE_MODE=" << o.mode << "\n"
      << "CUSCOPE_OUTPUT=" << path << "\n"
      << "CUSCOPE_FORCE_OVERWRITE=" << (o.force ? "1" : "0") << "\n";
  if (!o.prometheus.empty()) out << "CUSCOPE_PROMETHEUS=" << o.prometheus << "\n";
  if (!out) return absl::InternalError(absl::StrCat("attach: cannot write ", settings));
  return absl::OkStatus();
}

// Loads the library into the process and runs its entry. On failure the settings file is removed
// (no session will read it) and the error says what state the process was left in.
absl::StatusOr<attach::InjectReport> InjectSessionLibrary(const attach::ProcessFacts& facts, const std::string& library,
                                                          const std::string& settings, pid_t pid) {
  attach::InjectOptions inject;
  inject.thread.waiting = [pid](long seconds) {
    std::fprintf(stderr, "cuscope: attach: still waiting for process %d's thread to return from loading cuscope "
                 "(another %ld s); it is not abandoned half way\n", pid, seconds);
  };
  auto injected = attach::InjectLibrary(facts, library, "cuscope_attach", settings, inject);
  if (!injected.ok()) {
    (void)::unlink(settings.c_str());
    return absl::Status(injected.status().code(), absl::StrCat("attach: ", injected.status().message(), "; process ",
                                                               pid, " goes on as it was"));
  }
  if (injected->entry_result != 0) {
    (void)::unlink(settings.c_str());
    return absl::FailedPreconditionError(absl::StrCat("attach: cuscope could not start a thread in process ", pid,
                                                      "; it stays loaded there, dormant"));
  }
  return injected;
}

}  // namespace

int RunAttach(const Args& args) {
  AttachOptions o;
  ArgumentParser parser;
  DeclareAttachOptions(parser, o);
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kAttachUsage)) return *exit;
  auto target = ResolveControlTarget(o.pid_text, "attach", /*create=*/true);
  if (!target.ok()) return PrintError(target.status().message());
  if (!o.prometheus.empty() && o.mode != "monitor") return PrintError("attach: --prometheus needs --mode monitor");

  auto facts = attach::ReadProcessFacts(target->pid);
  if (!facts.ok()) return PrintError(absl::StrCat("attach: ", facts.status().message()));
  if (absl::Status st = attach::CheckAttachable(*facts, attach::CurrentCaller(target->pid)); !st.ok()) {
    return PrintError(absl::StrCat("attach: ", st.message()));
  }
  if (absl::Status st = CheckNoSession(*target); !st.ok()) return PrintError(st.message());
  // The library the process has already (linked, or attached before and dormant), else ours.
  std::string library = facts->MappedFile("libcuscope.so");
  if (library.empty()) library = CollectorLibraryPath();
  if (library.empty()) return PrintError("attach: libcuscope.so not found beside cuscope (CUSCOPE_LIBRARY names it)");
  auto path = TargetOutputPath(o.output, target->pid);
  if (!path.ok()) return PrintError(absl::StrCat("attach: ", path.status().message()));

  // The settings, in this user's 0700 control directory, for the session the library starts.
  const std::string settings = absl::StrCat(target->directory, "/attach-", target->pid, ".settings");
  const std::string result = settings + ".result";
  (void)::unlink(result.c_str());
  if (absl::Status st = WriteSessionSettings(settings, o, *path); !st.ok()) return PrintError(st.message());
  auto injected = InjectSessionLibrary(*facts, library, settings, target->pid);
  if (!injected.ok()) return PrintError(injected.status().message());
  auto outcome = WaitForOutcome(result, 30);
  (void)::unlink(settings.c_str());
  (void)::unlink(result.c_str());
  if (!outcome.ok()) return PrintError(absl::StrCat("attach: ", outcome.status().message()));
  absl::string_view said = *outcome;
  if (!absl::ConsumePrefix(&said, "ok ")) {
    return PrintError(absl::StrCat("attach: process ", target->pid, " did not start a session: ", said,
                                   "; cuscope stays loaded there, dormant"));
  }
  std::fprintf(stderr,
               "cuscope: attached to process %d (%s) in %s mode%s; thread %d was stopped for %.3f ms; cuscope status "
               "--pid %d shows it, cuscope detach --pid %d ends it\n",
               target->pid, core::EscapeForTerminal(facts->name).c_str(), o.mode.c_str(),
               said.empty() ? "" : absl::StrCat(", writing ", core::EscapeForTerminal(std::string(said))).c_str(),
               injected->thread, injected->stopped_ns / 1e6, target->pid, target->pid);
  if (o.duration <= 0) return 0;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
  if (absl::Status st = Detach(*target, 60); !st.ok()) return PrintError(absl::StrCat("attach: ", st.message()));
  std::fprintf(stderr, "cuscope: detached from process %d after %g s\n", target->pid, o.duration);
  return 0;
}

int RunDetach(const Args& args) {
  std::string pid_text;
  ArgumentParser parser;
  parser.UnknownOptionMessage(UnknownOptionOf("detach"));
  parser.Option(
      {"--pid", "-p"}, "--pid takes a process id",
      [&](const std::string& v) {
        pid_text = v;
        return absl::OkStatus();
      },
      "the process");
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kDetachUsage)) return *exit;
  auto target = ResolveControlTarget(pid_text, "detach");
  if (!target.ok()) return PrintError(target.status().message());
  if (absl::Status st = Detach(*target, 60); !st.ok()) return PrintError(absl::StrCat("detach: ", st.message()));
  std::fprintf(stderr, "cuscope: the session of process %d ended; cuscope stays loaded there, dormant\n",
               target->pid);
  return 0;
}

}  // namespace cuscope::cli
