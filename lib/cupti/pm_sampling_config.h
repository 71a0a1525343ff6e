// The host half of PM sampling (GPU counters over time, what `nsys --gpu-metrics-devices` shows):
// metric names → the configuration image the sampler programs the GPU with, and decoded counter
// data → metric values per sample.
//
// Like the Range Profiler's half (metric_config.h), this needs only the chip's name (and, on a live
// GPU, its counter-availability image): CUPTI's host API evaluates the chip's metric tables on the
// CPU, so configurations are built and checked on machines without a GPU. Unlike the Range
// Profiler, PM sampling cannot replay: everything must fit one pass of the counters.
#ifndef CUSCOPE_LIB_CUPTI_PM_SAMPLING_CONFIG_H_
#define CUSCOPE_LIB_CUPTI_PM_SAMPLING_CONFIG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct CUpti_Profiler_Host_Object;

namespace cuscope::cupti {

class ProfilerApi;

// ---- The default counters ----------------------------------------------------------------------
// core::counter::kPmDefaults (lib/core/counter_names.h), in that order. On a chip without some
// of them (no tensor pipes, no NVLink) BuildPmSamplingConfig leaves those out and the rest are
// sampled.
std::vector<std::string> DefaultPmSamplingMetrics();

// ---- Configuration ----------------------------------------------------------------------------
struct PmSamplingConfig {
  std::string chip;
  // The metrics scheduled, in the order asked for (duplicates dropped).
  std::vector<std::string> metrics;
  // Names the chip does not have (or this CUPTI cannot sample).
  std::vector<std::string> unknown;
  // Names the chip has but that do not fit one pass together with the metrics before them.
  std::vector<std::string> over_one_pass;
  std::vector<uint8_t> config_image;
};

// Builds the configuration for `metrics` on `chip` ("GH100", ...), with `api`'s host calls.
// `counter_availability` may be empty (offline: every counter assumed available). Metrics are
// taken in order while they fit one pass; the ones left out are named in `unknown` /
// `over_one_pass`. Errors: an empty list (InvalidArgument), an unknown chip (naming it), nothing
// left (NotFound, naming them all).
absl::StatusOr<PmSamplingConfig> BuildPmSamplingConfig(ProfilerApi& api, const std::string& chip,
                                                       const std::vector<uint8_t>& counter_availability,
                                                       const std::vector<std::string>& metrics);

// One line naming what BuildPmSamplingConfig left out and why; empty when nothing was.
std::string DescribeLeftOut(const PmSamplingConfig& config);

// ---- Evaluation -------------------------------------------------------------------------------
// Turns the samples of a decoded PM sampling counter-data image into metric values; owns a CUPTI
// host object for one chip and metric list, made and freed through `api` (which must outlive it).
class PmSamplingEvaluator {
 public:
  // Errors: an empty list, an unknown chip, a name the chip lacks (build the config first).
  static absl::StatusOr<std::unique_ptr<PmSamplingEvaluator>> Create(ProfilerApi& api, const std::string& chip,
                                                                     const std::vector<uint8_t>& counter_availability,
                                                                     const std::vector<std::string>& metrics);
  ~PmSamplingEvaluator();
  PmSamplingEvaluator(const PmSamplingEvaluator&) = delete;
  PmSamplingEvaluator& operator=(const PmSamplingEvaluator&) = delete;

  const std::vector<std::string>& metrics() const { return metrics_; }

  // The value of every metric, in metrics() order, for sample `sample` of `counter_data`. The image
  // must be one cuptiPmSamplingDecodeData filled (a malformed image crashes inside NVIDIA's
  // library, so this cannot be checked here); an empty one is refused.
  absl::StatusOr<std::vector<double>> Evaluate(const std::vector<uint8_t>& counter_data, size_t sample) const;

 private:
  explicit PmSamplingEvaluator(ProfilerApi& api) : api_(api) {}
  ProfilerApi& api_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_PM_SAMPLING_CONFIG_H_
