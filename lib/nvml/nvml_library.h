// NVML, the driver's management library, opened at run time.
//
// Build machines have no nvml.h and user machines may have no libnvidia-ml.so.1, so nothing links
// against NVML: the library is opened with dlopen and the few entry points cuscope reads are looked
// up by their versioned symbol names into a table of function pointers. A missing entry point
// leaves its pointer null, which turns off just the reading that needs it.
//
// The loader is injectable so tests run without the real library (see NvmlLoader).
#ifndef CUSCOPE_LIB_NVML_NVML_LIBRARY_H_
#define CUSCOPE_LIB_NVML_NVML_LIBRARY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::nvml {

// NVML's ABI, declared here for want of nvml.h: the values are NVML's and never change.
using NvmlReturn = int;  // nvmlReturn_t
inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorNoPermission = 4;
inline constexpr NvmlReturn kNvmlErrorNotFound = 6;
inline constexpr NvmlReturn kNvmlErrorDriverNotLoaded = 9;
inline constexpr NvmlReturn kNvmlErrorFunctionNotFound = 13;
inline constexpr NvmlReturn kNvmlErrorGpuIsLost = 15;
inline constexpr NvmlReturn kNvmlErrorUnknown = 999;
// nvmlTemperatureSensors_t and nvmlClockType_t values (C enums: passed as int).
inline constexpr int kNvmlTemperatureGpu = 0;
inline constexpr int kNvmlClockSm = 1;
inline constexpr int kNvmlClockMem = 2;

struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;  // nvmlDevice_t

// nvmlMemory_t (version 1, the unversioned nvmlDeviceGetMemoryInfo's struct), in bytes.
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// The entry points cuscope uses. Each is null when the library lacks it.
struct NvmlFunctions {
  NvmlReturn (*init)() = nullptr;                                                 // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;                                             // nvmlShutdown
  const char* (*error_string)(NvmlReturn) = nullptr;                              // nvmlErrorString
  NvmlReturn (*device_by_uuid)(const char*, NvmlDevice*) = nullptr;               // nvmlDeviceGetHandleByUUID
  NvmlReturn (*device_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;         // ..ByPciBusId_v2
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int* milliwatts) = nullptr;      // nvmlDeviceGetPowerUsage
  NvmlReturn (*temperature)(NvmlDevice, int sensor, unsigned int* celsius) = nullptr;  // ..GetTemperature
  NvmlReturn (*clock_info)(NvmlDevice, int type, unsigned int* mhz) = nullptr;    // nvmlDeviceGetClockInfo
  NvmlReturn (*memory_info)(NvmlDevice, NvmlMemory*) = nullptr;                   // nvmlDeviceGetMemoryInfo
  // nvmlDeviceGetCurrentClocksEventReasons, or on drivers before 535 the same call under its old
  // name, nvmlDeviceGetCurrentClocksThrottleReasons.
  NvmlReturn (*clocks_event_reasons)(NvmlDevice, unsigned long long* reasons) = nullptr;
};

// NVML's words for `code` ("Not Supported", ...), or the number where the table has no
// nvmlErrorString.
std::string NvmlErrorText(const NvmlFunctions& fns, NvmlReturn code);

// Where entry points come from. `open` makes the library available and returns the function that
// looks a symbol up in it (null when absent); an error when the library cannot be opened.
using NvmlSymbolLookup = std::function<void*(const char* symbol)>;
using NvmlLoader = std::function<absl::StatusOr<NvmlSymbolLookup>()>;

// dlopen("libnvidia-ml.so.1") and dlsym. The library stays loaded for the life of the process.
NvmlLoader SystemNvmlLoader();

// NVML opened and initialized. nvmlInit_v2 and nvmlShutdown are reference counted by NVML, so a
// program that uses NVML itself (PyTorch does) is not disturbed by ours.
class NvmlLibrary {
 public:
  // Opens NVML through `loader`, resolves the table and calls nvmlInit_v2. Errors (Unavailable):
  // the library is absent, it lacks nvmlInit_v2, or initialization fails (NVML's words quoted).
  static absl::StatusOr<std::unique_ptr<NvmlLibrary>> Load(const NvmlLoader& loader = SystemNvmlLoader());
  ~NvmlLibrary();  // nvmlShutdown
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& functions() const { return fns_; }

 private:
  explicit NvmlLibrary(const NvmlFunctions& fns) : fns_(fns) {}
  NvmlFunctions fns_;
};

// Resolves the table through `lookup` (no initialization): the versioned names, and for clocks
// event reasons the pre-535 name when the new one is absent.
NvmlFunctions ResolveNvmlFunctions(const NvmlSymbolLookup& lookup);

}  // namespace cuscope::nvml

#endif  // CUSCOPE_LIB_NVML_NVML_LIBRARY_H_
