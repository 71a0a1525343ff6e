#include "lib/settings/config_settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/core/metric_sets.h"
#include "lib/core/terminal_text.h"

namespace cuscope::settings {
namespace {

// The setting as the error line shows it: a value of any length (a pattern of 90,000 characters)
// is cut, so the one line stays one readable line.
absl::Status Bad(const std::string& name, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(name, "=", core::ShownValue(value), ": ", core::ShownValue(why, 600)));
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

// A count setting into its field.
absl::Status SetCount(const std::string& name, const std::string& value, uint64_t& field) {
  auto n = ParseCount(name, value);
  if (!n.ok()) return n.status();
  field = *n;
  return absl::OkStatus();
}

}  // namespace

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> settings = {
    {"CUSCOPE_OUTPUT", [](const std::string& /*name*/, const std::string& value, Config& c) -> absl::Status {
       // Empty: no file, which only monitor mode allows (checked below).
       c.output = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FORCE_OVERWRITE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto b = ParseBool(name, value);
       if (!b.ok()) return b.status();
       c.force_overwrite = *b;
       return absl::OkStatus();
     }},
    {"CUSCOPE_KINDS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto k = ParseActivityKinds(value);
       if (!k.ok()) return Bad(name, value, std::string(k.status().message()));
       c.activity_kinds = *k;
       return absl::OkStatus();
     }},
    {"CUSCOPE_BUFFER_SIZE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto s = ParseSize(name, value);
       if (!s.ok()) return s.status();
       if (*s < (64u << 10)) return Bad(name, value, "a buffer must be at least 64K");
       c.buffer_bytes = *s;
       return absl::OkStatus();
     }},
    {"CUSCOPE_BUFFER_POOL_CAP", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto s = ParseSize(name, value);
       if (!s.ok()) return s.status();
       c.buffer_pool_cap_bytes = *s;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLUSH_PERIOD_MS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint32_t ms = 0;
       if (!absl::SimpleAtoi(value, &ms) || ms == 0 || ms > 60000) return Bad(name, value, "expected 1..60000 ms");
       c.flush_period_ms = ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_DELAY", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto s = ParseSeconds(name, value);
       if (!s.ok()) return s.status();
       c.delay_seconds = *s;
       return absl::OkStatus();
     }},
    {"CUSCOPE_DURATION", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto s = ParseSeconds(name, value);
       if (!s.ok()) return s.status();
       c.duration_seconds = *s;
       return absl::OkStatus();
     }},
    {"CUSCOPE_CAPTURE_RANGE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value != "none" && value != "cudaProfilerApi" && value != "nvtx") {
         return Bad(name, value, "expected none, cudaProfilerApi or nvtx");
       }
       c.capture_range = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_NVTX_CAPTURE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value.empty()) return Bad(name, value, "expected the name of an NVTX range");
       c.nvtx_capture = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_QUIET", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto b = ParseBool(name, value);
       if (!b.ok()) return b.status();
       c.quiet = *b;
       return absl::OkStatus();
     }},
    {"CUSCOPE_CONTROL", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto b = ParseBool(name, value);
       if (!b.ok()) return b.status();
       c.control = *b;
       return absl::OkStatus();
     }},
    {"CUSCOPE_METRICS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto m = core::ExpandMetricList(value);
       if (!m.ok()) return Bad(name, value, std::string(m.status().message()));
       c.metrics = *m;
       c.metrics_request = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_KERNEL_NAME", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value.empty()) return Bad(name, value, "expected a kernel name or regex:PATTERN");
       c.kernel_selection.kernel_name = value;
       if (auto sel = core::KernelSelector::Create(c.kernel_selection); !sel.ok()) {
         return Bad(name, value, std::string(sel.status().message()));
       }
       return absl::OkStatus();
     }},
    {"CUSCOPE_LAUNCH_SKIP",
     [](const std::string& name, const std::string& value, Config& c) {
       return SetCount(name, value, c.kernel_selection.launch_skip);
     }},
    {"CUSCOPE_LAUNCH_COUNT",
     [](const std::string& name, const std::string& value, Config& c) {
       return SetCount(name, value, c.kernel_selection.launch_count);
     }},
    {"CUSCOPE_PER_KERNEL_COUNT",
     [](const std::string& name, const std::string& value, Config& c) {
       return SetCount(name, value, c.kernel_selection.per_kernel_count);
     }},
    {"CUSCOPE_REPLAY_MODE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value == "application" || value == "user") {
         return Bad(name, value,
                    "only kernel replay runs inside the program (CUPTI's application and user replay need the "
                    "program, or the tool, to repeat the work once per pass)");
       }
       if (value != "kernel") return Bad(name, value, "expected kernel");
       c.replay_mode = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_TOP_DOWN", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint32_t n = 0;
       if (!absl::SimpleAtoi(value, &n) || n > 100) return Bad(name, value, "expected a number of kernels, 0..100");
       c.top_down_kernels = n;
       return absl::OkStatus();
     }},
    {"CUSCOPE_TOP_DOWN_LAUNCHES", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint64_t n = 0;
       if (!absl::SimpleAtoi(value, &n) || n == 0 || n > 1000) return Bad(name, value, "expected 1..1000 launches");
       c.top_down_launches = n;
       return absl::OkStatus();
     }},
    {"CUSCOPE_GPU_METRICS_DEVICES", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
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
       return absl::OkStatus();
     }},
    {"CUSCOPE_GPU_METRICS_FREQUENCY", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint32_t hz = 0;
       if (!absl::SimpleAtoi(value, &hz) || hz < 10 || hz > 200000) return Bad(name, value, "expected 10..200000 Hz");
       c.gpu_metrics_frequency_hz = hz;
       return absl::OkStatus();
     }},
    {"CUSCOPE_MODE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value == "trace") {
         c.mode = CollectionMode::kTrace;
       } else if (value == "monitor") {
         c.mode = CollectionMode::kMonitor;
       } else if (value == "flight") {
         c.mode = CollectionMode::kFlight;
       } else {
         return Bad(name, value, "expected trace, monitor or flight");
       }
       return absl::OkStatus();
     }},
    {"CUSCOPE_MONITOR_INTERVAL", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 0.1, 3600);
       if (!ms.ok()) return ms.status();
       c.monitor_interval_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_MONITOR_TOP_KERNELS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint32_t n = 0;
       if (!absl::SimpleAtoi(value, &n) || n < 1 || n > 1000) return Bad(name, value, "expected 1..1000");
       c.monitor_top_kernels = n;
       return absl::OkStatus();
     }},
    {"CUSCOPE_DUTY_CYCLE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       double percent = 0;
       if (!absl::SimpleAtod(value, &percent) || !(percent >= 1 && percent <= 100)) {
         return Bad(name, value, "expected a percentage of the time recorded, 1..100");
       }
       c.duty_cycle = percent / 100;
       return absl::OkStatus();
     }},
    {"CUSCOPE_DUTY_WINDOWS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint32_t n = 0;
       if (!absl::SimpleAtoi(value, &n) || n < 1 || n > 64) return Bad(name, value, "expected windows per interval, 1..64");
       c.duty_windows = n;
       return absl::OkStatus();
     }},
    {"CUSCOPE_DUTY_DETACH", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto b = ParseBool(name, value);
       if (!b.ok()) return b.status();
       c.duty_detach = *b;
       return absl::OkStatus();
     }},
    {"CUSCOPE_OVERHEAD_BUDGET", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       double percent = 0;
       if (value == "off") {
         c.overhead_budget = 0;
       } else if (!absl::SimpleAtod(value, &percent) || !(percent >= 0.1 && percent <= 50)) {
         return Bad(name, value, "expected a percentage of the program's time, 0.1..50, or off");
       } else {
         c.overhead_budget = percent / 100;
       }
       return absl::OkStatus();
     }},
    {"CUSCOPE_PROMETHEUS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value.empty()) return Bad(name, value, "expected PORT or ADDRESS:PORT");
       c.prometheus = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_SPAN", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 1, 3600);
       if (!ms.ok()) return ms.status();
       c.flight_span_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_SIZE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       uint64_t mib = 0;
       if (!absl::SimpleAtoi(value, &mib) || mib < 1 || mib > 65536) return Bad(name, value, "expected MiB from 1 to 65536");
       c.flight_size_bytes = mib << 20;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_STEP_THRESHOLD", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 0.001, 3600);
       if (!ms.ok()) return ms.status();
       c.flight_step_threshold_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_STEP_RANGE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value.empty()) return Bad(name, value, "expected the name of an NVTX range");
       c.flight_step_range = value;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_AFTER", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 0, 3600);
       if (!ms.ok()) return ms.status();
       c.flight_after_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 0.001, 3600);
       if (!ms.ok()) return ms.status();
       c.flight_request_threshold_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_IDLE_SHARE", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       double percent = 0;
       if (!absl::SimpleAtod(value, &percent) || !(percent >= 1) || percent > 100) {
         return Bad(name, value, "expected a percentage from 1 to 100");
       }
       c.flight_idle_share = percent / 100;
       return absl::OkStatus();
     }},
    {"CUSCOPE_FLIGHT_IDLE_SECONDS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto ms = ParseMillisecondsBetween(name, value, 1, 3600);
       if (!ms.ok()) return ms.status();
       c.flight_idle_window_ms = *ms;
       return absl::OkStatus();
     }},
    {"CUSCOPE_STACKS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto sampling = ParseStackSampling(value);
       if (!sampling.ok()) return Bad(name, value, std::string(sampling.status().message()));
       c.stacks = *sampling;
       return absl::OkStatus();
     }},
    {"CUSCOPE_UNWINDER", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value == "libunwind") {
         c.unwinder = process::Unwinder::kLibunwind;
       } else if (value == "libgcc") {
         c.unwinder = process::Unwinder::kLibgcc;
       } else {
         return Bad(name, value, "expected libunwind or libgcc");
       }
       return absl::OkStatus();
     }},
    {"CUSCOPE_QUEUE_TIMES", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       auto b = ParseBool(name, value);
       if (!b.ok()) return b.status();
       c.queue_times = *b;
       return absl::OkStatus();
     }},
    {"CUSCOPE_LEAN_CALLS", [](const std::string& name, const std::string& value, Config& c) -> absl::Status {
       if (value == "callbacks") {
         c.lean_calls_by_records = false;
       } else if (value == "records") {
         c.lean_calls_by_records = true;
       } else {
         return Bad(name, value, "expected callbacks or records");
       }
       return absl::OkStatus();
     }},
    {"CUSCOPE_LIBRARY", [](const std::string& /*name*/, const std::string& /*value*/, Config& /*c*/) -> absl::Status {
       // Read by `cuscope profile` to find the collector; nothing for the collector itself.
       return absl::OkStatus();
     }},
  };
  return settings;
}

const Setting* FindSetting(std::string_view name) {
  const std::vector<Setting>& all = Settings();
  const auto it = std::find_if(all.begin(), all.end(), [name](const Setting& s) { return name == s.name; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<std::string> SettingNames() {
  std::vector<std::string> names;
  for (const Setting& s : Settings()) names.emplace_back(s.name);
  return names;
}

}  // namespace cuscope::settings
