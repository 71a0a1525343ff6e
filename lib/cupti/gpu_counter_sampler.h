// GPU counters over time, what `nsys profile --gpu-metrics-devices` records: PM sampling (SM
// activity, occupancy, tensor pipes, DRAM, PCIe, NVLink) on each device, and NVML readings (power,
// temperature, clocks, memory used, clocks event reasons), sampled on one thread of their own and
// handed to the collector as batches of counter series.
//
// Each source runs where it can: PM sampling on every device that allows it, NVML where the library
// loads. A source that cannot run is named in one warning and left off; Start fails only when
// nothing runs.
#ifndef CUSCOPE_LIB_CUPTI_GPU_COUNTER_SAMPLER_H_
#define CUSCOPE_LIB_CUPTI_GPU_COUNTER_SAMPLER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/chunk_builder.h"
#include "lib/nvml/nvml_library.h"

namespace cuscope::nvml {
class NvmlSampler;
}

namespace cuscope::cupti {

class CuptiApi;
class PmSampler;

// Samples of one counter on one device, in time order (CUPTI timestamps, ns).
struct CounterBatch {
  uint32_t device = 0;
  v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
  std::string name;
  std::vector<core::ChunkBuilder::CounterPoint> points;
};

// PM sampling interval: 1 ms (1 kHz). nsys samples at 10 kHz by default; measured on an H200 with
// the default counters, that rate costs the sampler thread ~80% of a CPU core (~40 us to decode and
// ~30 us to evaluate each sample), ~110 MB/s of PCIe writes for the hardware records (~11 KB a
// sample) and, by estimate, ~1.5 MB/s of trace per GPU. At 1 kHz all of that is a tenth, and a millisecond still
// shows every phase a training step or an inference request has (idle gaps, communication, a long
// kernel). Ask for 100'000 to match nsys on one GPU: the one sampler thread serves every device,
// so at 10 kHz it falls behind with two or more and their buffers overflow (counted, and warned
// once per device).
inline constexpr uint64_t kDefaultPmIntervalNs = 1'000'000;
// NVML period: 100 ms. The driver refreshes power only every ~20-100 ms (and reports an average),
// temperature and clocks change on that scale too, so reading faster returns the same values
// again while each call costs tens of microseconds to milliseconds of driver time.
inline constexpr uint64_t kDefaultNvmlPeriodNs = 100'000'000;
// How often the sampler thread drains PM sampling and emits.
inline constexpr uint64_t kCounterDrainPeriodNs = 100'000'000;

struct GpuCounterSamplerOptions {
  // CUDA device ordinals; empty: every device.
  std::vector<uint32_t> devices;
  // 0: kDefaultPmIntervalNs.
  uint64_t interval_ns = kDefaultPmIntervalNs;
  // PM sampling metric names; empty: DefaultPmSamplingMetrics(). Names a chip lacks are named in
  // one warning when asked for explicitly, and left out silently from the default list.
  std::vector<std::string> pm_metrics;
  // 0: kDefaultNvmlPeriodNs.
  uint64_t nvml_period_ns = kDefaultNvmlPeriodNs;

  // Beyond what the collector sets (tests, embedders):
  bool pm_sampling = true;  // false: NVML only
  bool nvml = true;         // false: PM sampling only
  // The devices as the trace header has them (uuid, PCI bus), to find them in NVML; empty: asked
  // from the driver (QuerySystem).
  std::vector<v1::Device> device_info;
  // How NVML is opened; empty: libnvidia-ml.so.1.
  nvml::NvmlLoader nvml_loader;
};

class GpuCounterSampler {
 public:
  using Emit = std::function<void(std::vector<CounterBatch>)>;  // called from the sampler's own thread
  using Warn = std::function<void(const std::string&)>;        // one `cuscope:`-style line each (without the prefix)

  // CUPTI (PM sampling, its clock, the devices) is reached through `cupti`, which must outlive the
  // sampler.
  GpuCounterSampler(CuptiApi& cupti, GpuCounterSamplerOptions options, Emit emit, Warn warn);
  ~GpuCounterSampler();  // Stop()
  GpuCounterSampler(const GpuCounterSampler&) = delete;
  GpuCounterSampler& operator=(const GpuCounterSampler&) = delete;

  // Sets every source up without sampling yet: PM sampling enabled and configured on each device
  // where allowed, NVML loaded. This is the slow part (~0.4 s measured on an H200 in a PyTorch
  // process), so a caller that knows sampling will be wanted prepares ahead and Start then begins
  // at once. OK if at least one source is ready (each that is not is named in one Warn); otherwise
  // an error naming why for each. The counters are held from here until Stop. Runs on the calling
  // thread (CUPTI and NVML calls, no CUDA runtime); a Stop from another thread waits for it.
  absl::Status Prepare();

  // Prepares if Prepare has not run, then starts PM sampling and the sampler thread. OK if at
  // least one source runs; a second call is refused.
  absl::Status Start();

  // Idempotent: stops the thread, stops PM sampling, decodes and emits the last samples with a
  // last NVML reading, and disables PM sampling so the counters are free (e.g. for the Range
  // Profiler); after Prepare alone, just the last. Blocks until that is done: one drain at most.
  void Stop();

  // PM samples decoded plus NVML readings taken, over all devices.
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }
  // Times a device's hardware buffer was found overflowed (samples lost before each).
  uint64_t overflows() const { return overflows_.load(std::memory_order_relaxed); }
  // The counter names actually sampled, PM metrics then NVML counters, for the trace header.
  std::vector<std::string> counters() const;

 private:
  void Run();
  void DrainPm(std::vector<CounterBatch>& out, bool last);
  void ReadNvml();
  void TakeNvml(std::vector<CounterBatch>& out);
  void CheckClock(uint32_t device, uint64_t last_end);
  absl::Status PrepareSources();
  // Disables PM sampling on every device (the counters are free again) and unloads NVML.
  void ReleaseSources();

  CuptiApi& cupti_;
  GpuCounterSamplerOptions options_;
  Emit emit_;
  Warn warn_;

  // Set up by Start, then used by the sampler thread only.
  std::vector<std::unique_ptr<PmSampler>> pm_;
  std::unique_ptr<nvml::NvmlLibrary> nvml_library_;
  std::unique_ptr<nvml::NvmlSampler> nvml_;
  // NVML points taken since the last emit, one series per (device, counter).
  std::vector<CounterBatch> nvml_pending_;
  bool clock_warned_ = false;
  // Held while Prepare or Start sets the sources up, so a Stop from another thread waits for them
  // before it releases the counters. pm_, nvml_ and prepare_status_ belong to whoever holds it
  // until the sampler thread starts. Taken before mu_, never while holding it.
  std::mutex setup_mu_;
  bool prepared_ = false;  // mu_
  absl::Status prepare_status_;

  std::vector<std::string> counters_;  // written by Start before the thread starts

  mutable std::mutex mu_;  // the flags and counters_; never held across a CUPTI or NVML call
  std::condition_variable cv_;
  bool started_ = false;
  bool stop_ = false;
  bool stopped_ = false;
  std::thread thread_;

  std::atomic<uint64_t> samples_{0};
  std::atomic<uint64_t> overflows_{0};
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_GPU_COUNTER_SAMPLER_H_
