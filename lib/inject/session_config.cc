#include "lib/inject/session_config.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cuscope::inject {
namespace {

// Seconds as text that parses back to the same double (absl::StrCat keeps 6 digits).
std::string Exact(double seconds) { return absl::StrFormat("%.17g", seconds); }

}  // namespace

absl::StatusOr<settings::Config> ConfigFromSessionOptions(const SessionOptions& o) {
  std::vector<std::pair<std::string, std::string>> settings;
  const auto set = [&settings](const char* name, std::string value) { settings.emplace_back(name, std::move(value)); };
  set("CUSCOPE_OUTPUT", o.output);
  if (o.force_overwrite) set("CUSCOPE_FORCE_OVERWRITE", "1");
  if (!o.activity_kinds.empty()) set("CUSCOPE_KINDS", absl::StrJoin(o.activity_kinds, ","));
  if (o.buffer_bytes != 0) set("CUSCOPE_BUFFER_SIZE", absl::StrCat(o.buffer_bytes));
  if (o.buffer_pool_cap_bytes != 0) set("CUSCOPE_BUFFER_POOL_CAP", absl::StrCat(o.buffer_pool_cap_bytes));
  if (o.flush_period_ms != 0) set("CUSCOPE_FLUSH_PERIOD_MS", absl::StrCat(o.flush_period_ms));
  if (o.quiet) set("CUSCOPE_QUIET", "1");
  if (!o.metrics.empty()) set("CUSCOPE_METRICS", o.metrics);
  if (!o.kernel_name.empty()) set("CUSCOPE_KERNEL_NAME", o.kernel_name);
  if (o.launch_skip != 0) set("CUSCOPE_LAUNCH_SKIP", absl::StrCat(o.launch_skip));
  if (o.launch_count != 0) set("CUSCOPE_LAUNCH_COUNT", absl::StrCat(o.launch_count));
  if (o.per_kernel_count != 1) set("CUSCOPE_PER_KERNEL_COUNT", absl::StrCat(o.per_kernel_count));
  if (o.delay_seconds != 0) set("CUSCOPE_DELAY", Exact(o.delay_seconds));
  if (o.duration_seconds != 0) set("CUSCOPE_DURATION", Exact(o.duration_seconds));
  if (o.top_down != 0) set("CUSCOPE_TOP_DOWN", absl::StrCat(o.top_down));
  if (o.top_down_launches != 3) set("CUSCOPE_TOP_DOWN_LAUNCHES", absl::StrCat(o.top_down_launches));
  if (!o.gpu_metrics_devices.empty()) set("CUSCOPE_GPU_METRICS_DEVICES", o.gpu_metrics_devices);
  if (o.gpu_metrics_frequency_hz != 0) set("CUSCOPE_GPU_METRICS_FREQUENCY", absl::StrCat(o.gpu_metrics_frequency_hz));
  if (!o.mode.empty()) set("CUSCOPE_MODE", o.mode);
  if (o.monitor_interval_ms != 0) set("CUSCOPE_MONITOR_INTERVAL", Exact(o.monitor_interval_ms / 1000.0));
  if (!o.prometheus.empty()) set("CUSCOPE_PROMETHEUS", o.prometheus);
  if (o.flight_span_seconds != 0) set("CUSCOPE_FLIGHT_SPAN", Exact(o.flight_span_seconds));
  if (o.flight_size_mib != 0) set("CUSCOPE_FLIGHT_SIZE", absl::StrCat(o.flight_size_mib));
  if (o.flight_step_threshold_seconds != 0) set("CUSCOPE_FLIGHT_STEP_THRESHOLD", Exact(o.flight_step_threshold_seconds));
  if (o.flight_after_seconds != 0) set("CUSCOPE_FLIGHT_AFTER", Exact(o.flight_after_seconds));
  // Not options of the struct (its layout is the library's ABI): the control socket's switch and
  // the flight recorder's NVTX and idle triggers, read from the environment as for injected
  // programs.
  for (const char* name : {"CUSCOPE_CONTROL", "CUSCOPE_FLIGHT_STEP_RANGE", "CUSCOPE_FLIGHT_IDLE_SHARE",
                           "CUSCOPE_FLIGHT_IDLE_SECONDS"}) {
    if (const char* value = std::getenv(name); value != nullptr) set(name, value);
  }
  return settings::ParseConfigFromEnvironment(settings);
}

}  // namespace cuscope::inject
