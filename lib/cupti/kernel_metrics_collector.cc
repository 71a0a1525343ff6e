#include "lib/cupti/kernel_metrics_collector.h"

#include <dlfcn.h>

#include <algorithm>
#include <thread>

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/core/metric_sets.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/cupti_status.h"
#include "lib/cupti/launch_callbacks.h"
#include "lib/cupti/metric_config.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti {
namespace {

// Ranges one counter-data image holds. A profiled launch is one range; the spare room takes the
// launches of other threads that slip into the same window (they are replayed too, and dropped).
constexpr size_t kMaxRanges = 4;

thread_local uint64_t t_runtime_correlation = 0;

using StreamIsCapturingFn = CUresult (*)(CUstream, CUstreamCaptureStatus*);

// cuStreamIsCapturing from the driver the program already loaded; nullptr if it has none.
StreamIsCapturingFn StreamIsCapturing() {
  static StreamIsCapturingFn fn = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return lib == nullptr ? nullptr : reinterpret_cast<StreamIsCapturingFn>(dlsym(lib, "cuStreamIsCapturing"));
  }();
  return fn;
}

struct LaunchInfo {
  core::LaunchShape shape;
  CUstream stream = nullptr;
};

LaunchInfo ReadLaunch(CUpti_CallbackId cbid, const void* params) {
  LaunchInfo l;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchKernel_params*>(params);
      l.shape.grid = {p->gridDimX, p->gridDimY, p->gridDimZ};
      l.shape.block = {p->blockDimX, p->blockDimY, p->blockDimZ};
      l.stream = p->hStream;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchCooperativeKernel_params*>(params);
      l.shape.grid = {p->gridDimX, p->gridDimY, p->gridDimZ};
      l.shape.block = {p->blockDimX, p->blockDimY, p->blockDimZ};
      l.stream = p->hStream;
      break;
    }
    default: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      if (p->config != nullptr) {
        l.shape.grid = {p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ};
        l.shape.block = {p->config->blockDimX, p->config->blockDimY, p->config->blockDimZ};
        l.stream = p->config->hStream;
      }
      break;
    }
  }
  return l;
}

const char* SupportWord(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
  }
}

}  // namespace

// One context's Range Profiler: its configuration, counter data and evaluator.
struct KernelMetricsCollector::ContextProfiler {
  explicit ContextProfiler(ProfilerApi& a) : api(a) {}

  ProfilerApi& api;
  CUcontext ctx = nullptr;
  uint32_t device = 0;
  MetricConfig config;
  std::unique_ptr<MetricEvaluator> evaluator;
  CUpti_RangeProfiler_Object* object = nullptr;
  std::vector<const char*> metric_names;
  std::vector<uint8_t> counter_data;

  // Enables the profiler on the context and arms it for the next launch.
  absl::Status Enable() {
    auto en = Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = ctx;
    if (auto st = api.RangeProfilerEnable(&en); !st.ok()) return st;
    object = en.pRangeProfilerObject;
    metric_names.clear();
    for (const auto& m : config.metrics) metric_names.push_back(m.c_str());
    auto size = Params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object;
    size.pMetricNames = metric_names.data();
    size.numMetrics = metric_names.size();
    size.maxNumOfRanges = kMaxRanges;
    size.maxNumRangeTreeNodes = kMaxRanges;
    if (auto st = api.RangeProfilerGetCounterDataSize(&size); !st.ok()) return st;
    counter_data.assign(size.counterDataSize, 0);
    return Arm();
  }

  // A fresh counter-data image and the configuration, ready for Start.
  absl::Status Arm() {
    auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    if (auto st = api.RangeProfilerCounterDataImageInitialize(&init); !st.ok()) return st;
    auto set = Params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = object;
    set.configSize = config.config_image.size();
    set.pConfig = config.config_image.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    // Kernel replay needs auto ranges (user ranges with kernel replay are refused): every kernel
    // launched between Start and Stop is one range.
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_KernelReplay;
    set.maxRangesPerPass = kMaxRanges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    return api.RangeProfilerSetConfig(&set);
  }

  void Disable() {
    if (object == nullptr) return;
    auto d = Params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    d.pRangeProfilerObject = object;
    api.RangeProfilerDisable(&d);
    object = nullptr;
  }

  absl::Status Start() {
    auto p = Params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object;
    return api.RangeProfilerStart(&p);
  }

