#include "lib/cupti/pm_sampling_config.h"

#include <cupti_profiler_host.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/core/counter_names.h"
#include "lib/cupti/profiler_api.h"
#include "lib/cupti/profiler_host.h"

namespace cuscope::cupti {
namespace {

absl::StatusOr<ProfilerHost> PmHost(ProfilerApi& api, const std::string& chip,
                                    const std::vector<uint8_t>& availability) {
  return ProfilerHost::Create(api, CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, availability);
}

// One try at scheduling `names` together on a fresh host object (a failed add spoils the object).
struct Attempt {
  bool added = false;  // the chip has every name
  std::vector<uint8_t> image;
  size_t passes = 0;
};

absl::StatusOr<Attempt> Try(ProfilerApi& api, const std::string& chip, const std::vector<uint8_t>& availability,
                            const std::vector<std::string>& names) {
  auto host = PmHost(api, chip, availability);
  if (!host.ok()) return host.status();
  Attempt a;
  if (!AddMetrics(api, host->get(), names).ok()) return a;
  a.added = true;
  auto image = GetConfigImage(api, host->get());
  if (!image.ok()) return image.status();
  a.image = std::move(image->image);
  a.passes = image->passes;
  return a;
}

bool OnePass(const Attempt& a) { return a.added && a.passes <= 1; }

}  // namespace

std::vector<std::string> DefaultPmSamplingMetrics() {
  return {std::begin(core::counter::kPmDefaults), std::end(core::counter::kPmDefaults)};
}

absl::StatusOr<PmSamplingConfig> BuildPmSamplingConfig(ProfilerApi& api, const std::string& chip,
                                                       const std::vector<uint8_t>& counter_availability,
                                                       const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to sample");
  std::vector<std::string> asked;
  for (const auto& m : metrics) {
    if (std::find(asked.begin(), asked.end(), m) == asked.end()) asked.push_back(m);
  }
  PmSamplingConfig config;
  config.chip = chip;
  auto all = Try(api, chip, counter_availability, asked);
  if (!all.ok()) return all.status();
  if (OnePass(*all)) {
    config.metrics = std::move(asked);
    config.config_image = std::move(all->image);
    return config;
  }
  // Something does not fit. Take the names in order, each kept when the ones kept so far plus it
  // still fit one pass: the caller's first choices win. A name the chip lacks fails on its own.
  for (const auto& m : asked) {
    std::vector<std::string> with = config.metrics;
    with.push_back(m);
    auto attempt = Try(api, chip, counter_availability, with);
    if (!attempt.ok()) return attempt.status();
    if (OnePass(*attempt)) {
      config.metrics = std::move(with);
      config.config_image = std::move(attempt->image);
      continue;
    }
    // Told apart on a fresh object, since the failed add above may be any name's fault.
    auto alone = Try(api, chip, counter_availability, {m});
    if (!alone.ok()) return alone.status();
    (alone->added ? config.over_one_pass : config.unknown).push_back(m);
  }
  if (config.metrics.empty()) {
    return absl::NotFoundError(absl::StrCat("no metric asked for can be PM-sampled on chip ", chip, ": ",
                                            DescribeLeftOut(config)));
  }
  return config;
}

std::string DescribeLeftOut(const PmSamplingConfig& config) {
  std::vector<std::string> parts;
  if (!config.unknown.empty()) {
    parts.push_back(absl::StrCat("no such metric on ", config.chip, ": ", absl::StrJoin(config.unknown, ", ")));
  }
  if (!config.over_one_pass.empty()) {
    parts.push_back(absl::StrCat("not in one pass with the others (PM sampling cannot replay): ",
                                 absl::StrJoin(config.over_one_pass, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

absl::StatusOr<std::unique_ptr<PmSamplingEvaluator>> PmSamplingEvaluator::Create(
    ProfilerApi& api, const std::string& chip, const std::vector<uint8_t>& counter_availability,
    const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to evaluate");
  auto host = PmHost(api, chip, counter_availability);
  if (!host.ok()) return host.status();
  std::unique_ptr<PmSamplingEvaluator> e(new PmSamplingEvaluator(api));
  e->metrics_ = metrics;
  e->names_ = CStrings(e->metrics_);
  // The host object that evaluates is set up like the one that built the configuration, as
  // CUPTI's own PM sampling sample does; it also checks the names once more.
  if (auto st = AddMetrics(api, host->get(), e->metrics_); !st.ok()) return st;
  e->host_ = host->release();
  return e;
}

PmSamplingEvaluator::~PmSamplingEvaluator() {
  ProfilerHost::Deinitialize(api_, host_);
}

absl::StatusOr<std::vector<double>> PmSamplingEvaluator::Evaluate(const std::vector<uint8_t>& counter_data,
                                                                  size_t sample) const {
  if (counter_data.empty()) return absl::InvalidArgumentError("no counter data to evaluate");
  return EvaluateToGpuValues(api_, host_, names_, counter_data, sample);
}

}  // namespace cuscope::cupti
