#include "lib/cupti/profiler_host.h"

#include "absl/strings/str_cat.h"
#include "lib/cupti/cupti_params.h"

namespace cuscope::cupti {

absl::StatusOr<ProfilerHost> ProfilerHost::Create(ProfilerApi& api, CUpti_ProfilerType type, const std::string& chip,
                                                  const std::vector<uint8_t>& counter_availability) {
  auto p = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = type;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = counter_availability.empty() ? nullptr : counter_availability.data();
  if (auto st = api.ProfilerHostInitialize(&p); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat(type == CUPTI_PROFILER_TYPE_PM_SAMPLING ? "PM sampling on chip \""
                                                                                         : "chip \"",
                                                chip, "\": ", st.message()));
  }
  return ProfilerHost(api, p.pHostObject);
}

ProfilerHost::ProfilerHost(ProfilerHost&& o) noexcept : api_(o.api_), obj_(o.obj_) { o.obj_ = nullptr; }

ProfilerHost& ProfilerHost::operator=(ProfilerHost&& o) noexcept {
  if (this != &o) {
    Deinitialize(*api_, obj_);
    api_ = o.api_;
    obj_ = o.obj_;
    o.obj_ = nullptr;
  }
  return *this;
}

ProfilerHost::~ProfilerHost() { Deinitialize(*api_, obj_); }

CUpti_Profiler_Host_Object* ProfilerHost::release() {
  CUpti_Profiler_Host_Object* o = obj_;
  obj_ = nullptr;
  return o;
}

void ProfilerHost::Deinitialize(ProfilerApi& api, CUpti_Profiler_Host_Object* obj) {
  if (obj == nullptr) return;
  auto p = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = obj;
  api.ProfilerHostDeinitialize(&p);
}

std::vector<const char*> CStrings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

absl::Status AddMetrics(ProfilerApi& api, CUpti_Profiler_Host_Object* host, const std::vector<std::string>& names) {
  std::vector<const char*> c = CStrings(names);
  auto a = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  a.pHostObject = host;
  a.ppMetricNames = c.data();
  a.numMetrics = c.size();
  return api.ProfilerHostConfigAddMetrics(&a);
}

absl::StatusOr<std::vector<double>> EvaluateToGpuValues(ProfilerApi& api, CUpti_Profiler_Host_Object* host,
                                                        const std::vector<const char*>& names,
                                                        const std::vector<uint8_t>& counter_data, size_t index) {
  std::vector<double> values(names.size(), 0.0);
  auto ev = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  ev.pHostObject = host;
  ev.pCounterDataImage = counter_data.data();
  ev.counterDataImageSize = counter_data.size();
  ev.rangeIndex = index;
  ev.ppMetricNames = const_cast<const char**>(names.data());
  ev.numMetrics = names.size();
  ev.pMetricValues = values.data();
  if (auto st = api.ProfilerHostEvaluateToGpuValues(&ev); !st.ok()) {
    return st;
  }
  return values;
}

absl::StatusOr<ConfigImage> GetConfigImage(ProfilerApi& api, CUpti_Profiler_Host_Object* host) {
  ConfigImage out;
  auto size = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  if (auto st = api.ProfilerHostGetConfigImageSize(&size); !st.ok()) {
    return st;
  }
  out.image.resize(size.configImageSize);
  auto image = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host;
  image.configImageSize = out.image.size();
  image.pConfigImage = out.image.data();
  if (auto st = api.ProfilerHostGetConfigImage(&image); !st.ok()) {
    return st;
  }
  auto passes = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = out.image.size();
  passes.pConfigImage = out.image.data();
  if (auto st = api.ProfilerHostGetNumOfPasses(&passes); !st.ok()) {
    return st;
  }
  out.passes = passes.numOfPasses;
  return out;
}

}  // namespace cuscope::cupti
