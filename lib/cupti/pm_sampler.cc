#include "lib/cupti/pm_sampler.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/cupti_status.h"

namespace cuscope::cupti {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
// Bytes one sample of the default metrics takes in the hardware buffer on GH100: 12,224 by
// libnvperf_host's estimate for the default config image (NVPW_PeriodicSampler_Config_
// GetGpuEstimatedSampleSize, offline), ~10.7 KB as measured on an H200 (the records' own PCIe
// write traffic at 1 kHz); rounded up for margin and for longer user lists.
constexpr uint64_t kSampleBytes = 16 * 1024;
// The hardware buffer holds this much sampling time: ten drain periods of the sampler thread.
constexpr uint64_t kHeadroomNs = 1'000'000'000;
// 16 MiB at 1 ms, 157 MiB at nsys's 100 us; past that the buffer stops growing (it is host memory
// the records cross PCIe to) and a late drain shows as overflows.
constexpr size_t kMinHardwareBuffer = 16 * kMiB;
constexpr size_t kMaxHardwareBuffer = 256 * kMiB;

constexpr char kBusyHint[] =
    "; another profiler (nsys, ncu, DCGM profiling, or kernel metrics in this process) may hold the GPU's counters";

// `st` with the device named and, for a refusal the user can act on, what to do.
absl::Status OnDevice(uint32_t device, const absl::Status& st, bool counters_may_be_busy = false) {
  std::string msg = absl::StrCat("PM sampling on device ", device, ": ", st.message());
  if (absl::IsPermissionDenied(st)) {
    msg += kCountersReservedHint;
  } else if (counters_may_be_busy) {
    msg += kBusyHint;
  }
  return absl::Status(st.code(), msg);
}

// What a device's support report says is missing, in CUPTI's terms.
std::string Unsupported(const CUpti_Profiler_DeviceSupported_Params& s) {
  std::vector<std::string> why;
  const auto add = [&why](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) why.push_back(absl::StrCat(what, " (disabled)"));
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) why.push_back(what);
  };
  add(s.architecture, "architecture");
  add(s.sli, "SLI");
  add(s.vGpu, "vGPU");
  add(s.confidentialCompute, "confidential computing");
  add(s.cmp, "CMP");
  add(s.wsl, "WSL");
  return why.empty() ? "unknown reason" : absl::StrJoin(why, ", ");
}

}  // namespace

size_t PmHardwareBufferBytes(uint64_t interval_ns) {
  const uint64_t interval = std::max<uint64_t>(interval_ns, 1);
  const uint64_t samples = (kHeadroomNs + interval - 1) / interval;
  // samples <= 1e9 and kSampleBytes = 2^14: the product fits 64 bits.
  const uint64_t bytes = std::clamp<uint64_t>(samples * kSampleBytes, kMinHardwareBuffer, kMaxHardwareBuffer);
  return static_cast<size_t>((bytes + kMiB - 1) / kMiB * kMiB);
}

uint32_t PmDecodeImageSamples(uint64_t interval_ns, uint64_t drain_period_ns) {
  const uint64_t interval = std::max<uint64_t>(interval_ns, 1);
  return static_cast<uint32_t>(std::clamp<uint64_t>(2 * drain_period_ns / interval, 64, 4096));
}

