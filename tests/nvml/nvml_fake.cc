#include "tests/nvml/nvml_fake.h"

#include <algorithm>
#include <cstdint>

namespace cuscope::nvml::testing {
namespace {

// Handles are 1-based indexes into Fake().gpus.
NvmlDevice Handle(size_t i) { return reinterpret_cast<NvmlDevice>(static_cast<uintptr_t>(i + 1)); }

FakeGpu* Gpu(NvmlDevice d) {
  const auto i = reinterpret_cast<uintptr_t>(d);
  if (i == 0 || i > Fake().gpus.size()) return nullptr;
  return &Fake().gpus[i - 1];
}

NvmlReturn Init() {
  ++Fake().init_calls;
  return Fake().init_result;
}

NvmlReturn Shutdown() {
  ++Fake().shutdown_calls;
  return kNvmlSuccess;
}

const char* ErrorString(NvmlReturn r) {
  switch (r) {
    case kNvmlErrorNotSupported: return "Not Supported";
    case kNvmlErrorNotFound: return "Not Found";
    case kNvmlErrorDriverNotLoaded: return "Driver Not Loaded";
    case kNvmlErrorGpuIsLost: return "GPU is lost";
    default: return "Unknown Error";
  }
}

NvmlReturn ByUuid(const char* uuid, NvmlDevice* out) {
  Fake().uuid_lookups.emplace_back(uuid);
  for (size_t i = 0; i < Fake().gpus.size(); ++i) {
    if (Fake().gpus[i].uuid == uuid) {
      *out = Handle(i);
      return kNvmlSuccess;
    }
  }
  return kNvmlErrorNotFound;
}

NvmlReturn ByPci(const char* pci, NvmlDevice* out) {
  Fake().pci_lookups.emplace_back(pci);
  for (size_t i = 0; i < Fake().gpus.size(); ++i) {
    if (Fake().gpus[i].pci == pci) {
      *out = Handle(i);
      return kNvmlSuccess;
    }
  }
  return kNvmlErrorNotFound;
}

NvmlReturn Power(NvmlDevice d, unsigned int* mw) {
  ++Fake().power_calls;
  FakeGpu* g = Gpu(d);
  if (g == nullptr) return kNvmlErrorUnknown;
  *mw = g->milliwatts;
  return g->power_result;
}

NvmlReturn Temperature(NvmlDevice d, int sensor, unsigned int* c) {
  ++Fake().temperature_calls;
  FakeGpu* g = Gpu(d);
  if (g == nullptr || sensor != kNvmlTemperatureGpu) return kNvmlErrorUnknown;
  *c = g->celsius;
  return g->temperature_result;
}

NvmlReturn Clock(NvmlDevice d, int type, unsigned int* mhz) {
  FakeGpu* g = Gpu(d);
  if (g == nullptr) return kNvmlErrorUnknown;
  if (type == kNvmlClockSm) {
    *mhz = g->sm_mhz;
  } else if (type == kNvmlClockMem) {
    *mhz = g->mem_mhz;
  } else {
    return kNvmlErrorUnknown;
  }
  return kNvmlSuccess;
}

NvmlReturn Memory(NvmlDevice d, NvmlMemory* m) {
  FakeGpu* g = Gpu(d);
  if (g == nullptr) return kNvmlErrorUnknown;
  m->total = 150ull << 30;
  m->used = g->used_bytes;
  m->free = m->total - m->used;
  return kNvmlSuccess;
}

NvmlReturn Reasons(NvmlDevice d, unsigned long long* r) {
  FakeGpu* g = Gpu(d);
  if (g == nullptr) return kNvmlErrorUnknown;
  *r = g->reasons;
  return g->reasons_result;
}

}  // namespace

FakeNvml& Fake() {
  static FakeNvml fake;
  return fake;
}

NvmlFunctions FakeFunctions() {
  NvmlFunctions f;
  f.init = Init;
  f.shutdown = Shutdown;
  f.error_string = ErrorString;
  f.device_by_uuid = ByUuid;
  f.device_by_pci_bus_id = ByPci;
  f.power_usage = Power;
  f.temperature = Temperature;
  f.clock_info = Clock;
  f.memory_info = Memory;
  f.clocks_event_reasons = Reasons;
  return f;
}

NvmlSymbolLookup FakeLookup(const std::vector<std::string>& missing) {
  // NVML's exported names, versioned where NVML versions them.
  const std::map<std::string, void*> symbols = {
      {"nvmlInit_v2", reinterpret_cast<void*>(Init)},
      {"nvmlShutdown", reinterpret_cast<void*>(Shutdown)},
      {"nvmlErrorString", reinterpret_cast<void*>(ErrorString)},
      {"nvmlDeviceGetHandleByUUID", reinterpret_cast<void*>(ByUuid)},
      {"nvmlDeviceGetHandleByPciBusId_v2", reinterpret_cast<void*>(ByPci)},
      {"nvmlDeviceGetPowerUsage", reinterpret_cast<void*>(Power)},
      {"nvmlDeviceGetTemperature", reinterpret_cast<void*>(Temperature)},
      {"nvmlDeviceGetClockInfo", reinterpret_cast<void*>(Clock)},
      {"nvmlDeviceGetMemoryInfo", reinterpret_cast<void*>(Memory)},
      {"nvmlDeviceGetCurrentClocksEventReasons", reinterpret_cast<void*>(Reasons)},
      {"nvmlDeviceGetCurrentClocksThrottleReasons", reinterpret_cast<void*>(Reasons)},
  };
  return [symbols, missing](const char* name) -> void* {
    if (std::find(missing.begin(), missing.end(), name) != missing.end()) return nullptr;
    auto it = symbols.find(name);
    return it == symbols.end() ? nullptr : it->second;
  };
}

}  // namespace cuscope::nvml::testing
