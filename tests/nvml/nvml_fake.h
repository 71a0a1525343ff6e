// A fake NVML for the tests: plain functions (the table holds C function pointers) reading one
// global state that each test resets.
#ifndef CUSCOPE_TESTS_NVML_NVML_FAKE_H_
#define CUSCOPE_TESTS_NVML_NVML_FAKE_H_

#include <map>
#include <string>
#include <vector>

#include "lib/nvml/nvml_library.h"

namespace cuscope::nvml::testing {

struct FakeGpu {
  std::string uuid;
  std::string pci;  // as NVML is asked for it: "00000000:3b:00.0"
  unsigned int milliwatts = 0;
  unsigned int celsius = 0;
  unsigned int sm_mhz = 0;
  unsigned int mem_mhz = 0;
  unsigned long long used_bytes = 0;
  unsigned long long reasons = 0;
  // A result other than success makes that call fail.
  NvmlReturn power_result = kNvmlSuccess;
  NvmlReturn temperature_result = kNvmlSuccess;
  NvmlReturn reasons_result = kNvmlSuccess;
};

struct FakeNvml {
  std::vector<FakeGpu> gpus;
  NvmlReturn init_result = kNvmlSuccess;
  int init_calls = 0;
  int shutdown_calls = 0;
  int power_calls = 0;
  int temperature_calls = 0;
  std::vector<std::string> uuid_lookups;
  std::vector<std::string> pci_lookups;
};

// The state the fake functions read and count into.
FakeNvml& Fake();

// Every entry point, pointing at the fake.
NvmlFunctions FakeFunctions();

// A symbol lookup over the fake's functions by their NVML names, leaving out `missing`.
NvmlSymbolLookup FakeLookup(const std::vector<std::string>& missing = {});

}  // namespace cuscope::nvml::testing

#endif  // CUSCOPE_TESTS_NVML_NVML_FAKE_H_