absl::StatusOr<std::unique_ptr<PmSampler>> PmSampler::Create(CuptiApi& cupti, const PmSamplerOptions& options) {
  ProfilerApi& api = cupti.Profiler();
  const uint32_t device = options.device;
  if (options.interval_ns == 0) return absl::InvalidArgumentError("PM sampling interval must be positive");
  // Process-wide and shared with the Range Profiler, so never deinitialized here: that would pull
  // it from under kernel metrics. CUPTI counts the calls.
  auto init = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (auto st = api.ProfilerInitialize(&init); !st.ok()) return OnDevice(device, st);
  auto support = Params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  support.cuDevice = static_cast<CUdevice>(device);
  support.api = CUPTI_PROFILER_PM_SAMPLING;
  // A failing query is no verdict (device 0 reads as "the current context's device", and this
  // thread may have none): cuptiPmSamplingEnable below has the last word.
  if (api.DeviceSupported(&support).ok() &&
      support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    return absl::UnavailableError(
        absl::StrCat("PM sampling on device ", device, ": not supported here (", Unsupported(support), ")"));
  }
  auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device;
  if (auto st = api.ChipName(&chip); !st.ok()) return OnDevice(device, st);
  const std::string chip_name = chip.pChipName != nullptr ? chip.pChipName : "";
  auto avail = Params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.deviceIndex = device;
  if (auto st = api.PmSamplingGetCounterAvailability(&avail); !st.ok()) {
    return OnDevice(device, st, /*counters_may_be_busy=*/true);
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (auto st = api.PmSamplingGetCounterAvailability(&avail); !st.ok()) {
    return OnDevice(device, st, /*counters_may_be_busy=*/true);
  }

  std::unique_ptr<PmSampler> s(new PmSampler(cupti));
  s->device_ = device;
  auto config = BuildPmSamplingConfig(api, chip_name, availability,
                                      options.metrics.empty() ? DefaultPmSamplingMetrics() : options.metrics);
  if (!config.ok()) return OnDevice(device, config.status());
  s->config_ = std::move(*config);
  auto evaluator = PmSamplingEvaluator::Create(api, chip_name, availability, s->config_.metrics);
  if (!evaluator.ok()) return OnDevice(device, evaluator.status());
  s->evaluator_ = std::move(*evaluator);
  s->names_.clear();
  for (const auto& m : s->config_.metrics) s->names_.push_back(m.c_str());

  s->hardware_buffer_bytes_ = PmHardwareBufferBytes(options.interval_ns);
  s->interval_ns_ = options.interval_ns;
  s->image_samples_ = PmDecodeImageSamples(options.interval_ns, options.drain_period_ns);
  // One Drain decodes at most about a full hardware buffer: when the GPU writes faster than this
  // thread decodes (~70 us a sample on an H200), it returns anyway, to the other devices and to
  // Stop; the samples it could not take show as overflows.
  s->max_decodes_per_drain_ = static_cast<int>(s->hardware_buffer_bytes_ / kSampleBytes / s->image_samples_) + 2;
  // A failed Enable leaves what it enabled to `s`'s destructor, which disables it.
  if (auto st = s->Enable(); !st.ok()) return st;
  return s;
}

PmSampler::~PmSampler() { Disable(); }

absl::Status PmSampler::Configure() {
  auto set = Params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  set.pPmSamplingObject = object_;
  set.configSize = config_.config_image.size();
  set.pConfig = config_.config_image.data();
  set.hardwareBufferSize = hardware_buffer_bytes_;
  set.samplingInterval = interval_ns_;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (auto st = api_.PmSamplingSetConfig(&set); !st.ok()) {
    // The time trigger is what Turing and GA100 lack.
    return OnDevice(device_, absl::Status(st.code(), absl::StrCat(st.message(), " (time-interval sampling needs an "
                                                                                 "Ampere GA10x or newer GPU)")));
  }
  return absl::OkStatus();
}

absl::Status PmSampler::Enable() {
  auto enable = Params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  enable.deviceIndex = device_;
  if (auto st = api_.PmSamplingEnable(&enable); !st.ok()) {
    return OnDevice(device_, st, /*counters_may_be_busy=*/true);
  }
  object_ = enable.pPmSamplingObject;  // from here on Disable (and the destructor) releases it
  if (auto st = Configure(); !st.ok()) return st;
  auto size = Params<CUpti_PmSampling_GetCounterDataSize_Params>(CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pPmSamplingObject = object_;
  size.pMetricNames = names_.data();
  size.numMetrics = names_.size();
  size.maxSamples = image_samples_;
  if (auto st = api_.PmSamplingGetCounterDataSize(&size); !st.ok()) return OnDevice(device_, st);
  counter_data_.assign(size.counterDataSize, 0);
  if (auto st = ResetCounterData(); !st.ok()) return OnDevice(device_, st);
  return absl::OkStatus();
}

absl::Status PmSampler::Restart() {
  // Measured on an H200: Stop, SetConfig and Start on the same object fail after an overflow
  // (CUPTI_ERROR_UNKNOWN at Start); a fresh object works.
  Disable();
  if (auto st = Enable(); !st.ok()) return st;
  return Start();
}

absl::Status PmSampler::ResetCounterData() {
  auto init = Params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pPmSamplingObject = object_;
  init.counterDataSize = counter_data_.size();
  init.pCounterData = counter_data_.data();
  return api_.PmSamplingCounterDataImageInitialize(&init);
}

absl::Status PmSampler::Start() {
  if (object_ == nullptr) return absl::FailedPreconditionError("PM sampling is disabled");
  if (started_) return absl::OkStatus();
  auto p = Params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  p.pPmSamplingObject = object_;
  started_at_ns_ = cupti_.Timestamp();
  if (auto st = api_.PmSamplingStart(&p); !st.ok()) {
    return OnDevice(device_, st, /*counters_may_be_busy=*/true);
  }
  started_ = true;
  return absl::OkStatus();
}

absl::Status PmSampler::DecodeOnce(PmSeries& out, bool& more, bool& overflowed) {
  more = false;
  overflowed = false;
  auto decode = Params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
  decode.pPmSamplingObject = object_;
  decode.pCounterDataImage = counter_data_.data();
  decode.counterDataImageSize = counter_data_.size();
  // An overflowed hardware buffer is no error: what the decode did decode is still good.
  const absl::StatusOr<bool> decoded_overflow = api_.PmSamplingDecodeData(&decode);
  if (!decoded_overflow.ok()) return OnDevice(device_, decoded_overflow.status());
  if (*decoded_overflow) {
    ++overflows_;
    overflowed = true;
  }
  more = decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;

  auto info = Params<CUpti_PmSampling_GetCounterDataInfo_Params>(CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (auto st = api_.PmSamplingGetCounterDataInfo(&info); !st.ok()) {
    return OnDevice(device_, st);
  }
  for (size_t i = 0; i < info.numCompletedSamples; ++i) {
    auto when = Params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
    when.pPmSamplingObject = object_;
    when.pCounterDataImage = counter_data_.data();
    when.counterDataImageSize = counter_data_.size();
    when.sampleIndex = i;
    if (auto st = api_.PmSamplingCounterDataGetSampleInfo(&when); !st.ok()) {
      return OnDevice(device_, st);
    }
    // Clock: CUPTI documents these stamps as CPU-based, the clock cuptiGetTimestamp reads
    // (CLOCK_REALTIME ns on Linux), so samples line up with the activity records without any
    // conversion. Checked on an H200 (tests/gpu/gpu_counters_gpu_test.cc): the 1 ms samples that
    // fall inside a busy loop timed with cuptiGetTimestamp read SM active 100%, those outside 0%.
    if (when.startTimestamp == 0 || when.endTimestamp < when.startTimestamp) continue;
    // Seen on an H200: the first sample of a session that follows another one in the process can
    // be stamped from seconds before this session's Start (the previous session's end). Nothing
    // sampled before Start is ours, and such a sample's window is not what its value covers.
    if (when.startTimestamp < started_at_ns_) {
      ++stale_;
      continue;
    }
    auto values = evaluator_->Evaluate(counter_data_, i);
    if (!values.ok()) return OnDevice(device_, values.status());
    for (size_t m = 0; m < values->size() && m < out.size(); ++m) {
      out[m].push_back({when.startTimestamp, when.endTimestamp, (*values)[m]});
    }
    ++samples_;
  }
  // The image is reused; its samples are all taken.
  if (auto st = ResetCounterData(); !st.ok()) return OnDevice(device_, st);
  return absl::OkStatus();
}

absl::StatusOr<PmSeries> PmSampler::Drain() {
  PmSeries out(config_.metrics.size());
  if (object_ == nullptr || !started_) return out;
  bool overflowed = false;
  for (int i = 0; i < max_decodes_per_drain_ && !overflowed; ++i) {
    bool more = false;
    if (auto st = DecodeOnce(out, more, overflowed); !st.ok()) return st;
    if (!more) break;
  }
  // Measured on an H200: once the hardware buffer has overflowed in KEEP_OLDEST mode, decoding
  // yields none of what it holds and sampling stays stuck there. Starting over empties it: the
  // series gets a gap (counted in overflows()) instead of ending.
  if (overflowed) {
    if (auto st = Restart(); !st.ok()) return st;
  }
  return out;
}

absl::StatusOr<PmSeries> PmSampler::Finish() {
  PmSeries out(config_.metrics.size());
  if (object_ == nullptr) return out;
  absl::Status status;
  if (started_) {
    auto stop = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = object_;
    status = api_.PmSamplingStop(&stop);
    if (status.ok()) {
      // Everything the GPU wrote up to the stop: nothing new arrives, so decode until the buffer
      // is empty or a round makes no progress.
      for (bool more = true, overflowed = false; more && !overflowed && status.ok();) {
        const uint64_t before = samples_;
        status = DecodeOnce(out, more, overflowed);
        if (samples_ == before) break;
      }
    } else {
      status = OnDevice(device_, status);
    }
    started_ = false;
  }
  Disable();
  if (!status.ok()) return status;
  return out;
}

void PmSampler::Disable() {
  if (object_ == nullptr) return;
  if (started_) {
    auto stop = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = object_;
    (void)api_.PmSamplingStop(&stop);
    started_ = false;
  }
  auto p = Params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
  p.pPmSamplingObject = object_;
  api_.PmSamplingDisable(&p);
  object_ = nullptr;
}

}  // namespace cuscope::cupti
