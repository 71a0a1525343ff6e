#include "lib/cupti/metric_config.h"

#include <cupti.h>
#include <cupti_profiler_host.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/cupti_status.h"

namespace cuscope::cupti {
namespace {

// A CUPTI host object for one chip; deinitialized when it goes out of scope.
class HostObject {
 public:
  static absl::StatusOr<HostObject> Create(const std::string& chip, const std::vector<uint8_t>& availability) {
    auto p = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    if (auto st = CuptiStatus(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize"); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("chip \"", chip, "\": ", st.message()));
    }
    return HostObject(p.pHostObject);
  }
  HostObject(HostObject&& o) noexcept : obj_(o.obj_) { o.obj_ = nullptr; }
  HostObject& operator=(HostObject&& o) noexcept {
    if (this != &o) {
      Reset();
      obj_ = o.obj_;
      o.obj_ = nullptr;
    }
    return *this;
  }
  ~HostObject() { Reset(); }
  CUpti_Profiler_Host_Object* get() const { return obj_; }
  CUpti_Profiler_Host_Object* release() {
    CUpti_Profiler_Host_Object* o = obj_;
    obj_ = nullptr;
    return o;
  }

 private:
  explicit HostObject(CUpti_Profiler_Host_Object* obj) : obj_(obj) {}
  void Reset() {
    if (obj_ == nullptr) return;
    auto p = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = obj_;
    cuptiProfilerHostDeinitialize(&p);
    obj_ = nullptr;
  }
  CUpti_Profiler_Host_Object* obj_;
};

std::vector<const char*> CStrings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

CUptiResult AddMetrics(CUpti_Profiler_Host_Object* host, const std::vector<std::string>& names) {
  std::vector<const char*> c = CStrings(names);
  auto a = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  a.pHostObject = host;
  a.ppMetricNames = c.data();
  a.numMetrics = c.size();
  return cuptiProfilerHostConfigAddMetrics(&a);
}

}  // namespace

absl::StatusOr<MetricConfig> BuildMetricConfig(const std::string& chip, const std::vector<uint8_t>& counter_availability,
                                               const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to configure");
  MetricConfig config;
  config.chip = chip;
  auto host = HostObject::Create(chip, counter_availability);
  if (!host.ok()) return host.status();
  if (AddMetrics(host->get(), metrics) == CUPTI_SUCCESS) {
    config.metrics = metrics;
  } else {
    // One name spoils the whole call, and the host object with it: try each on a fresh object to
    // find which ones the chip lacks, then build from the rest.
    for (const auto& m : metrics) {
      auto probe = HostObject::Create(chip, counter_availability);
      if (!probe.ok()) return probe.status();
      (AddMetrics(probe->get(), {m}) == CUPTI_SUCCESS ? config.metrics : config.rejected).push_back(m);
    }
    if (config.metrics.empty()) {
      return absl::NotFoundError(absl::StrCat("chip ", chip, " has none of the metrics asked for: ",
                                              absl::StrJoin(config.rejected, ", ")));
    }
    host = HostObject::Create(chip, counter_availability);
    if (!host.ok()) return host.status();
    if (auto st = CuptiStatus(AddMetrics(host->get(), config.metrics), "cuptiProfilerHostConfigAddMetrics");
        !st.ok()) {
      return st;
    }
  }
  auto size = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host->get();
  if (auto st = CuptiStatus(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
      !st.ok()) {
    return st;
  }
  config.config_image.resize(size.configImageSize);
  auto image = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host->get();
  image.configImageSize = config.config_image.size();
  image.pConfigImage = config.config_image.data();
  if (auto st = CuptiStatus(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage"); !st.ok()) {
    return st;
  }
  auto passes = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = config.config_image.size();
  passes.pConfigImage = config.config_image.data();
  if (auto st = CuptiStatus(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses"); !st.ok()) {
    return st;
  }
  config.passes = passes.numOfPasses;
  return config;
}

absl::StatusOr<std::unique_ptr<MetricEvaluator>> MetricEvaluator::Create(
    const std::string& chip, const std::vector<uint8_t>& counter_availability,
    const std::vector<std::string>& metrics) {
  auto host = HostObject::Create(chip, counter_availability);
  if (!host.ok()) return host.status();
  std::unique_ptr<MetricEvaluator> e(new MetricEvaluator());
  e->metrics_ = metrics;
  e->names_ = CStrings(e->metrics_);
  e->host_ = host->release();
  return e;
}

MetricEvaluator::~MetricEvaluator() {
  if (host_ == nullptr) return;
  auto p = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  cuptiProfilerHostDeinitialize(&p);
}

absl::StatusOr<std::vector<double>> MetricEvaluator::Evaluate(const std::vector<uint8_t>& counter_data,
                                                              size_t range) const {
  std::vector<double> values(names_.size(), 0.0);
  auto ev = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  ev.pHostObject = host_;
  ev.pCounterDataImage = counter_data.data();
  ev.counterDataImageSize = counter_data.size();
  ev.rangeIndex = range;
  ev.ppMetricNames = const_cast<const char**>(names_.data());
  ev.numMetrics = names_.size();
  ev.pMetricValues = values.data();
  if (auto st = CuptiStatus(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      !st.ok()) {
    return st;
  }
  return values;
}

}  // namespace cuscope::cupti