  // Stops, decodes and evaluates; the values of the one range the launch made.
  absl::StatusOr<std::vector<double>> StopAndRead() {
    auto stop = Params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object;
    if (auto st = api.RangeProfilerStop(&stop); !st.ok()) return st;
    if (!stop.isAllPassSubmitted) {
      return absl::InternalError("the Range Profiler did not submit every pass of the kernel replay");
    }
    auto decode = Params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = object;
    if (auto st = api.RangeProfilerDecodeData(&decode); !st.ok()) return st;
    auto info = Params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    if (auto st = api.RangeProfilerGetCounterDataInfo(&info); !st.ok()) return st;
    if (info.numTotalRanges != 1) {
      return absl::AbortedError(absl::StrCat(info.numTotalRanges, " ranges where one launch was profiled"));
    }
    return evaluator->Evaluate(counter_data, 0);
  }
};

struct KernelMetricsCollector::Active {
  ContextProfiler* profiler = nullptr;
  uint64_t correlation_id = 0;
  std::string kernel_name;
  core::LaunchShape shape;
  uint64_t start_ns = 0;
  int target = -1;  // the top-down target chosen, or -1
};

// The launch this thread is profiling, from its API entry to its exit.
static thread_local std::unique_ptr<KernelMetricsCollector::Active> t_active;

KernelMetricsCollector::KernelMetricsCollector(CuptiApi& cupti, const settings::Config& config, Emit emit, Warn warn)
    : cupti_(cupti), config_(config), emit_(std::move(emit)), warn_(std::move(warn)) {
  // Every profiled launch carries its duration: the analyzer counts a replayed launch's GPU time
  // from it, whatever else was asked for.
  const std::string duration(core::metric::kDuration);
  if (std::find(config_.metrics.begin(), config_.metrics.end(), duration) == config_.metrics.end()) {
    config_.metrics.insert(config_.metrics.begin(), duration);
  }
  auto selector = core::KernelSelector::Create(config_.kernel_selection);
  if (selector.ok()) {
    selector_.emplace(std::move(*selector));
  } else {
    TurnOff(std::string(selector.status().message()));
  }
}

KernelMetricsCollector::~KernelMetricsCollector() = default;

std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> KernelMetricsCollector::Callbacks() {
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> out;
  for (CUpti_CallbackId id : kDriverLaunches) out.emplace_back(CUPTI_CB_DOMAIN_DRIVER_API, id);
  for (CUpti_CallbackId id : kRuntimeLaunches) out.emplace_back(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  out.emplace_back(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  return out;
}

void KernelMetricsCollector::TurnOff(const std::string& why) {
  if (off_.exchange(true)) return;
  warn_(absl::StrCat("kernel metrics are off: ", why, "; the timeline goes on"));
}

void KernelMetricsCollector::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data,
                                        bool timeline_open) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      ReleaseProfiler(static_cast<const CUpti_ResourceData*>(data)->context);
    }
    return;
  }
  const auto& info = *static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    t_runtime_correlation = info.callbackSite == CUPTI_API_ENTER ? info.correlationId : 0;
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (info.callbackSite == CUPTI_API_ENTER) {
    // The top-down profiles after its timeline window has closed.
    if (timeline_open || config_.top_down_kernels > 0) OnLaunchEnter(cbid, info);
  } else {
    OnLaunchExit(info);
  }
}

