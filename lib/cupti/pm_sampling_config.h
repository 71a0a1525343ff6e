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

// ---- The default counters ----------------------------------------------------------------------
// What nsys's GPU metrics show on Hopper, as PM sampling metric names that GH100 schedules in one
// pass, all eleven together (found and checked offline with CUPTI's host API:
// cuptiProfilerHostGetBaseMetrics for CUPTI_PROFILER_TYPE_PM_SAMPLING, then one config image and
// cuptiProfilerHostGetNumOfPasses == 1; tests/cupti/pm_sampling_config_test.cc keeps it so).
// Percentages are of the peak over the sample's elapsed cycles, averaged over the chip's units, so
// a value reads the same at any sampling interval; link traffic is in bytes per second.
//
// The compute engine (GR) had work: the GPU-busy line.
inline constexpr char kPmGrActivePct[] = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed";
// SMs with at least one warp resident ("SM Active").
inline constexpr char kPmSmActivePct[] = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
// Warp schedulers that issued an instruction ("SM Issue"): the SM-throughput line. The Range
// Profiler's sm__throughput needs 19 passes under PM sampling on GH100, so it cannot be sampled.
inline constexpr char kPmSmIssuePct[] = "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed";
// Warps resident over the SM's warp slots ("SM Warp Occupancy"), idle SMs counted as empty.
inline constexpr char kPmWarpsActivePct[] = "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed";
// Tensor pipes issuing ("Tensor Active").
inline constexpr char kPmTensorActivePct[] = "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
// DRAM read and write bandwidth as % of peak.
inline constexpr char kPmDramReadPct[] = "dram__read_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr char kPmDramWritePct[] = "dram__write_throughput.avg.pct_of_peak_sustained_elapsed";
// PCIe read (received by the GPU) and write (sent) bytes per second. Writes include PM sampling's
// own records on their way to host memory: ~11 MB/s at 1 kHz on an H200 with these counters, ten
// times that at 10 kHz.
inline constexpr char kPmPcieReadBytesPerSecond[] = "pcie__read_bytes.sum.per_second";
inline constexpr char kPmPcieWriteBytesPerSecond[] = "pcie__write_bytes.sum.per_second";
// NVLink received and transmitted bytes per second, all links of the GPU. Where the links are not
// available (seen: a lone H200 passed through to a VM) the device's counter-availability image
// rules these out and they are left out of the default list without a word.
inline constexpr char kPmNvlinkRxBytesPerSecond[] = "nvlrx__bytes.sum.per_second";
inline constexpr char kPmNvlinkTxBytesPerSecond[] = "nvltx__bytes.sum.per_second";

// The constants above, in that order. On a chip without some of them (no tensor pipes, no NVLink)
// BuildPmSamplingConfig leaves those out and the rest are sampled.
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

// Builds the configuration for `metrics` on `chip` ("GH100", ...). `counter_availability` may be
// empty (offline: every counter assumed available). Metrics are taken in order while they fit one
// pass; the ones left out are named in `unknown` / `over_one_pass`. Errors: an empty list
// (InvalidArgument), an unknown chip (naming it), nothing left (NotFound, naming them all).
absl::StatusOr<PmSamplingConfig> BuildPmSamplingConfig(const std::string& chip,
                                                       const std::vector<uint8_t>& counter_availability,
                                                       const std::vector<std::string>& metrics);

// One line naming what BuildPmSamplingConfig left out and why; empty when nothing was.
std::string DescribeLeftOut(const PmSamplingConfig& config);

// ---- Evaluation -------------------------------------------------------------------------------
// Turns the samples of a decoded PM sampling counter-data image into metric values; owns a CUPTI
// host object for one chip and metric list.
class PmSamplingEvaluator {
 public:
  // Errors: an empty list, an unknown chip, a name the chip lacks (build the config first).
  static absl::StatusOr<std::unique_ptr<PmSamplingEvaluator>> Create(const std::string& chip,
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
  PmSamplingEvaluator() = default;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_PM_SAMPLING_CONFIG_H_
