// Readings of the NVML counters (power, temperature, clocks, memory used, clocks event reasons) for
// the devices of a trace, under the names in lib/core/counter_names.h.
//
// The sampler only reads: it neither opens nor initializes NVML (NvmlLibrary does) and stamps no
// time (the caller does, on its own clock). It takes the function table by value, so tests hand it
// a fake one.
#ifndef CUSCOPE_LIB_NVML_NVML_SAMPLER_H_
#define CUSCOPE_LIB_NVML_NVML_SAMPLER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/nvml/nvml_library.h"

namespace cuscope::nvml {

// A device as the trace header describes it (v1::Device), for finding it in NVML. NVML numbers
// devices its own way (it ignores CUDA_VISIBLE_DEVICES), so the CUDA ordinal is no use there.
struct DeviceIdentity {
  uint32_t device = 0;       // CUDA ordinal: the trace's device id, returned as is
  std::string uuid;          // "GPU-8c3f...", as cuDeviceGetUuid gives it; empty when unknown
  uint32_t pci_bus_id = 0;   // PCI bus number (the header stores the bus only)
  uint32_t pci_domain = 0;
  uint32_t pci_device = 0;
};

// One counter's value; `name` is one of core::counter's constants.
struct NvmlValue {
  const char* name;
  double value;
};

class NvmlSampler {
 public:
  using Warn = std::function<void(const std::string&)>;  // one `cuscope:` line, without the prefix

  // Finds each device in NVML: by UUID, else (no UUID, or NVML does not know it) by PCI address
  // "domain:bus:device.0". A device not found is named in one Warn and left out; a counter whose
  // entry point the table lacks is named in one Warn and not read. Fails (NotFound) when no device
  // is found, naming why for the first, and then warns nothing.
  static absl::StatusOr<NvmlSampler> Create(const NvmlFunctions& fns, const std::vector<DeviceIdentity>& devices,
                                            Warn warn);

  // The CUDA ordinals of the devices found, in the order given; Read's index is into this.
  const std::vector<uint32_t>& devices() const { return ordinals_; }

  // One reading of every counter still on for devices()[index]. Power in watts, temperature in
  // degrees Celsius, clocks in MHz, memory used in bytes, the reasons bit mask as a number. A
  // reading that fails is left out and reported once per device and counter; when NVML says it
  // can never work there (not supported, no permission, GPU lost) it is not asked again.
  std::vector<NvmlValue> Read(size_t index);

  // Names of the counters read on at least one device (for the trace header).
  std::vector<std::string> counters() const;

 private:
  struct Device {
    uint32_t ordinal = 0;
    NvmlDevice handle = nullptr;
    std::vector<bool> off;       // per counter: not asked again
    std::vector<bool> reported;  // per counter: a failure was already reported
  };

  NvmlSampler(const NvmlFunctions& fns, Warn warn) : fns_(fns), warn_(std::move(warn)) {}
  void Report(const std::string& message) const;

  NvmlFunctions fns_;
  Warn warn_;
  std::vector<bool> present_;  // per counter: the table has its entry point
  std::vector<Device> devices_;
  std::vector<uint32_t> ordinals_;
};

}  // namespace cuscope::nvml

#endif  // CUSCOPE_LIB_NVML_NVML_SAMPLER_H_
