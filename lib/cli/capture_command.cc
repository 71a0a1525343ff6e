// cuscope capture --pid PID [--duration S] [--top-down[=N]] [--snapshot] [-o NAME] [-f]
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/control_target.h"
#include "lib/control/control_client.h"
#include "lib/control/protocol.h"
#include "lib/core/output_name.h"
#include "lib/core/terminal_text.h"
#include "lib/core/trace.h"

namespace cuscope::cli {
namespace {

constexpr const char kCaptureUsage[] =
    "usage: cuscope capture --pid PID [--duration S] [--top-down[=N]] [--snapshot] [-o NAME] [-f]\n"
    "\n"
    "Asks a running process with cuscope inside (injected, preloaded or linked; see cuscope ps) for a trace,\n"
    "without stopping or restarting it. The process writes the file; this command waits until it is complete.\n"
    "  --pid PID        the process\n"
    "  --duration S     a window: the records of the next S seconds (default 10), from a process in monitor\n"
    "                   or flight mode (CUSCOPE_MODE); with --snapshot, the seconds kept after the request\n"
    "                   (default 0)\n"
    "  --snapshot       flight mode: what its recorder holds (the last CUSCOPE_FLIGHT_SPAN seconds)\n"
    "  --top-down[=N]   monitor mode: the one-run top-down, as cuscope profile --top-down: after the window,\n"
    "                   kernel metrics (sol,occupancy,stalls) on the next launches of its N hottest kernels\n"
    "                   (default 3), in the same file; the GPU counters over time pause meanwhile\n"
    "  --top-down-launches N  launches profiled per hot kernel (default 3)\n"
    "  --top-down-wait S  how long the process waits for those launches after the window (default 10)\n"
    "  -o, --output NAME  the file, relative to this directory: %p the process id, %n the lowest free\n"
    "                   number, %h the host; \".cuscope\" is appended (default capture_%p_%n)\n"
    "  -f, --force-overwrite [true|false]\n"
    "                   replace an existing file (also as --force-overwrite=true, as nsys)\n"
    "  --timeout S      how long to wait for the file beyond its seconds (default 60)\n"
    "\n"
    "The file is read with cuscope analyze, report, stats or export like any trace.\n";

// Seconds in [min, max], for the options that take them.
absl::Status ParseSeconds(const std::string& option, const std::string& value, double min, double max, double* out) {
  double v = 0;
  if (!absl::SimpleAtod(value, &v) || !(v >= min) || v > max) {
    return absl::InvalidArgumentError(absl::StrCat(option, " takes seconds from ", min, " to ", max, ", not '", value,
                                                   "'"));
  }
  *out = v;
  return absl::OkStatus();
}

// Kernels a top-down capture profiles when --top-down has no value (as cuscope profile's).
constexpr uint32_t kDefaultCaptureTopDownKernels = 3;

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Waits until the process has written the file: its capture is no longer busy (or the process
// has ended, which writes it at once) and the file holds a trace.
absl::Status WaitUntilWritten(const std::string& directory, pid_t pid, const std::string& path, double seconds,
                              double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds + timeout_seconds);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  v1::ControlRequest ask;
  ask.mutable_status();
  for (;;) {
    auto reply = control::AskProcess(directory, pid, ask, std::chrono::milliseconds(2000));
    const bool process_gone = !reply.ok() && absl::IsNotFound(reply.status());
    if ((reply.ok() && reply->error().empty() && !reply->status().capture_busy()) || process_gone) {
      if (FileSize(path) > 0) return absl::OkStatus();
      if (process_gone) return absl::DataLossError(absl::StrCat("process ", pid, " ended before it wrote ", path));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(path, " is not complete after ", seconds + timeout_seconds,
                                                      " s (see the process's stderr)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}


// What the command line asks for; the parser's actions write into it after the declaring function
// has returned, so it must outlive the parse.
struct CaptureOptions {
  std::string pid_text, output = "capture_%p_%n";
  double duration = -1, timeout = 60, top_down_wait = 0;
  bool snapshot = false, force = false;
  uint32_t top_down = 0;
  uint64_t top_down_launches = 0;
};

void DeclareCaptureOptions(ArgumentParser& parser, CaptureOptions& o) {
  parser.UnknownOptionMessage(UnknownOptionOf("capture"));
  parser.Option(
      {"--pid", "-p"}, "--pid takes a process id",
      [&](const std::string& v) {
        o.pid_text = v;
        return absl::OkStatus();
      },
      "the process");
  parser.Option(
      {"--duration", "-d"}, "--duration takes seconds",
      [&](const std::string& v) { return ParseSeconds("--duration", v, 0, control::kMaxCaptureSeconds, &o.duration); },
      "a window: the records of the next S seconds (default 10); with --snapshot, the seconds kept after the request");
  parser.Option(
      {"--timeout"}, "--timeout takes seconds",
      [&](const std::string& v) { return ParseSeconds("--timeout", v, 1, 86400, &o.timeout); },
      "how long to wait for the file beyond its seconds (default 60)");
  parser.Flag(
      {"--top-down"},
      [&] {
        o.top_down = kDefaultCaptureTopDownKernels;
        return absl::OkStatus();
      },
      "monitor mode: after the window, kernel metrics on the next launches of its 3 hottest kernels");
  parser.InlineValue(
      "--top-down",
      [&](const std::string& v) {
        if (!absl::SimpleAtoi(v, &o.top_down) || o.top_down == 0 || o.top_down > control::kMaxTopDownKernels) {
          return absl::InvalidArgumentError(absl::StrCat("--top-down takes a number of kernels from 1 to ",
                                                         control::kMaxTopDownKernels, ", not '", v, "'"));
        }
        return absl::OkStatus();
      },
      "--top-down=N: the same on the N hottest kernels");
  parser.Option(
      {"--top-down-launches"}, "--top-down-launches takes a number of launches",
      [&](const std::string& v) {
        if (!absl::SimpleAtoi(v, &o.top_down_launches) || o.top_down_launches == 0 ||
            o.top_down_launches > control::kMaxTopDownLaunches) {
          return absl::InvalidArgumentError(absl::StrCat("--top-down-launches takes 1 to ",
                                                         control::kMaxTopDownLaunches, " launches, not '", v, "'"));
        }
        return absl::OkStatus();
      },
      "launches profiled per hot kernel (default 3)");
  parser.Option(
      {"--top-down-wait"}, "--top-down-wait takes seconds",
      [&](const std::string& v) {
        return ParseSeconds("--top-down-wait", v, 0.001, control::kMaxCaptureSeconds, &o.top_down_wait);
      },
      "how long the process waits for those launches after the window (default 10)");
  parser.Flag(
      {"--snapshot"},
      [&] {
        o.snapshot = true;
        return absl::OkStatus();
      },
      "flight mode: what its recorder holds (the last CUSCOPE_FLIGHT_SPAN seconds)");
  parser.Option(
      {"--output", "-o"}, "--output takes a file name",
      [&](const std::string& v) {
        o.output = v;
        return absl::OkStatus();
      },
      "the file, relative to this directory: %p process id, %n lowest free number, %h host (default capture_%p_%n)");
  parser.Switch(
      {"--force-overwrite", "-f"},
      [&](bool on) {
        o.force = on;
        return absl::OkStatus();
      },
      "replace an existing file (also as --force-overwrite=true, as nsys)");
}

// Fills in the default duration, then turns down combinations the process would refuse or could not
// honour, before anything is asked of it.
absl::Status SettleCaptureOptions(CaptureOptions& o) {
  if (o.duration < 0) o.duration = o.snapshot ? 0 : 10;
  if (!o.snapshot && o.duration == 0) return absl::InvalidArgumentError("capture: a window needs --duration above 0");
  if (o.top_down == 0 && (o.top_down_launches != 0 || o.top_down_wait != 0)) {
    return absl::InvalidArgumentError("capture: --top-down-launches and --top-down-wait need --top-down");
  }
  if (o.top_down > 0 && o.snapshot) {
    return absl::InvalidArgumentError(
        "capture: --top-down needs a window, not --snapshot (a snapshot holds the seconds before the request; the "
        "kernel metrics come after it)");
  }
  return absl::OkStatus();
}

v1::ControlRequest CaptureRequestFor(const CaptureOptions& o, const std::string& path) {
  v1::ControlRequest request;
  v1::CaptureRequest* capture = request.mutable_capture();
  capture->set_kind(o.snapshot ? v1::CaptureRequest::KIND_SNAPSHOT : v1::CaptureRequest::KIND_WINDOW);
  capture->set_path(path);
  capture->set_seconds(o.duration);
  capture->set_force_overwrite(o.force);
  capture->set_top_down_kernels(o.top_down);
  capture->set_top_down_launches(o.top_down_launches);
  capture->set_top_down_wait_seconds(o.top_down_wait);
  return request;
}

// The file just written, read back: its summary line tells the user the capture holds what was asked.
int SummarizeCapturedTrace(const std::string& path, uint32_t top_down) {
  auto trace = core::LoadTrace(path);
  if (!trace.ok()) return PrintError(absl::StrCat("capture: ", trace.status().message()));
  std::string top_down_said;
  if (top_down > 0) {
    top_down_said = trace->top_down.empty()
                        ? std::string(", no top-down choice")
                        : absl::StrCat(", top-down: ", trace->top_down.back().kernels_size(), " hot kernels, ",
                                       trace->metrics.size(), " launches profiled");
  }
  std::printf("%s: %zu kernels, %zu API calls, %zu copies, %llu chunks%s%s\n", core::EscapeForTerminal(path).c_str(),
              trace->kernels.size(), trace->api_calls.size(), trace->memcpys.size(),
              static_cast<unsigned long long>(trace->chunks), top_down_said.c_str(),
              trace->truncated() ? " (cut short)" : "");
  return trace->truncated() ? 1 : 0;
}

}  // namespace

int RunCapture(const Args& args) {
  CaptureOptions o;
  ArgumentParser parser;
  DeclareCaptureOptions(parser, o);
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kCaptureUsage)) return *exit;
  auto target = ResolveControlTarget(o.pid_text, "capture");
  if (!target.ok()) return PrintError(target.status().message());
  if (absl::Status st = SettleCaptureOptions(o); !st.ok()) return PrintError(st.message());
  const double duration = o.duration;
  const uint32_t top_down = o.top_down;
  auto path = TargetOutputPath(o.output, target->pid);
  if (!path.ok()) return PrintError(absl::StrCat("capture: ", path.status().message()));

  auto reply = control::AskProcess(target->directory, target->pid, CaptureRequestFor(o, *path),
                                   std::chrono::milliseconds(10000));
  if (!reply.ok()) return PrintError(absl::StrCat("capture: ", reply.status().message()));
  if (!reply->error().empty()) {
    return PrintError(absl::StrCat("capture: process ", target->pid, " refused: ", reply->error()));
  }
  // A top-down's file is complete once its launches are profiled, at most the wait after the window.
  const double ready_in = std::max(duration, reply->ready_in_seconds());
  std::fprintf(stderr, "cuscope: process %d is writing %s%s\n", target->pid, core::EscapeForTerminal(*path).c_str(),
               duration > 0 ? absl::StrFormat(" (%.3g s from now%s)", duration,
                                               top_down > 0 ? absl::StrFormat(", then kernel metrics for at most %.3g s",
                                                                              ready_in - duration)
                                                            : std::string())
                                  .c_str()
                            : "");
  if (auto st = WaitUntilWritten(target->directory, target->pid, *path, duration, o.timeout + (ready_in - duration));
      !st.ok()) {
    return PrintError(absl::StrCat("capture: ", st.message()));
  }
  return SummarizeCapturedTrace(*path, top_down);
}

}  // namespace cuscope::cli
