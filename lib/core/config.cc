#include "lib/core/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/core/metric_sets.h"
#include "lib/core/terminal_text.h"

extern char** environ;

namespace cuscope::core {
namespace {

// The setting as the error line shows it: a value of any length (a pattern of 90,000 characters)
// is cut, so the one line stays one readable line.
absl::Status Bad(const std::string& name, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(name, "=", ShownValue(value), ": ", ShownValue(why, 600)));
}

absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Bad(name, v, "expected 1/0, true/false, yes/no or on/off");
}

// Sizes accept a plain byte count or a K/M/G suffix (powers of 1024).
absl::StatusOr<uint64_t> ParseSize(const std::string& name, const std::string& v) {
  if (v.empty()) return Bad(name, v, "expected a size such as 4M");
  uint64_t mult = 1;
  std::string digits = v;
  switch (v.back()) {
    case 'K': case 'k': mult = 1ull << 10; digits.pop_back(); break;
    case 'M': case 'm': mult = 1ull << 20; digits.pop_back(); break;
    case 'G': case 'g': mult = 1ull << 30; digits.pop_back(); break;
    default: break;
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n == 0 || n > (1ull << 40) / mult) {
    return Bad(name, v, "expected a positive size such as 4M");
  }
  return n * mult;
}

absl::StatusOr<double> ParseSeconds(const std::string& name, const std::string& v) {
  double d = 0;
  if (!absl::SimpleAtod(v, &d) || !(d >= 0) || d > 1e7) return Bad(name, v, "expected seconds >= 0");
  return d;
}

// Seconds from `low` to `high` (both allowed), as whole milliseconds.
absl::StatusOr<uint32_t> ParseMillisecondsBetween(const std::string& name, const std::string& v, double low, double high) {
  double seconds = 0;
  if (!absl::SimpleAtod(v, &seconds) || !(seconds >= low) || seconds > high) {
    return Bad(name, v, absl::StrCat("expected seconds from ", low, " to ", high));
  }
  return static_cast<uint32_t>(seconds * 1000 + 0.5);
}

absl::StatusOr<uint64_t> ParseCount(const std::string& name, const std::string& v) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n)) return Bad(name, v, "expected a whole number >= 0");
  return n;
}

