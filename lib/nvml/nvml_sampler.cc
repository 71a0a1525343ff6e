#include "lib/nvml/nvml_sampler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/counter_names.h"

namespace cuscope::nvml {
namespace {

// One NVML counter: its name in the trace, the entry point it needs (for messages), and how to
// read it.
struct CounterDef {
  const char* name;
  const char* symbol;
  bool (*present)(const NvmlFunctions&);
  NvmlReturn (*read)(const NvmlFunctions&, NvmlDevice, double*);
};

constexpr CounterDef kCounters[] = {
    {core::counter::kPowerWatts, "nvmlDeviceGetPowerUsage",
     [](const NvmlFunctions& f) { return f.power_usage != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       unsigned int milliwatts = 0;
       const NvmlReturn r = f.power_usage(d, &milliwatts);
       *v = milliwatts / 1000.0;
       return r;
     }},
    {core::counter::kTemperatureCelsius, "nvmlDeviceGetTemperature",
     [](const NvmlFunctions& f) { return f.temperature != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       unsigned int celsius = 0;
       const NvmlReturn r = f.temperature(d, kNvmlTemperatureGpu, &celsius);
       *v = celsius;
       return r;
     }},
    {core::counter::kSmClockMhz, "nvmlDeviceGetClockInfo",
     [](const NvmlFunctions& f) { return f.clock_info != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       unsigned int mhz = 0;
       const NvmlReturn r = f.clock_info(d, kNvmlClockSm, &mhz);
       *v = mhz;
       return r;
     }},
    {core::counter::kMemoryClockMhz, "nvmlDeviceGetClockInfo",
     [](const NvmlFunctions& f) { return f.clock_info != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       unsigned int mhz = 0;
       const NvmlReturn r = f.clock_info(d, kNvmlClockMem, &mhz);
       *v = mhz;
       return r;
     }},
    {core::counter::kMemoryUsedBytes, "nvmlDeviceGetMemoryInfo",
     [](const NvmlFunctions& f) { return f.memory_info != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       NvmlMemory m{};
       const NvmlReturn r = f.memory_info(d, &m);
       *v = static_cast<double>(m.used);
       return r;
     }},
    {core::counter::kClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
     [](const NvmlFunctions& f) { return f.clocks_event_reasons != nullptr; },
     [](const NvmlFunctions& f, NvmlDevice d, double* v) {
       unsigned long long reasons = 0;
       const NvmlReturn r = f.clocks_event_reasons(d, &reasons);
       // Every defined bit is below 2^53: the mask survives the double exactly.
       *v = static_cast<double>(reasons);
       return r;
     }},
};
constexpr size_t kNumCounters = sizeof(kCounters) / sizeof(kCounters[0]);

// Errors after which asking again cannot help.
bool Permanent(NvmlReturn r) {
  return r == kNvmlErrorNotSupported || r == kNvmlErrorNoPermission || r == kNvmlErrorFunctionNotFound ||
         r == kNvmlErrorGpuIsLost;
}

std::string PciAddress(const DeviceIdentity& id) {
  return absl::StrFormat("%08x:%02x:%02x.0", id.pci_domain, id.pci_bus_id, id.pci_device);
}

// The device's NVML handle, or why there is none.
absl::StatusOr<NvmlDevice> Find(const NvmlFunctions& fns, const DeviceIdentity& id) {
  std::string why;
  if (!id.uuid.empty() && fns.device_by_uuid != nullptr) {
    NvmlDevice d = nullptr;
    const NvmlReturn r = fns.device_by_uuid(id.uuid.c_str(), &d);
    if (r == kNvmlSuccess) return d;
    why = absl::StrCat("UUID ", id.uuid, ": ", NvmlErrorText(fns, r));
  }
  if (fns.device_by_pci_bus_id != nullptr) {
    NvmlDevice d = nullptr;
    const std::string address = PciAddress(id);
    const NvmlReturn r = fns.device_by_pci_bus_id(address.c_str(), &d);
    if (r == kNvmlSuccess) return d;
    absl::StrAppend(&why, why.empty() ? "" : "; ", "PCI ", address, ": ", NvmlErrorText(fns, r));
  }
  if (why.empty()) {
    why = "NVML has neither nvmlDeviceGetHandleByUUID nor nvmlDeviceGetHandleByPciBusId_v2";
  }
  return absl::NotFoundError(absl::StrCat("NVML does not find device ", id.device, " (", why, ")"));
}

}  // namespace

absl::StatusOr<NvmlSampler> NvmlSampler::Create(const NvmlFunctions& fns, const std::vector<DeviceIdentity>& devices,
                                                Warn warn) {
  NvmlSampler s(fns, std::move(warn));
  // Said only when the sampler is made: when it is not, the error says all there is to say.
  std::vector<std::string> notes;
  s.present_.assign(kNumCounters, false);
  for (size_t c = 0; c < kNumCounters; ++c) {
    s.present_[c] = kCounters[c].present(fns);
    if (!s.present_[c]) {
      notes.push_back(absl::StrCat("NVML has no ", kCounters[c].symbol, " (driver too old?): ", kCounters[c].name,
                                   " is not sampled"));
    }
  }
  absl::Status first_error;
  for (const DeviceIdentity& id : devices) {
    auto handle = Find(fns, id);
    if (!handle.ok()) {
      if (first_error.ok()) first_error = handle.status();
      notes.push_back(absl::StrCat(handle.status().message(), "; its NVML counters are not sampled"));
      continue;
    }
    Device d;
    d.ordinal = id.device;
    d.handle = *handle;
    d.off.assign(kNumCounters, false);
    d.reported.assign(kNumCounters, false);
    s.devices_.push_back(std::move(d));
    s.ordinals_.push_back(id.device);
  }
  if (s.devices_.empty()) {
    if (devices.empty()) return absl::InvalidArgumentError("no devices to read with NVML");
    return first_error;
  }
  for (const auto& n : notes) s.Report(n);
  return s;
}

void NvmlSampler::Report(const std::string& message) const {
  if (warn_) warn_(message);
}

std::vector<NvmlValue> NvmlSampler::Read(size_t index) {
  std::vector<NvmlValue> out;
  if (index >= devices_.size()) return out;
  Device& d = devices_[index];
  out.reserve(kNumCounters);
  for (size_t c = 0; c < kNumCounters; ++c) {
    if (!present_[c] || d.off[c]) continue;
    double value = 0;
    const NvmlReturn r = kCounters[c].read(fns_, d.handle, &value);
    if (r == kNvmlSuccess) {
      out.push_back({kCounters[c].name, value});
      continue;
    }
    const bool permanent = Permanent(r);
    if (r == kNvmlErrorGpuIsLost) {
      // Nothing more will come from this device.
      d.off.assign(kNumCounters, true);
      Report(absl::StrCat("NVML lost device ", d.ordinal, " (", NvmlErrorText(fns_, r),
                          "); its NVML counters are no longer sampled"));
      break;
    }
    if (permanent) d.off[c] = true;
    if (!d.reported[c]) {
      d.reported[c] = true;
      Report(absl::StrCat("NVML cannot read ", kCounters[c].name, " on device ", d.ordinal, ": ", kCounters[c].symbol,
                          " failed: ", NvmlErrorText(fns_, r),
                          permanent ? "; it is not sampled there" : "; such readings are left out"));
    }
  }
  return out;
}

std::vector<std::string> NvmlSampler::counters() const {
  std::vector<std::string> out;
  for (size_t c = 0; c < kNumCounters; ++c) {
    if (!present_[c]) continue;
    for (const Device& d : devices_) {
      if (!d.off[c]) {
        out.emplace_back(kCounters[c].name);
        break;
      }
    }
  }
  return out;
}

}  // namespace cuscope::nvml
