// The host half of Range Profiler collection: turning metric names into the configuration image
// the GPU is programmed with, and counter data back into metric values.
//
// This half needs only the chip's name (and, on a live GPU, its counter-availability image), not a
// device: CUPTI's host API evaluates the chip's metric tables on the CPU, so configurations can be
// built and checked anywhere.
#ifndef CUSCOPE_LIB_CUPTI_METRIC_CONFIG_H_
#define CUSCOPE_LIB_CUPTI_METRIC_CONFIG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct CUpti_Profiler_Host_Object;

namespace cuscope::cupti {

class ProfilerApi;

struct MetricConfig {
  std::string chip;
  // The metrics the chip has, in the order asked for.
  std::vector<std::string> metrics;
  // The ones it does not have (or that this CUPTI cannot schedule), dropped from the rest.
  std::vector<std::string> rejected;
  std::vector<uint8_t> config_image;
  // Replays of a kernel needed to collect every metric.
  size_t passes = 0;
};

// Builds the configuration for `metrics` on `chip` ("GH100", ...), with `api`'s host calls.
// `counter_availability` may be empty (offline: every counter assumed available). A metric the
// chip lacks is named in `rejected` and the rest still builds; it is an error only when nothing is
// left.
absl::StatusOr<MetricConfig> BuildMetricConfig(ProfilerApi& api, const std::string& chip,
                                               const std::vector<uint8_t>& counter_availability,
                                               const std::vector<std::string>& metrics);

// Evaluates counter data for one chip and metric list; owns a CUPTI host object, made and freed
// through `api` (which must outlive it).
class MetricEvaluator {
 public:
  static absl::StatusOr<std::unique_ptr<MetricEvaluator>> Create(ProfilerApi& api, const std::string& chip,
                                                                 const std::vector<uint8_t>& counter_availability,
                                                                 const std::vector<std::string>& metrics);
  ~MetricEvaluator();
  MetricEvaluator(const MetricEvaluator&) = delete;
  MetricEvaluator& operator=(const MetricEvaluator&) = delete;

  // The values of every metric for range `range` of a decoded counter-data image.
  absl::StatusOr<std::vector<double>> Evaluate(const std::vector<uint8_t>& counter_data, size_t range) const;

 private:
  explicit MetricEvaluator(ProfilerApi& api) : api_(api) {}
  ProfilerApi& api_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_METRIC_CONFIG_H_