KernelMetricsCollector::ContextProfiler* KernelMetricsCollector::ProfilerFor(CUcontext ctx) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = contexts_.find(ctx); it != contexts_.end()) return it->second.get();
  }
  // First selected launch on this context. Only the thread holding busy_ gets here.
  ProfilerApi& api = cupti_.Profiler();
  if (!profiler_initialized_) {
    auto init = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (auto st = api.ProfilerInitialize(&init); !st.ok()) {
      TurnOff(ExplainCounterError(st));
      return nullptr;
    }
    profiler_initialized_ = true;
  }
  auto p = std::make_unique<ContextProfiler>(api);
  p->ctx = ctx;
  if (auto device = api.DeviceId(ctx); device.ok()) {
    p->device = *device;
  } else {
    TurnOff(ExplainCounterError(device.status()));
    return nullptr;
  }
  auto support = Params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  support.cuDevice = static_cast<CUdevice>(p->device);
  support.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (auto st = api.DeviceSupported(&support); !st.ok()) {
    TurnOff(ExplainCounterError(st));
    return nullptr;
  }
  if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    TurnOff(absl::StrCat("device ", p->device, " does not support range profiling (architecture ",
                         SupportWord(support.architecture), ", SLI ", SupportWord(support.sli), ", vGPU ",
                         SupportWord(support.vGpu), ", confidential computing ",
                         SupportWord(support.confidentialCompute), ", CMP ", SupportWord(support.cmp), ", WSL ",
                         SupportWord(support.wsl), ")"));
    return nullptr;
  }
  auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = p->device;
  if (auto st = api.ChipName(&chip); !st.ok()) {
    TurnOff(ExplainCounterError(st));
    return nullptr;
  }
  const std::string chip_name = chip.pChipName != nullptr ? chip.pChipName : "";
  auto avail = Params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = ctx;
  if (auto st = api.ProfilerCounterAvailability(&avail); !st.ok()) {
    TurnOff(ExplainCounterError(st));
    return nullptr;
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (auto st = api.ProfilerCounterAvailability(&avail); !st.ok()) {
    TurnOff(ExplainCounterError(st));
    return nullptr;
  }
  auto config = BuildMetricConfig(api, chip_name, availability, config_.metrics);
  if (!config.ok()) {
    TurnOff(std::string(config.status().message()));
    return nullptr;
  }
  if (!config->rejected.empty() && !rejected_reported_) {
    rejected_reported_ = true;
    const size_t rest = config->metrics.size();
    warn_(absl::StrCat("not collected, chip ", chip_name, " has no such metric: ", absl::StrJoin(config->rejected, ", "),
                       "; the ", rest == 1 ? "other metric is" : absl::StrCat(rest, " others are"), " collected"));
  }
  p->config = std::move(*config);
  auto evaluator = MetricEvaluator::Create(api, chip_name, availability, p->config.metrics);
  if (!evaluator.ok()) {
    TurnOff(std::string(evaluator.status().message()));
    return nullptr;
  }
  p->evaluator = std::move(*evaluator);
  if (auto st = p->Enable(); !st.ok()) {
    p->Disable();
    TurnOff(ExplainCounterError(st));
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = contexts_[ctx];
  slot = std::move(p);
  return slot.get();
}

void KernelMetricsCollector::OnLaunchEnter(CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
  if (off_.load(std::memory_order_relaxed) || t_active != nullptr) return;
  if (info.symbolName == nullptr || info.context == nullptr) return;
  // One launch at a time: another thread's launch meanwhile goes unprofiled instead of waiting.
  if (busy_.exchange(true, std::memory_order_acquire)) return;
  bool keep_busy = false;
  do {
    const LaunchInfo launch = ReadLaunch(cbid, info.functionParams);
    if (!MayChoose()) break;
    // A launch being captured into a graph does not run now: nothing to replay.
    if (StreamIsCapturingFn fn = StreamIsCapturing(); fn != nullptr) {
      CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
      if (fn(launch.stream, &capture) != CUDA_SUCCESS || capture != CU_STREAM_CAPTURE_STATUS_NONE) break;
    }
    int target = -1;
    if (!Choose(info.symbolName, launch.shape, &target)) break;
    // The metrics window opens here: setting the profiler up on first use is part of the cost.
    const uint64_t start_ns = cupti_.Timestamp();
    ContextProfiler* profiler = ProfilerFor(info.context);
    if (profiler == nullptr) break;
    auto active = std::make_unique<Active>();
    active->profiler = profiler;
    active->correlation_id = t_runtime_correlation != 0 ? t_runtime_correlation : info.correlationId;
    active->kernel_name = info.symbolName;
    active->shape = launch.shape;
    active->start_ns = start_ns;
    active->target = target;
    if (auto st = profiler->Start(); !st.ok()) {
      // The start's undo: metrics are off for good from here, so the context's profiler lets go
      // of the GPU's counters now (for the counters over time, or another tool), not at the end.
      ReleaseProfiler(info.context);
      TurnOff(ExplainCounterError(st));
      break;
    }
    t_active = std::move(active);
    keep_busy = true;
  } while (false);
  if (!keep_busy) busy_.store(false, std::memory_order_release);
}

void KernelMetricsCollector::OnLaunchExit(const CUpti_CallbackData& /*info*/) {
  if (t_active == nullptr) return;
  std::unique_ptr<Active> active = std::move(t_active);
  ContextProfiler* p = active->profiler;
  auto values = p->StopAndRead();
  const uint64_t end = cupti_.Timestamp();
  if (values.ok()) {
    ProfiledLaunch out;
    out.correlation_id = active->correlation_id;
    out.device = p->device;
    out.kernel_name = std::move(active->kernel_name);
    out.shape = active->shape;
    out.passes = static_cast<uint32_t>(p->config.passes);
    out.start_ns = active->start_ns;
    out.end_ns = end;
    out.values.reserve(values->size());
    for (size_t i = 0; i < values->size(); ++i) out.values.emplace_back(p->config.metrics[i], (*values)[i]);
    profiled_.fetch_add(1);
    emit_(std::move(out));
  } else if (absl::IsAborted(values.status())) {
    // In a program that launches from several threads, their kernels can fall between this
    // launch's start and stop: its profile is not one launch's. A later launch of the target is
    // profiled instead (on the H200 an inference server with 4 workers otherwise got 2 of 6).
    GiveBack(active->target);
  } else {
    TurnOff(ExplainCounterError(values.status()));
  }
  // Ready for the next launch; a profiler that cannot be re-armed is set up again from scratch.
  if (!off_.load()) {
    if (auto st = p->Arm(); !st.ok()) {
      p->Disable();
      if (auto again = p->Enable(); !again.ok()) TurnOff(ExplainCounterError(again));
    }
  }
  busy_.store(false, std::memory_order_release);
}

bool KernelMetricsCollector::MayChoose() {
  std::lock_guard<std::mutex> lock(mu_);
  if (config_.top_down_kernels > 0) {
    if (!targets_) return false;
    for (size_t i = 0; i < targets_->size(); ++i) {
      if (target_profiled_[i] < launches_each_) return true;
    }
    return false;
  }
  return selector_ && !selector_->Exhausted();
}

bool KernelMetricsCollector::Choose(std::string_view mangled_name, const core::LaunchShape& shape, int* target) {
  std::lock_guard<std::mutex> lock(mu_);
  *target = -1;
  if (config_.top_down_kernels == 0) return selector_->Select(mangled_name, shape);
  if (!targets_) return false;
  for (size_t i = 0; i < targets_->size(); ++i) {
    const auto& t = (*targets_)[i];
    if (t.name == mangled_name && t.shape.grid == shape.grid && t.shape.block == shape.block) {
      if (target_profiled_[i] >= launches_each_) return false;
      ++target_profiled_[i];
      *target = static_cast<int>(i);
      return true;
    }
  }
  return false;
}

void KernelMetricsCollector::GiveBack(int target) {
  std::lock_guard<std::mutex> lock(mu_);
  if (target < 0 || static_cast<size_t>(target) >= target_profiled_.size() || target_profiled_[target] == 0) return;
  // Bounded: each try replays the kernel; a target that keeps failing keeps what it got.
  if (target_given_back_[target] >= kMaxTriesPerLaunch * launches_each_) return;
  ++target_given_back_[target];
  --target_profiled_[target];
}

void KernelMetricsCollector::SetTargets(std::vector<core::HotKernelChoice> targets, uint64_t launches_each) {
  std::lock_guard<std::mutex> lock(mu_);
  target_profiled_.assign(targets.size(), 0);
  target_given_back_.assign(targets.size(), 0);
  targets_ = std::move(targets);
  launches_each_ = launches_each;
}

void KernelMetricsCollector::ReleaseProfiler(CUcontext ctx) {
  std::unique_ptr<ContextProfiler> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(ctx);
    if (it == contexts_.end()) return;
    p = std::move(it->second);
    contexts_.erase(it);
  }
  p->Disable();
}

bool KernelMetricsCollector::ClearTargets(std::chrono::milliseconds wait) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    targets_.reset();
    target_profiled_.clear();
    target_given_back_.clear();
    launches_each_ = 0;
  }
  // Holding busy_ keeps every launch from profiling meanwhile: they pass unprofiled.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (busy_.exchange(true, std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<std::unique_ptr<ContextProfiler>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [ctx, p] : contexts_) all.push_back(std::move(p));
    contexts_.clear();
  }
  for (auto& p : all) p->Disable();
  busy_.store(false, std::memory_order_release);
  return true;
}

void KernelMetricsCollector::Shutdown() {
  off_.store(true);
  std::vector<std::unique_ptr<ContextProfiler>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [ctx, p] : contexts_) all.push_back(std::move(p));
    contexts_.clear();
  }
  for (auto& p : all) p->Disable();
}

}  // namespace cuscope::cupti
