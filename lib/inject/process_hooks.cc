#include "lib/inject/process_hooks.h"

#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "lib/core/terminal_text.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/collector_control.h"
#include "lib/cupti/cupti_location.h"

namespace cuscope::inject {
namespace {

std::once_flag g_env_once;
std::once_flag g_hooks_once;
std::atomic<bool> g_quiet{false};

void OnExit() {
  if (!cupti::CollectorActive()) return;
  StopAndReport(g_quiet.load()).IgnoreError();
}

void OnForkChild() { cupti::MarkCollectorForkedChild(); }

void InstallHooks() {
  std::call_once(g_hooks_once, [] {
    std::atexit(OnExit);
    pthread_atfork(nullptr, nullptr, OnForkChild);
  });
}

}  // namespace

bool SessionQuiet() { return g_quiet.load(); }

void PrintLine(const std::string& message) {
  std::fprintf(stderr, "cuscope: %s\n", core::LineForTerminal(message).c_str());
}

void RouteNvtxToCupti() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  const std::string library = cupti::LoadedCuptiLibraryPath();
  if (!library.empty()) setenv("NVTX_INJECTION64_PATH", library.c_str(), 0);
}

absl::Status StartWithConfig(const settings::Config& config, const char* entry) {
  // Not when attached: setenv in a process whose threads run on is a race with their getenv, and
  // NVTX read the variable at its first call long before.
  if ((config.kind_enabled("nvtx") || config.capture_range == "nvtx") && std::string_view(entry) != "attach") {
    RouteNvtxToCupti();
  }
  g_quiet.store(config.quiet);
  absl::Status st = cupti::StartCollector(config, entry);
  if (st.ok()) InstallHooks();
  // `cuscope detach`: the stop and its line, as at the end of the program.
  if (st.ok()) cupti::SetDetachHandler([] { (void)StopAndReport(SessionQuiet()); });
  return st;
}

namespace {

// CUSCOPE_QUIET as the environment has it, for when the other settings did not parse.
bool QuietInEnvironment() {
  const char* quiet = std::getenv("CUSCOPE_QUIET");
  if (quiet == nullptr) return false;
  auto config = settings::ParseConfigFromEnvironment({{"CUSCOPE_QUIET", quiet}});
  return config.ok() && config->quiet;
}

}  // namespace

void StartFromEnvironmentOnce(const char* entry) {
  std::call_once(g_env_once, [entry] {
    auto config = settings::ParseConfigFromEnvironment(settings::ProcessEnvironment());
    if (!config.ok()) {
      if (!QuietInEnvironment()) PrintLine(absl::StrCat(config.status().message(), "; profiling is off"));
      return;
    }
    if (cupti::CollectorActive()) return;
    if (auto st = StartWithConfig(*config, entry); !st.ok() && !config->quiet) {
      PrintLine(absl::StrCat(st.message(), "; profiling is off"));
    }
  });
}

absl::Status StopAndReport(bool quiet) {
  cupti::CollectorSummary summary;
  absl::Status st = cupti::StopCollector(&summary);
  if (!quiet && !summary.path.empty()) {
    std::string line = absl::StrCat("trace written to ", summary.path, " (", summary.records, " records, ",
                                    summary.kernels, " kernels, ", summary.bytes, " bytes");
    if (summary.launches_profiled > 0) absl::StrAppend(&line, ", ", summary.launches_profiled, " launches profiled");
    if (summary.dropped > 0 || summary.buffers_refused > 0) {
      absl::StrAppend(&line, "; ", summary.dropped, " records dropped, ", summary.buffers_refused,
                      " buffers refused at the memory cap");
    }
    if (summary.launch_stacks_dropped > 0) {
      absl::StrAppend(&line, "; ", summary.launch_stacks_dropped, " launch stacks dropped (the writer fell behind)");
    }
    line += ")";
    if (!st.ok()) absl::StrAppend(&line, "; ", st.message());
    PrintLine(line);
  }
  return st;
}

}  // namespace cuscope::inject
