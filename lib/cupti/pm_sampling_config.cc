#include "lib/cupti/pm_sampling_config.h"

#include <cupti.h>
#include <cupti_profiler_host.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/cupti_status.h"

namespace cuscope::cupti {
namespace {

// A PM sampling host object, deinitialized with its owner.
// TODO(cuscope): metric_config.cc has the same lifetime for Range Profiler host objects; one
// helper taking the CUpti_ProfilerType would serve both.
struct HostDeleter {
  void operator()(CUpti_Profiler_Host_Object* host) const {
    auto p = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host;
    cuptiProfilerHostDeinitialize(&p);
  }
};
using Host = std::unique_ptr<CUpti_Profiler_Host_Object, HostDeleter>;

absl::StatusOr<Host> NewHost(const std::string& chip, const std::vector<uint8_t>& availability) {
  auto p = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  if (auto st = CuptiStatus(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize"); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("PM sampling on chip \"", chip, "\": ", st.message()));
  }
  return Host(p.pHostObject);
}

std::vector<const char*> Pointers(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

// One try at scheduling `names` together on a fresh host object (a failed add spoils the object).
struct Attempt {
  bool added = false;  // the chip has every name
  std::vector<uint8_t> image;
  size_t passes = 0;
};

absl::StatusOr<Attempt> Try(const std::string& chip, const std::vector<uint8_t>& availability,
                            const std::vector<std::string>& names) {
  auto host = NewHost(chip, availability);
  if (!host.ok()) return host.status();
  Attempt a;
  std::vector<const char*> c = Pointers(names);
  auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host->get();
  add.ppMetricNames = c.data();
  add.numMetrics = c.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) return a;
  a.added = true;
  auto size = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host->get();
  if (auto st = CuptiStatus(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
      !st.ok()) {
    return st;
  }
  a.image.resize(size.configImageSize);
  auto image = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host->get();
  image.configImageSize = a.image.size();
  image.pConfigImage = a.image.data();
  if (auto st = CuptiStatus(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage"); !st.ok()) {
    return st;
  }
  auto passes = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = a.image.size();
  passes.pConfigImage = a.image.data();
  if (auto st = CuptiStatus(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses"); !st.ok()) {
    return st;
  }
  a.passes = passes.numOfPasses;
  return a;
}

bool OnePass(const Attempt& a) { return a.added && a.passes <= 1; }

}  // namespace

std::vector<std::string> DefaultPmSamplingMetrics() {
  return {kPmGrActivePct,         kPmSmActivePct,           kPmSmIssuePct,
          kPmWarpsActivePct,      kPmTensorActivePct,       kPmDramReadPct,
          kPmDramWritePct,        kPmPcieReadBytesPerSecond, kPmPcieWriteBytesPerSecond,
          kPmNvlinkRxBytesPerSecond, kPmNvlinkTxBytesPerSecond};
}

absl::StatusOr<PmSamplingConfig> BuildPmSamplingConfig(const std::string& chip,
                                                       const std::vector<uint8_t>& counter_availability,
                                                       const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to sample");
  std::vector<std::string> asked;
  for (const auto& m : metrics) {
    if (std::find(asked.begin(), asked.end(), m) == asked.end()) asked.push_back(m);
  }
  PmSamplingConfig config;
  config.chip = chip;
  auto all = Try(chip, counter_availability, asked);
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
    auto attempt = Try(chip, counter_availability, with);
    if (!attempt.ok()) return attempt.status();
    if (OnePass(*attempt)) {
      config.metrics = std::move(with);
      config.config_image = std::move(attempt->image);
      continue;
    }
    // Told apart on a fresh object, since the failed add above may be any name's fault.
    auto alone = Try(chip, counter_availability, {m});
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
    const std::string& chip, const std::vector<uint8_t>& counter_availability,
    const std::vector<std::string>& metrics) {
  if (metrics.empty()) return absl::InvalidArgumentError("no metrics to evaluate");
  auto host = NewHost(chip, counter_availability);
  if (!host.ok()) return host.status();
  std::unique_ptr<PmSamplingEvaluator> e(new PmSamplingEvaluator());
  e->metrics_ = metrics;
  e->names_ = Pointers(e->metrics_);
  // The host object that evaluates is set up like the one that built the configuration, as
  // CUPTI's own PM sampling sample does; it also checks the names once more.
  auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host->get();
  add.ppMetricNames = e->names_.data();
  add.numMetrics = e->names_.size();
  if (auto st = CuptiStatus(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"); !st.ok()) {
    return st;
  }
  e->host_ = host->release();
  return e;
}

PmSamplingEvaluator::~PmSamplingEvaluator() {
  if (host_ != nullptr) HostDeleter()(host_);
}

absl::StatusOr<std::vector<double>> PmSamplingEvaluator::Evaluate(const std::vector<uint8_t>& counter_data,
                                                                  size_t sample) const {
  if (counter_data.empty()) return absl::InvalidArgumentError("no counter data to evaluate");
  std::vector<double> values(names_.size(), 0.0);
  auto ev = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  ev.pHostObject = host_;
  ev.pCounterDataImage = counter_data.data();
  ev.counterDataImageSize = counter_data.size();
  ev.rangeIndex = sample;
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
