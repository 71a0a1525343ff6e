#include "lib/cupti/metric_config.h"

#include <cupti_profiler_host.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cupti/profiler_api.h"
#include "lib/cupti/profiler_host.h"

namespace cuscope::cupti {
namespace {

absl::StatusOr<ProfilerHost> RangeHost(ProfilerApi& api, const std::string& chip,
                                       const std::vector<uint8_t>& counter_availability) {
  return ProfilerHost::Create(api, CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, counter_availability);
}

}  // namespace

absl::StatusOr<MetricConfig> BuildMetricConfig(ProfilerApi& api, const std::string& chip,
                                               const std::vector<uint8_t>& counter_availability,
                                               const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to configure");
  MetricConfig config;
  config.chip = chip;
  auto host = RangeHost(api, chip, counter_availability);
  if (!host.ok()) return host.status();
  if (AddMetrics(api, host->get(), metrics).ok()) {
    config.metrics = metrics;
  } else {
    // One name spoils the whole call, and the host object with it: try each on a fresh object to
    // find which ones the chip lacks, then build from the rest.
    for (const auto& m : metrics) {
      auto probe = RangeHost(api, chip, counter_availability);
      if (!probe.ok()) return probe.status();
      (AddMetrics(api, probe->get(), {m}).ok() ? config.metrics : config.rejected).push_back(m);
    }
    if (config.metrics.empty()) {
      return absl::NotFoundError(absl::StrCat("chip ", chip, " has none of the metrics asked for: ",
                                              absl::StrJoin(config.rejected, ", ")));
    }
    host = RangeHost(api, chip, counter_availability);
    if (!host.ok()) return host.status();
    if (auto st = AddMetrics(api, host->get(), config.metrics); !st.ok()) return st;
  }
  auto image = GetConfigImage(api, host->get());
  if (!image.ok()) return image.status();
  config.config_image = std::move(image->image);
  config.passes = image->passes;
  return config;
}

absl::StatusOr<std::unique_ptr<MetricEvaluator>> MetricEvaluator::Create(
    ProfilerApi& api, const std::string& chip, const std::vector<uint8_t>& counter_availability,
    const std::vector<std::string>& metrics) {
  auto host = RangeHost(api, chip, counter_availability);
  if (!host.ok()) return host.status();
  std::unique_ptr<MetricEvaluator> e(new MetricEvaluator(api));
  e->metrics_ = metrics;
  e->names_ = CStrings(e->metrics_);
  e->host_ = host->release();
  return e;
}

MetricEvaluator::~MetricEvaluator() { ProfilerHost::Deinitialize(api_, host_); }

absl::StatusOr<std::vector<double>> MetricEvaluator::Evaluate(const std::vector<uint8_t>& counter_data,
                                                              size_t range) const {
  return EvaluateToGpuValues(api_, host_, names_, counter_data, range);
}

}  // namespace cuscope::cupti
