// cuscope status --pid PID [--format text|json], and cuscope ps.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/proto_json.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/control_target.h"
#include "lib/control/control_client.h"
#include "lib/control/socket_directory.h"
#include "lib/core/terminal_text.h"

namespace cuscope::cli {
namespace {

constexpr const char kStatusUsage[] =
    "usage: cuscope status --pid PID [--format text|json]\n"
    "\n"
    "What a running process with cuscope inside is doing: its mode, its files, and in monitor mode the\n"
    "figures of every interval so far (GPU busy and idle, kernels, launches, syncs, the kernels with the most\n"
    "GPU time), as its Prometheus endpoint serves them. JSON is the ProcessStatus message of\n"
    "proto/cuscope/v1/control.proto.\n";

constexpr const char kPsUsage[] =
    "usage: cuscope ps\n"
    "\n"
    "Lists this user's processes that have cuscope inside (and a control socket: CUSCOPE_CONTROL is on by\n"
    "default): process id, mode, how cuscope came in, rank in a distributed job (of its world size),\n"
    "seconds running, command line.\n";

// A duration in the unit that shows it best: "12.345 s", "3.210 ms", "1.000 us".
std::string Seconds(uint64_t ns) {
  if (ns >= 1'000'000'000ull || ns == 0) return absl::StrFormat("%.3f s", ns / 1e9);
  if (ns >= 1'000'000ull) return absl::StrFormat("%.3f ms", ns / 1e6);
  return absl::StrFormat("%.3f us", ns / 1e3);
}

std::string SecondsValue(double seconds) { return Seconds(static_cast<uint64_t>(std::llround(seconds * 1e9))); }

// "3/8" (rank of world size), "3", or "-" outside a distributed job.
std::string RankText(const v1::ProcessStatus& s) {
  if (s.rank() < 0) return "-";
  return s.world_size() > 0 ? absl::StrCat(s.rank(), "/", s.world_size()) : absl::StrCat(s.rank());
}

std::string StatusText(const v1::ProcessStatus& s) {
  std::string out = absl::StrCat("process ", s.pid(), ": ", core::EscapeForTerminal(s.command_line()), "\n");
  absl::StrAppendFormat(&out, "  cuscope %s, %s mode (%s), running %.1f s\n", s.cuscope_version(), s.mode(),
                        s.entry(), s.seconds_running());
  if (s.rank() >= 0) {
    absl::StrAppend(&out, "  rank ", RankText(s), s.local_rank() >= 0 ? absl::StrCat(" (local ", s.local_rank(), ")") : "",
                    s.job_id().empty() ? "" : absl::StrCat(", job ", core::EscapeForTerminal(s.job_id())), "\n");
  }
  if (!s.output_path().empty()) absl::StrAppend(&out, "  trace file: ", core::EscapeForTerminal(s.output_path()), "\n");
  if (s.prometheus_port() != 0) absl::StrAppend(&out, "  Prometheus endpoint: port ", s.prometheus_port(), "\n");
  if (s.mode() == "flight") {
    absl::StrAppendFormat(&out, "  flight recorder: %.1f s held, %d chunks, %.1f MiB\n", s.flight_seconds_held(),
                          s.flight_chunks(), s.flight_bytes() / 1048576.0);
  }
  if (s.capture_busy()) absl::StrAppend(&out, "  a capture or snapshot is being written\n");
  // Monitor mode's figures; flight mode keeps them too when its idle trigger is on.
  if (s.intervals() == 0 && s.mode() != "monitor") return out;
  absl::StrAppend(&out, "  ", s.intervals(), " intervals of figures so far\n");
  // The duty cycle (a process of an older cuscope reports none: duty 0, not governed).
  if (s.duty_governed() || (s.duty_cycle() > 0 && s.duty_cycle() < 1)) {
    absl::StrAppendFormat(&out, "  recording %.1f%% of the time (%s); estimated cost %.2f%% of the program's time", 100 * s.duty_cycle(),
                          s.duty_governed() ? absl::StrFormat("held under a budget of %.1f%%", 100 * s.overhead_budget())
                                            : std::string("a fixed duty cycle"),
                          100 * s.estimated_overhead());
    absl::StrAppendFormat(&out, "; %.0f records/s while recording\n", s.records_per_second());
    if (s.kernel_records_missing()) {
      absl::StrAppend(&out, "  recording all the time now: CUPTI stopped giving kernel records under the duty cycle (its "
                            "kernel figures since are missing)\n");
    } else if (s.every_record()) {
      absl::StrAppend(&out, "  recording all the time now: a trace window, a capture or request scopes need every record\n");
    }
    if (!s.cupti_attachment().empty()) {
      absl::StrAppend(&out, "  CUPTI detached between the windows ", s.cupti_detaches(), " times, attached again ",
                      s.cupti_attaches(), ", detaches given up ", s.cupti_detaches_given_up(), " (no program call in ",
                      "time); ", s.cupti_attachment(), " now\n");
    }
    if (s.records_handed_over() > 0) {
      absl::StrAppend(&out, "  records held back in CUPTI's buffers were handed over ", s.records_handed_over(),
                      s.records_handed_over() == 1 ? " time" : " times", " (a kernel record that never completed)\n");
    }
  }
  if (s.latest_estimated()) {
    absl::StrAppendFormat(&out, "  the latest interval's figures are estimates from %.1f%% of its time", 100 * s.latest_recorded_share());
    if (s.latest_count_bound() >= 0) {
      absl::StrAppendFormat(&out, " (counts within %.1f%%, 95%%)", 100 * s.latest_count_bound());
    }
    absl::StrAppend(&out, "\n");
  }
  for (const v1::DeviceStatus& d : s.devices()) {
    const std::string bound = s.latest_estimated() && d.utilization_bound() >= 0
                                  ? absl::StrFormat(" (+/- %.1f points, 95%%)", 100 * d.utilization_bound())
                                  : std::string();
    absl::StrAppendFormat(&out, "  GPU %d: busy %.1f%%%s in the latest interval; %s busy, %s idle; %d kernels, %s of kernels\n",
                          d.device(), 100 * d.utilization(), bound, Seconds(d.busy_ns()), Seconds(d.idle_ns()), d.kernels(),
                          Seconds(d.kernel_gpu_ns()));
  }
  absl::StrAppend(&out, "  calls: ", s.launch_calls(), " launches, ", s.sync_calls(), " synchronizations waiting ",
                  Seconds(s.sync_wait_ns()), "\n");
  if (s.records_dropped_by_cupti() > 0) {
    absl::StrAppend(&out, "  records dropped by CUPTI: ", s.records_dropped_by_cupti(), "\n");
  }
  if (s.routes_size() > 0) absl::StrAppend(&out, "  requests by route (percentiles of the latest interval with requests):\n");
  for (const v1::RouteStatus& r : s.routes()) {
    absl::StrAppendFormat(&out, "    %-16s %8d requests  span p50 %s p99 %s max %s  GPU p50 %s p99 %s  queue p50 %s p99 %s\n",
                          r.route().empty() ? "(none)" : core::EscapeForTerminal(r.route()), r.requests(),
                          SecondsValue(r.span_p50()), SecondsValue(r.span_p99()), SecondsValue(r.span_max()),
                          SecondsValue(r.gpu_p50()), SecondsValue(r.gpu_p99()), SecondsValue(r.queue_p50()),
                          SecondsValue(r.queue_p99()));
  }
  if (s.top_kernels_size() > 0) absl::StrAppend(&out, "  kernels with the most GPU time:\n");
  for (const v1::KernelStatus& k : s.top_kernels()) {
    absl::StrAppendFormat(&out, "    %12s  %8d launches  GPU %d  %s\n", Seconds(k.gpu_ns()), k.launches(), k.device(),
                          core::EscapeForTerminal(k.label()));
  }
  return out;
}

constexpr std::chrono::milliseconds kStatusTimeout{5000};
constexpr std::chrono::milliseconds kPsTimeout{3000};

absl::StatusOr<v1::ProcessStatus> AskStatus(const std::string& directory, pid_t pid,
                                            std::chrono::milliseconds timeout) {
  v1::ControlRequest request;
  request.mutable_status();
  auto reply = control::AskProcess(directory, pid, request, timeout);
  if (!reply.ok()) return reply.status();
  if (!reply->error().empty()) return absl::FailedPreconditionError(reply->error());
  return reply->status();
}

}  // namespace

int RunStatus(const Args& args) {
  std::string pid_text, format = "text";
  ArgumentParser parser;
  parser.UnknownOptionMessage(UnknownOptionOf("status"));
  parser.Option(
      {"--pid", "-p"}, "--pid takes a process id",
      [&](const std::string& v) {
        pid_text = v;
        return absl::OkStatus();
      },
      "the process");
  parser.Option(
      {"--format"}, "--format takes text or json",
      KeepTextOrJson(&format),
      "text (default) or json (the ProcessStatus message of proto/cuscope/v1/control.proto)");
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kStatusUsage)) return *exit;
  auto target = ResolveControlTarget(pid_text, "status");
  if (!target.ok()) return PrintError(target.status().message());
  auto status = AskStatus(target->directory, target->pid, kStatusTimeout);
  if (!status.ok()) return PrintError(absl::StrCat("status: ", status.status().message()));
  if (format == "json") {
    std::fputs(core::ProtoToJsonText(*status).c_str(), stdout);
    std::fputs("\n", stdout);
    return 0;
  }
  std::fputs(StatusText(*status).c_str(), stdout);
  return 0;
}

