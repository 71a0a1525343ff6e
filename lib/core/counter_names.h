// Names of the GPU counters sampled over time, shared by the samplers that write them and the
// analyzer that reads them.
//
// PM sampling counters keep their metric names (what `ncu --query-metrics` and nsys's GPU
// metrics use). NVML readings are named "nvml.<what>_<unit>".
#ifndef CUSCOPE_LIB_CORE_COUNTER_NAMES_H_
#define CUSCOPE_LIB_CORE_COUNTER_NAMES_H_

#include <cstdint>

namespace cuscope::core::counter {

// PM sampling counters, the defaults: what nsys's GPU metrics show on Hopper, as PM sampling
// metric names that GH100 schedules in one pass, all eleven together (found and checked offline with CUPTI's host API:
// cuptiProfilerHostGetBaseMetrics for CUPTI_PROFILER_TYPE_PM_SAMPLING, then one config image and
// cuptiProfilerHostGetNumOfPasses == 1; tests/cupti/pm_sampling_config_test.cc keeps it so). The
// sampler's default list (lib/cupti/pm_sampling_config.h) and the analyzer both read these.
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
// All of them, in the order above.
inline constexpr const char* kPmDefaults[] = {
    kPmGrActivePct, kPmSmActivePct,        kPmSmIssuePct,         kPmWarpsActivePct,         kPmTensorActivePct,
    kPmDramReadPct, kPmDramWritePct,       kPmPcieReadBytesPerSecond, kPmPcieWriteBytesPerSecond,
    kPmNvlinkRxBytesPerSecond, kPmNvlinkTxBytesPerSecond};

// NVML readings, one per device per NVML period.
inline constexpr char kPowerWatts[] = "nvml.power_w";
inline constexpr char kTemperatureCelsius[] = "nvml.temperature_c";
inline constexpr char kSmClockMhz[] = "nvml.sm_clock_mhz";
inline constexpr char kMemoryClockMhz[] = "nvml.memory_clock_mhz";
inline constexpr char kMemoryUsedBytes[] = "nvml.memory_used_bytes";
// The bit mask NVML calls the clocks event (formerly throttle) reasons, as a double.
inline constexpr char kClocksEventReasons[] = "nvml.clocks_event_reasons";
// Every NVML reading, in the order the sampler takes them.
inline constexpr const char* kNvmlCounters[] = {kPowerWatts,       kTemperatureCelsius, kSmClockMhz,
                                                kMemoryClockMhz,   kMemoryUsedBytes,    kClocksEventReasons};

// Bits of kClocksEventReasons (nvmlClocksEventReason*; the values are NVML's ABI).
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kReasonDisplayClockSetting = 0x100;

// The reasons that mean the GPU ran slower than it could because of power or heat.
inline constexpr uint64_t kPowerOrThermalReasons = kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermalSlowdown |
                                                   kReasonHwThermalSlowdown | kReasonHwPowerBrakeSlowdown;

}  // namespace cuscope::core::counter

#endif  // CUSCOPE_LIB_CORE_COUNTER_NAMES_H_
