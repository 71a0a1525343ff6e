// PM sampling on one device: the GPU samples its performance counters every interval into a
// hardware buffer; Drain decodes what is there and turns each sample into a value per metric.
//
// The sampling is device-wide (every context and process on the GPU is in the counters) and needs
// no CUDA context: CUPTI addresses the device by index. Only one counter session can own a GPU's
// counters at a time, so while a PmSampler is enabled the Range Profiler (kernel metrics), nsys,
// ncu or DCGM's profiling cannot use that device's counters, and the other way round. Finish
// releases them.
//
// Not thread-safe: one thread at a time (Start on one, Drain and Finish on another is fine).
#ifndef CUSCOPE_LIB_CUPTI_PM_SAMPLER_H_
#define CUSCOPE_LIB_CUPTI_PM_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/core/chunk_builder.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/pm_sampling_config.h"
#include "lib/cupti/profiler_api.h"

struct CUpti_PmSampling_Object;

namespace cuscope::cupti {

struct PmSamplerOptions {
  uint32_t device = 0;  // CUDA device ordinal (CUPTI's device index)
  // GPU time between samples (GPU_TIME_INTERVAL trigger: a fixed-frequency clock, so samples stay
  // evenly spaced when the SM clock changes). See GpuCounterSamplerOptions for the default's why.
  uint64_t interval_ns = 1'000'000;
  // Metric names; empty: DefaultPmSamplingMetrics().
  std::vector<std::string> metrics;
  // How often the caller will call Drain: sizes the hardware buffer and the decode image.
  uint64_t drain_period_ns = 100'000'000;
};

// Per metric (PmSampler::metrics() order), the samples decoded, in time order.
using PmSeries = std::vector<std::vector<core::ChunkBuilder::CounterPoint>>;

class PmSampler {
 public:
  // Sets sampling up on the device without starting it: device support, the chip's name and
  // counter availability, the configuration (metrics the chip lacks or that do not fit one pass
  // are left out, see config()), then cuptiPmSamplingEnable and SetConfig. Errors name the device
  // and say what to do: counters reserved for administrators (ERR_NVGPUCTRPERM), a device or
  // driver without PM sampling, another tool holding the counters. Every CUPTI call goes through
  // `cupti` (its Profiler() and clock), which must outlive the sampler.
  static absl::StatusOr<std::unique_ptr<PmSampler>> Create(CuptiApi& cupti, const PmSamplerOptions& options);
  ~PmSampler();  // Stops and disables when Finish has not run
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  absl::Status Start();

  // Decodes the samples the GPU has written since the last call and evaluates them: all of them,
  // or about a hardware buffer's worth when the GPU writes faster than this thread decodes (the
  // rest wait for the next call, so one Drain cannot hold the thread). Samples lost
  // to a full hardware buffer are counted in overflows() (KEEP_OLDEST: the GPU stops adding
  // samples rather than overwrite silently); on an overflow Drain restarts sampling, since what an
  // overflowed buffer holds cannot be decoded, so the series shows a gap and goes on.
  absl::StatusOr<PmSeries> Drain();

  // Stops sampling, decodes what is left and disables PM sampling on the device, so its counters
  // are free for the Range Profiler; the counters are released whatever the outcome. Idempotent:
  // later calls return nothing.
  absl::StatusOr<PmSeries> Finish();

  uint32_t device() const { return device_; }
  const PmSamplingConfig& config() const { return config_; }
  const std::vector<std::string>& metrics() const { return config_.metrics; }
  uint64_t samples() const { return samples_; }
  // Decodes that found the hardware buffer had overflowed (samples were lost before each).
  uint64_t overflows() const { return overflows_; }
  size_t hardware_buffer_bytes() const { return hardware_buffer_bytes_; }
  // Samples decoded but starting before this session started sampling, dropped.
  uint64_t stale() const { return stale_; }

 private:
  explicit PmSampler(CuptiApi& cupti) : cupti_(cupti), api_(cupti.Profiler()) {}
  // cuptiPmSamplingEnable, SetConfig (Configure) and a fresh counter-data image.
  absl::Status Enable();
  // SetConfig with this sampler's configuration, buffer and interval.
  absl::Status Configure();
  // Disable, Enable and Start again: a new, empty hardware buffer after an overflow.
  absl::Status Restart();
  absl::Status ResetCounterData();
  // Decodes once into the counter-data image and appends its completed samples to `out`; sets
  // `more` when the image filled before the hardware buffer emptied, `overflowed` when the
  // hardware buffer had overflowed.
  absl::Status DecodeOnce(PmSeries& out, bool& more, bool& overflowed);
  void Disable();

  CuptiApi& cupti_;
  ProfilerApi& api_;
  uint32_t device_ = 0;
  PmSamplingConfig config_;
  std::unique_ptr<PmSamplingEvaluator> evaluator_;
  CUpti_PmSampling_Object* object_ = nullptr;
  std::vector<const char*> names_;
  std::vector<uint8_t> counter_data_;
  size_t hardware_buffer_bytes_ = 0;
  uint64_t interval_ns_ = 0;
  uint32_t image_samples_ = 0;  // samples one counter-data image holds
  int max_decodes_per_drain_ = 2;
  bool started_ = false;
  uint64_t samples_ = 0;
  uint64_t overflows_ = 0;
  uint64_t stale_ = 0;
  uint64_t started_at_ns_ = 0;  // CUPTI's clock at the last Start
};

// Sizes PmSampler picks (exposed for the tests): the hardware buffer holds about one second of
// samples, so a sampler thread held up for ten drain periods loses nothing; the decode image holds
// two drain periods' worth, so one Drain normally decodes in one go.
size_t PmHardwareBufferBytes(uint64_t interval_ns);
uint32_t PmDecodeImageSamples(uint64_t interval_ns, uint64_t drain_period_ns);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_PM_SAMPLER_H_