int RunPs(const Args& args) {
  ArgumentParser parser;
  parser.UnknownOptionMessage(UnknownOptionOf("ps"));
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kPsUsage)) return *exit;
  auto directory = control::ControlDirectory(/*create=*/false);
  if (!directory.ok() && !absl::IsNotFound(directory.status())) {
    return PrintError(absl::StrCat("ps: ", directory.status().message()));
  }
  std::string rows;
  int listed = 0;
  if (directory.ok()) {
    control::RemoveStaleSockets(*directory);
    // Asked at once, each with its own deadline: a stopped or stuck process costs ps one timeout,
    // not one per process, and is listed as not answering.
    const std::vector<pid_t> pids = control::SocketPids(*directory);
    std::vector<absl::StatusOr<v1::ProcessStatus>> answers(pids.size(), absl::UnknownError(""));
    constexpr size_t kAtOnce = 64;
    for (size_t first = 0; first < pids.size(); first += kAtOnce) {
      std::vector<std::thread> askers;
      for (size_t i = first; i < std::min(pids.size(), first + kAtOnce); ++i) {
        askers.emplace_back([&, i] { answers[i] = AskStatus(*directory, pids[i], kPsTimeout); });
      }
      for (std::thread& t : askers) t.join();
    }
    for (size_t i = 0; i < pids.size(); ++i) {
      const absl::StatusOr<v1::ProcessStatus>& status = answers[i];
      if (status.ok()) {
        absl::StrAppendFormat(&rows, "%8d  %-7s  %-9s  %-9s  %10.1f  %s\n", pids[i], status->mode(), status->entry(),
                              RankText(*status), status->seconds_running(),
                              core::EscapeForTerminal(status->command_line()));
      } else if (absl::IsNotFound(status.status())) {
        continue;  // gone meanwhile
      } else {
        absl::StrAppendFormat(&rows, "%8d  %-7s  %-9s  %-9s  %10s  (not answering: %s)\n", pids[i], "?", "?", "?", "?",
                              core::EscapeForTerminal(std::string(status.status().message())));
      }
      ++listed;
    }
  }
  if (listed == 0) {
    std::printf("no process of this user has cuscope inside\n");
    return 0;
  }
  std::printf("%8s  %-7s  %-9s  %-9s  %10s  %s\n%s", "PID", "MODE", "ENTRY", "RANK", "SECONDS", "COMMAND",
              rows.c_str());
  return 0;
}

}  // namespace cuscope::cli