// Monitor mode keeps figures, not records: what needs a per-record trace of a chosen window, or
// replays launches, is refused rather than ignored. Trace windows in monitor mode are opened from
// code (Session::BeginTraceWindow).
absl::Status CheckMonitorSettings(const Config& c) {
  const bool monitor = c.mode == CollectionMode::kMonitor;
  const bool flight = c.mode == CollectionMode::kFlight;
  if (!monitor) {
    for (const char* name : {"CUSCOPE_MONITOR_INTERVAL", "CUSCOPE_MONITOR_TOP_KERNELS", "CUSCOPE_PROMETHEUS",
                             "CUSCOPE_DUTY_CYCLE", "CUSCOPE_OVERHEAD_BUDGET"}) {
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
    if (name == "CUSCOPE_OUTPUT") {
      // Empty: no file, which only monitor mode allows (checked below).
      c.output = value;
    } else if (name == "CUSCOPE_FORCE_OVERWRITE") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.force_overwrite = *b;
    } else if (name == "CUSCOPE_KINDS") {
      auto k = ParseActivityKinds(value);
      if (!k.ok()) return Bad(name, value, std::string(k.status().message()));
      c.activity_kinds = *k;
    } else if (name == "CUSCOPE_BUFFER_SIZE") {
      auto s = ParseSize(name, value);
      if (!s.ok()) return s.status();
      if (*s < (64u << 10)) return Bad(name, value, "a buffer must be at least 64K");
      c.buffer_bytes = *s;
    } else if (name == "CUSCOPE_BUFFER_POOL_CAP") {
      auto s = ParseSize(name, value);
      if (!s.ok()) return s.status();
      c.buffer_pool_cap_bytes = *s;
    } else if (name == "CUSCOPE_FLUSH_PERIOD_MS") {
      uint32_t ms = 0;
      if (!absl::SimpleAtoi(value, &ms) || ms == 0 || ms > 60000) return Bad(name, value, "expected 1..60000 ms");
      c.flush_period_ms = ms;
    } else if (name == "CUSCOPE_DELAY") {
      auto s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      c.delay_seconds = *s;
    } else if (name == "CUSCOPE_DURATION") {
      auto s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      c.duration_seconds = *s;
    } else if (name == "CUSCOPE_CAPTURE_RANGE") {
      if (value != "none" && value != "cudaProfilerApi" && value != "nvtx") {
        return Bad(name, value, "expected none, cudaProfilerApi or nvtx");
      }
      c.capture_range = value;
    } else if (name == "CUSCOPE_NVTX_CAPTURE") {
      if (value.empty()) return Bad(name, value, "expected the name of an NVTX range");
      c.nvtx_capture = value;
    } else if (name == "CUSCOPE_METRICS") {
      auto m = ExpandMetricList(value);
      if (!m.ok()) return Bad(name, value, std::string(m.status().message()));
      c.metrics = *m;
      c.metrics_request = value;
    } else if (name == "CUSCOPE_KERNEL_NAME") {
      if (value.empty()) return Bad(name, value, "expected a kernel name or regex:PATTERN");
      c.kernel_selection.kernel_name = value;
      if (auto sel = KernelSelector::Create(c.kernel_selection); !sel.ok()) {
        return Bad(name, value, std::string(sel.status().message()));
      }
    } else if (name == "CUSCOPE_LAUNCH_SKIP" || name == "CUSCOPE_LAUNCH_COUNT" || name == "CUSCOPE_PER_KERNEL_COUNT") {
      auto n = ParseCount(name, value);
      if (!n.ok()) return n.status();
      if (name == "CUSCOPE_LAUNCH_SKIP") c.kernel_selection.launch_skip = *n;
      if (name == "CUSCOPE_LAUNCH_COUNT") c.kernel_selection.launch_count = *n;
      if (name == "CUSCOPE_PER_KERNEL_COUNT") c.kernel_selection.per_kernel_count = *n;
    } else if (name == "CUSCOPE_TOP_DOWN") {
      uint32_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n > 100) return Bad(name, value, "expected a number of kernels, 0..100");
      c.top_down_kernels = n;
    } else if (name == "CUSCOPE_TOP_DOWN_LAUNCHES") {
      uint64_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n == 0 || n > 1000) return Bad(name, value, "expected 1..1000 launches");
      c.top_down_launches = n;
    } else if (name == "CUSCOPE_REPLAY_MODE") {
      if (value == "application" || value == "user") {
        return Bad(name, value,
                   "only kernel replay runs inside the program (CUPTI's application and user replay need the "
                   "program, or the tool, to repeat the work once per pass)");
      }
      if (value != "kernel") return Bad(name, value, "expected kernel");
      c.replay_mode = value;
    } else if (name == "CUSCOPE_GPU_METRICS_DEVICES") {
      if (value == "none") {
        c.gpu_metrics = false;
        c.gpu_metrics_devices.clear();
      } else if (value == "all") {
        c.gpu_metrics = true;
        c.gpu_metrics_devices.clear();
      } else {
        std::vector<uint32_t> ids;
        for (absl::string_view part : absl::StrSplit(value, ',')) {
          uint32_t id = 0;
          if (!absl::SimpleAtoi(part, &id) || id > 1023) {
            return Bad(name, value, "expected none, all or device ids such as 0,1");
          }
          if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
        }
        c.gpu_metrics = true;
        c.gpu_metrics_devices = ids;
      }
    } else if (name == "CUSCOPE_GPU_METRICS_FREQUENCY") {
      uint32_t hz = 0;
      if (!absl::SimpleAtoi(value, &hz) || hz < 10 || hz > 200000) return Bad(name, value, "expected 10..200000 Hz");
      c.gpu_metrics_frequency_hz = hz;
    } else if (name == "CUSCOPE_LIBRARY") {
      // Read by `cuscope profile` to find the collector; nothing for the collector itself.
    } else if (name == "CUSCOPE_MODE") {
      if (value == "trace") {
        c.mode = CollectionMode::kTrace;
      } else if (value == "monitor") {
        c.mode = CollectionMode::kMonitor;
      } else if (value == "flight") {
        c.mode = CollectionMode::kFlight;
      } else {
        return Bad(name, value, "expected trace, monitor or flight");
      }
    } else if (name == "CUSCOPE_FLIGHT_SPAN") {
      auto ms = ParseMillisecondsBetween(name, value, 1, 3600);
      if (!ms.ok()) return ms.status();
      c.flight_span_ms = *ms;
    } else if (name == "CUSCOPE_FLIGHT_SIZE") {
      uint64_t mib = 0;
      if (!absl::SimpleAtoi(value, &mib) || mib < 1 || mib > 65536) return Bad(name, value, "expected MiB from 1 to 65536");
      c.flight_size_bytes = mib << 20;
    } else if (name == "CUSCOPE_FLIGHT_STEP_THRESHOLD") {
      auto ms = ParseMillisecondsBetween(name, value, 0.001, 3600);
      if (!ms.ok()) return ms.status();
      c.flight_step_threshold_ms = *ms;
    } else if (name == "CUSCOPE_FLIGHT_REQUEST_THRESHOLD") {
      auto ms = ParseMillisecondsBetween(name, value, 0.001, 3600);
      if (!ms.ok()) return ms.status();
      c.flight_request_threshold_ms = *ms;
    } else if (name == "CUSCOPE_FLIGHT_IDLE_SHARE") {
      double percent = 0;
      if (!absl::SimpleAtod(value, &percent) || !(percent >= 1) || percent > 100) {
        return Bad(name, value, "expected a percentage from 1 to 100");
      }
      c.flight_idle_share = percent / 100;
    } else if (name == "CUSCOPE_FLIGHT_IDLE_SECONDS") {
      auto ms = ParseMillisecondsBetween(name, value, 1, 3600);
      if (!ms.ok()) return ms.status();
      c.flight_idle_window_ms = *ms;
    } else if (name == "CUSCOPE_FLIGHT_STEP_RANGE") {
      if (value.empty()) return Bad(name, value, "expected the name of an NVTX range");
      c.flight_step_range = value;
    } else if (name == "CUSCOPE_FLIGHT_AFTER") {
      auto ms = ParseMillisecondsBetween(name, value, 0, 3600);
      if (!ms.ok()) return ms.status();
      c.flight_after_ms = *ms;
    } else if (name == "CUSCOPE_MONITOR_INTERVAL") {
      auto ms = ParseMillisecondsBetween(name, value, 0.1, 3600);
      if (!ms.ok()) return ms.status();
      c.monitor_interval_ms = *ms;
    } else if (name == "CUSCOPE_DUTY_CYCLE") {
      double percent = 0;
      if (!absl::SimpleAtod(value, &percent) || !(percent >= 1 && percent <= 100)) {
        return Bad(name, value, "expected a percentage of the time recorded, 1..100");
      }
      c.duty_cycle = percent / 100;
    } else if (name == "CUSCOPE_OVERHEAD_BUDGET") {
      double percent = 0;
      if (value == "off") {
        c.overhead_budget = 0;
      } else if (!absl::SimpleAtod(value, &percent) || !(percent >= 0.1 && percent <= 50)) {
        return Bad(name, value, "expected a percentage of the program's time, 0.1..50, or off");
      } else {
        c.overhead_budget = percent / 100;
      }
    } else if (name == "CUSCOPE_MONITOR_TOP_KERNELS") {
      uint32_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 1 || n > 1000) return Bad(name, value, "expected 1..1000");
      c.monitor_top_kernels = n;
    } else if (name == "CUSCOPE_PROMETHEUS") {
      if (value.empty()) return Bad(name, value, "expected PORT or ADDRESS:PORT");
      c.prometheus = value;
    } else if (name == "CUSCOPE_CONTROL") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.control = *b;
    } else if (name == "CUSCOPE_QUEUE_TIMES") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.queue_times = *b;
    } else if (name == "CUSCOPE_LEAN_CALLS") {
      if (value == "callbacks") {
        c.lean_calls_by_records = false;
      } else if (value == "records") {
        c.lean_calls_by_records = true;
      } else {
        return Bad(name, value, "expected callbacks or records");
      }
    } else if (name == "CUSCOPE_QUIET") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.quiet = *b;
    } else if (name == "CUSCOPE_STACKS") {
      auto sampling = ParseStackSampling(value);
      if (!sampling.ok()) return Bad(name, value, std::string(sampling.status().message()));
      c.stacks = *sampling;
    } else if (name == "CUSCOPE_UNWINDER") {
      if (value == "libunwind") {
        c.unwinder = Unwinder::kLibunwind;
      } else if (value == "libgcc") {
        c.unwinder = Unwinder::kLibgcc;
      } else {
        return Bad(name, value, "expected libunwind or libgcc");
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown setting ", ShownValue(name),
                                                     " (known: CUSCOPE_OUTPUT, CUSCOPE_FORCE_OVERWRITE, CUSCOPE_KINDS, "
                                                     "CUSCOPE_BUFFER_SIZE, CUSCOPE_BUFFER_POOL_CAP, "
                                                     "CUSCOPE_FLUSH_PERIOD_MS, CUSCOPE_DELAY, CUSCOPE_DURATION, "
                                                     "CUSCOPE_CAPTURE_RANGE, CUSCOPE_NVTX_CAPTURE, CUSCOPE_QUIET, CUSCOPE_CONTROL, CUSCOPE_METRICS, "
                                                     "CUSCOPE_KERNEL_NAME, CUSCOPE_LAUNCH_SKIP, CUSCOPE_LAUNCH_COUNT, "
                                                     "CUSCOPE_PER_KERNEL_COUNT, CUSCOPE_REPLAY_MODE, "
                                                     "CUSCOPE_TOP_DOWN, CUSCOPE_TOP_DOWN_LAUNCHES, "
                                                     "CUSCOPE_GPU_METRICS_DEVICES, CUSCOPE_GPU_METRICS_FREQUENCY, "
                                                     "CUSCOPE_MODE, CUSCOPE_MONITOR_INTERVAL, CUSCOPE_MONITOR_TOP_KERNELS, CUSCOPE_DUTY_CYCLE, "
                                                     "CUSCOPE_OVERHEAD_BUDGET, "
                                                     "CUSCOPE_PROMETHEUS, CUSCOPE_FLIGHT_SPAN, CUSCOPE_FLIGHT_SIZE, "
                                                     "CUSCOPE_FLIGHT_STEP_THRESHOLD, CUSCOPE_FLIGHT_STEP_RANGE, CUSCOPE_FLIGHT_AFTER, "
                                                     "CUSCOPE_FLIGHT_REQUEST_THRESHOLD, "
                                                     "CUSCOPE_FLIGHT_IDLE_SHARE, CUSCOPE_FLIGHT_IDLE_SECONDS, "
                                                     "CUSCOPE_STACKS, CUSCOPE_UNWINDER, CUSCOPE_QUEUE_TIMES, CUSCOPE_LEAN_CALLS, "
                                                     "CUSCOPE_LIBRARY)"));
    }
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
      auto m = ExpandMetricList("sol,occupancy,stalls");
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

}  // namespace cuscope::core
