#include "lib/settings/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/settings/config_settings.h"
#include "lib/core/metric_sets.h"
#include "lib/core/terminal_text.h"

extern char** environ;

namespace cuscope::settings {
namespace {

// Monitor mode keeps figures, not records: what needs a per-record trace of a chosen window, or
// replays launches, is refused rather than ignored. Trace windows in monitor mode are opened from
// code (Session::BeginTraceWindow).
absl::Status CheckMonitorSettings(const Config& c) {
  const bool monitor = c.mode == CollectionMode::kMonitor;
  const bool flight = c.mode == CollectionMode::kFlight;
  if (!monitor) {
    for (const char* name : {"CUSCOPE_MONITOR_INTERVAL", "CUSCOPE_MONITOR_TOP_KERNELS", "CUSCOPE_PROMETHEUS",
                             "CUSCOPE_DUTY_CYCLE", "CUSCOPE_OVERHEAD_BUDGET", "CUSCOPE_DUTY_WINDOWS",
                             "CUSCOPE_DUTY_DETACH"}) {
      if (c.settings.count(name)) return absl::InvalidArgumentError(absl::StrCat(name, " needs CUSCOPE_MODE=monitor"));
    }
  }
  if (!flight) {
    for (const char* name : {"CUSCOPE_FLIGHT_SPAN", "CUSCOPE_FLIGHT_SIZE", "CUSCOPE_FLIGHT_STEP_THRESHOLD",
                             "CUSCOPE_FLIGHT_REQUEST_THRESHOLD",
                             "CUSCOPE_FLIGHT_AFTER", "CUSCOPE_FLIGHT_STEP_RANGE", "CUSCOPE_FLIGHT_IDLE_SHARE",
                             "CUSCOPE_FLIGHT_IDLE_SECONDS"}) {
      if (c.settings.count(name)) return absl::InvalidArgumentError(absl::StrCat(name, " needs CUSCOPE_MODE=flight"));
    }
  }
  if (c.settings.count("CUSCOPE_DUTY_CYCLE") && c.settings.count("CUSCOPE_OVERHEAD_BUDGET")) {
    return absl::InvalidArgumentError(
        "CUSCOPE_DUTY_CYCLE and CUSCOPE_OVERHEAD_BUDGET both choose how much is recorded: give one (a fixed share "
        "of the time, or a cost the session holds itself under)");
  }
  if (c.duty_detach && !c.samples_by_duty_cycle()) {
    return absl::InvalidArgumentError(
        "CUSCOPE_DUTY_DETACH detaches CUPTI between a duty cycle's windows: it needs CUSCOPE_DUTY_CYCLE under 100 or "
        "CUSCOPE_OVERHEAD_BUDGET");
  }
  if (c.settings.count("CUSCOPE_FLIGHT_IDLE_SECONDS") && c.flight_idle_share == 0) {
    return absl::InvalidArgumentError("CUSCOPE_FLIGHT_IDLE_SECONDS needs CUSCOPE_FLIGHT_IDLE_SHARE: how idle is too idle");
  }
  if (c.flight_idle_share > 0 && c.flight_idle_window_ms < c.monitor_interval_ms) {
    return absl::InvalidArgumentError("CUSCOPE_FLIGHT_IDLE_SECONDS is shorter than one interval of figures");
  }
  if (!c.flight_step_range.empty()) {
    if (c.flight_step_threshold_ms == 0) {
      return absl::InvalidArgumentError(
          "CUSCOPE_FLIGHT_STEP_RANGE needs CUSCOPE_FLIGHT_STEP_THRESHOLD: how long a step may take");
    }
    if (!c.kind_enabled("nvtx")) {
      return absl::InvalidArgumentError("CUSCOPE_FLIGHT_STEP_RANGE needs the nvtx kind (CUSCOPE_KINDS)");
    }
  }
  if (!monitor && !flight) {
    if (c.output.empty()) {
      return absl::InvalidArgumentError(
          "CUSCOPE_OUTPUT is empty: only monitor and flight mode (CUSCOPE_MODE=monitor|flight) run without a file");
    }
    return absl::OkStatus();
  }
  const char* mode = monitor ? "monitor mode (CUSCOPE_MODE=monitor keeps figures, not a trace of a window)"
                             : "flight mode (CUSCOPE_MODE=flight keeps the last seconds, written by a snapshot)";
  for (const char* name : {"CUSCOPE_METRICS", "CUSCOPE_TOP_DOWN", "CUSCOPE_DELAY", "CUSCOPE_DURATION",
                           "CUSCOPE_CAPTURE_RANGE", "CUSCOPE_KERNEL_NAME", "CUSCOPE_LAUNCH_SKIP",
                           "CUSCOPE_LAUNCH_COUNT", "CUSCOPE_PER_KERNEL_COUNT", "CUSCOPE_STACKS",
                           "CUSCOPE_UNWINDER"}) {
    if (c.settings.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " does not apply in ", mode));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool Config::kind_enabled(const std::string& kind) const {
  return std::find(activity_kinds.begin(), activity_kinds.end(), kind) != activity_kinds.end();
}

absl::StatusOr<std::vector<std::string>> ParseActivityKinds(const std::string& list) {
  std::vector<std::string> kinds;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    std::string k(part);
    if (k == "all") {
      kinds.assign(std::begin(kActivityKindNames), std::end(kActivityKindNames));
      continue;
    }
    if (std::find(std::begin(kActivityKindNames), std::end(kActivityKindNames), k) == std::end(kActivityKindNames)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown activity kind '", k, "' (known: ",
                                                     absl::StrJoin(kActivityKindNames, ","), ", all)"));
    }
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  if (kinds.empty()) return absl::InvalidArgumentError("no activity kind given");
  return kinds;
}

absl::StatusOr<Config> ParseConfigFromEnvironment(const std::vector<std::pair<std::string, std::string>>& env) {
  Config c;
  for (const auto& [name, value] : env) {
    if (name.rfind("CUSCOPE_", 0) != 0) continue;
    c.settings[name] = value;
    const Setting* setting = FindSetting(name);
    if (setting == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown setting ", core::ShownValue(name), " (known: ", absl::StrJoin(SettingNames(), ", "), ")"));
    }
    if (auto st = setting->apply(name, value, c); !st.ok()) return st;
  }
  if (c.buffer_pool_cap_bytes < c.buffer_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("CUSCOPE_BUFFER_POOL_CAP (", c.buffer_pool_cap_bytes,
                                                   ") is smaller than one buffer (", c.buffer_bytes, ")"));
  }
  if (c.capture_range == "nvtx" && c.nvtx_capture.empty()) {
    return absl::InvalidArgumentError("CUSCOPE_CAPTURE_RANGE=nvtx needs CUSCOPE_NVTX_CAPTURE: the NVTX range to capture");
  }
  if (!c.nvtx_capture.empty() && c.capture_range != "nvtx") {
    return absl::InvalidArgumentError("CUSCOPE_NVTX_CAPTURE needs CUSCOPE_CAPTURE_RANGE=nvtx");
  }
  if (auto st = CheckMonitorSettings(c); !st.ok()) return st;
  const bool selection_given = c.settings.count("CUSCOPE_KERNEL_NAME") || c.settings.count("CUSCOPE_LAUNCH_SKIP") ||
                               c.settings.count("CUSCOPE_LAUNCH_COUNT") || c.settings.count("CUSCOPE_PER_KERNEL_COUNT");
  if (c.top_down_kernels > 0) {
    if (selection_given) {
      return absl::InvalidArgumentError(
          "CUSCOPE_TOP_DOWN chooses the kernels itself: leave out CUSCOPE_KERNEL_NAME, CUSCOPE_LAUNCH_SKIP, "
          "CUSCOPE_LAUNCH_COUNT and CUSCOPE_PER_KERNEL_COUNT (CUSCOPE_TOP_DOWN_LAUNCHES sets the launches per kernel)");
    }
    if (c.duration_seconds <= 0 && c.capture_range == "none") {
      return absl::InvalidArgumentError(
          "CUSCOPE_TOP_DOWN needs a timeline window that ends while the program runs: CUSCOPE_DURATION, "
          "CUSCOPE_CAPTURE_RANGE=cudaProfilerApi, or CUSCOPE_CAPTURE_RANGE=nvtx with CUSCOPE_NVTX_CAPTURE");
    }
    if (c.metrics.empty()) {
      auto m = core::ExpandMetricList("sol,occupancy,stalls");
      if (!m.ok()) return m.status();
      c.metrics = *m;
      c.metrics_request = "sol,occupancy,stalls";
    }
    // The whole method: counters over time during the window, on every device, unless
    // CUSCOPE_GPU_METRICS_DEVICES says otherwise.
    if (!c.settings.count("CUSCOPE_GPU_METRICS_DEVICES")) c.gpu_metrics = true;
  } else if (c.settings.count("CUSCOPE_TOP_DOWN_LAUNCHES")) {
    return absl::InvalidArgumentError("CUSCOPE_TOP_DOWN_LAUNCHES needs CUSCOPE_TOP_DOWN");
  } else if (c.gpu_metrics && !c.metrics.empty()) {
    // PM sampling and the Range Profiler share the GPU's counters; the top-down runs them one
    // after the other.
    return absl::InvalidArgumentError(
        "CUSCOPE_GPU_METRICS_DEVICES and CUSCOPE_METRICS cannot run at the same time (they share the GPU's "
        "performance counters); CUSCOPE_TOP_DOWN runs both, one after the other");
  }
  // Always on: GPU counters cost the sampler thread ~70 us a sample; a tenth of the trace
  // default's rate still gives each one-second interval 100 samples.
  if (c.mode == CollectionMode::kMonitor && !c.settings.count("CUSCOPE_GPU_METRICS_FREQUENCY")) {
    c.gpu_metrics_frequency_hz = 100;
  }
  if (c.settings.count("CUSCOPE_GPU_METRICS_FREQUENCY") && !c.gpu_metrics) {
    return absl::InvalidArgumentError("CUSCOPE_GPU_METRICS_FREQUENCY needs CUSCOPE_GPU_METRICS_DEVICES (or CUSCOPE_TOP_DOWN)");
  }
  if (selection_given && c.metrics.empty()) {
    return absl::InvalidArgumentError(
        "a kernel selection (CUSCOPE_KERNEL_NAME, CUSCOPE_LAUNCH_SKIP, CUSCOPE_LAUNCH_COUNT, CUSCOPE_PER_KERNEL_COUNT) "
        "needs CUSCOPE_METRICS: it chooses the launches whose counters are collected");
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> ProcessEnvironment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace cuscope::settings
