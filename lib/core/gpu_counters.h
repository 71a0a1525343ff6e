// Names of the GPU counters sampled over time, shared by the samplers that write them and the
// analyzer that reads them.
//
// PM sampling counters keep their metric names (what `ncu --query-metrics` and nsys's GPU
// metrics use). NVML readings are named "nvml.<what>_<unit>".
#ifndef CUSCOPE_LIB_CORE_GPU_COUNTERS_H_
#define CUSCOPE_LIB_CORE_GPU_COUNTERS_H_

#include <cstdint>

namespace cuscope::core::counter {

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

#endif  // CUSCOPE_LIB_CORE_GPU_COUNTERS_H_
