#include "lib/nvml/nvml_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace cuscope::nvml {
namespace {

constexpr char kLibraryName[] = "libnvidia-ml.so.1";

template <typename Fn>
void Resolve(const NvmlSymbolLookup& lookup, const char* symbol, Fn*& out) {
  out = reinterpret_cast<Fn*>(lookup(symbol));
}

}  // namespace

std::string NvmlErrorText(const NvmlFunctions& fns, NvmlReturn code) {
  const char* text = fns.error_string != nullptr ? fns.error_string(code) : nullptr;
  if (text == nullptr) return absl::StrCat("NVML error ", code);
  return absl::StrCat(text, " (", code, ")");
}

NvmlLoader SystemNvmlLoader() {
  return []() -> absl::StatusOr<NvmlSymbolLookup> {
    // A copy the program already loaded is used as is; otherwise a private one.
    void* lib = dlopen(kLibraryName, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      return absl::UnavailableError(absl::StrCat("NVML is not available (", kLibraryName, " not found",
                                                 why != nullptr ? absl::StrCat(": ", why) : "", ")"));
    }
    return NvmlSymbolLookup([lib](const char* symbol) { return dlsym(lib, symbol); });
  };
}

NvmlFunctions ResolveNvmlFunctions(const NvmlSymbolLookup& lookup) {
  NvmlFunctions f;
  Resolve(lookup, "nvmlInit_v2", f.init);
  Resolve(lookup, "nvmlShutdown", f.shutdown);
  Resolve(lookup, "nvmlErrorString", f.error_string);
  Resolve(lookup, "nvmlDeviceGetHandleByUUID", f.device_by_uuid);
  Resolve(lookup, "nvmlDeviceGetHandleByPciBusId_v2", f.device_by_pci_bus_id);
  Resolve(lookup, "nvmlDeviceGetPowerUsage", f.power_usage);
  Resolve(lookup, "nvmlDeviceGetTemperature", f.temperature);
  Resolve(lookup, "nvmlDeviceGetClockInfo", f.clock_info);
  Resolve(lookup, "nvmlDeviceGetMemoryInfo", f.memory_info);
  // Renamed in driver 535 with the same signature and bits; older drivers have only the old name.
  Resolve(lookup, "nvmlDeviceGetCurrentClocksEventReasons", f.clocks_event_reasons);
  if (f.clocks_event_reasons == nullptr) {
    Resolve(lookup, "nvmlDeviceGetCurrentClocksThrottleReasons", f.clocks_event_reasons);
  }
  return f;
}

absl::StatusOr<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const NvmlLoader& loader) {
  if (!loader) return absl::UnavailableError("NVML is not available (no loader)");
  auto lookup = loader();
  if (!lookup.ok()) return lookup.status();
  const NvmlFunctions fns = ResolveNvmlFunctions(*lookup);
  if (fns.init == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("NVML is not usable: ", kLibraryName, " has no nvmlInit_v2 (driver too old?)"));
  }
  if (const NvmlReturn r = fns.init(); r != kNvmlSuccess) {
    return absl::UnavailableError(absl::StrCat("NVML did not start: nvmlInit_v2 failed: ", NvmlErrorText(fns, r)));
  }
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(fns));
}

NvmlLibrary::~NvmlLibrary() {
  if (fns_.shutdown != nullptr) fns_.shutdown();
}

}  // namespace cuscope::nvml
