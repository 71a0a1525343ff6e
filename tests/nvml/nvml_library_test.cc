// Opening NVML: what a user sees when the library is absent, too old or refuses to start, and the
// versioned entry points the table is built from. The loader is injected, so no real NVML is used.
#include "lib/nvml/nvml_library.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/nvml/nvml_fake.h"

namespace cuscope::nvml {
namespace {

using testing::Fake;
using testing::FakeLookup;

class NvmlLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { Fake() = testing::FakeNvml{}; }
};

NvmlLoader LoaderOf(NvmlSymbolLookup lookup) {
  return [lookup]() -> absl::StatusOr<NvmlSymbolLookup> { return lookup; };
}

TEST_F(NvmlLibraryTest, AbsentLibraryIsAClearUnavailableError) {
  const NvmlLoader absent = []() -> absl::StatusOr<NvmlSymbolLookup> {
    return absl::UnavailableError("NVML is not available (libnvidia-ml.so.1 not found)");
  };
  auto lib = NvmlLibrary::Load(absent);
  ASSERT_FALSE(lib.ok());
  EXPECT_TRUE(absl::IsUnavailable(lib.status())) << lib.status();
  EXPECT_NE(lib.status().message().find("libnvidia-ml.so.1"), std::string::npos) << lib.status();
  EXPECT_EQ(Fake().init_calls, 0);
}

TEST_F(NvmlLibraryTest, InitFailureQuotesNvmlsWords) {
  Fake().init_result = kNvmlErrorDriverNotLoaded;
  auto lib = NvmlLibrary::Load(LoaderOf(FakeLookup()));
  ASSERT_FALSE(lib.ok());
  EXPECT_TRUE(absl::IsUnavailable(lib.status())) << lib.status();
  EXPECT_NE(lib.status().message().find("nvmlInit_v2"), std::string::npos) << lib.status();
  EXPECT_NE(lib.status().message().find("Driver Not Loaded"), std::string::npos) << lib.status();
  EXPECT_EQ(Fake().init_calls, 1);
  // Nothing was initialized, so nothing is shut down.
  EXPECT_EQ(Fake().shutdown_calls, 0);
}

TEST_F(NvmlLibraryTest, LibraryWithoutVersionedInitIsRefusedByName) {
  // Only the unversioned nvmlInit of NVML before 2012: not enough.
  auto lib = NvmlLibrary::Load(LoaderOf(FakeLookup({"nvmlInit_v2"})));
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("nvmlInit_v2"), std::string::npos) << lib.status();
}

TEST_F(NvmlLibraryTest, InitializesOnceAndShutsDownOnce) {
  {
    auto lib = NvmlLibrary::Load(LoaderOf(FakeLookup()));
    ASSERT_TRUE(lib.ok()) << lib.status();
    EXPECT_EQ(Fake().init_calls, 1);
    EXPECT_EQ(Fake().shutdown_calls, 0);
    const NvmlFunctions& f = (*lib)->functions();
    EXPECT_NE(f.power_usage, nullptr);
    EXPECT_NE(f.device_by_pci_bus_id, nullptr);
    EXPECT_NE(f.clocks_event_reasons, nullptr);
  }
  EXPECT_EQ(Fake().shutdown_calls, 1);
}

TEST_F(NvmlLibraryTest, ResolvesTheVersionedNamesOnly) {
  // The v1 PCI lookup resolves bus ids differently; only the _v2 symbol may fill the slot.
  const NvmlSymbolLookup v1_only = [](const char* name) -> void* {
    return std::string(name) == "nvmlDeviceGetHandleByPciBusId" ? reinterpret_cast<void*>(&Fake) : nullptr;
  };
  EXPECT_EQ(ResolveNvmlFunctions(v1_only).device_by_pci_bus_id, nullptr);
  EXPECT_NE(ResolveNvmlFunctions(FakeLookup()).device_by_pci_bus_id, nullptr);
}

TEST_F(NvmlLibraryTest, ClocksEventReasonsFallBackToTheirPre535Name) {
  const NvmlFunctions old_driver = ResolveNvmlFunctions(FakeLookup({"nvmlDeviceGetCurrentClocksEventReasons"}));
  EXPECT_NE(old_driver.clocks_event_reasons, nullptr);
  const NvmlFunctions neither = ResolveNvmlFunctions(
      FakeLookup({"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}));
  EXPECT_EQ(neither.clocks_event_reasons, nullptr);
  EXPECT_NE(neither.power_usage, nullptr);
}

TEST_F(NvmlLibraryTest, ErrorTextUsesNvmlsStringOrTheNumber) {
  EXPECT_EQ(NvmlErrorText(testing::FakeFunctions(), kNvmlErrorNotSupported), "Not Supported (3)");
  EXPECT_EQ(NvmlErrorText(NvmlFunctions{}, kNvmlErrorNotSupported), "NVML error 3");
}

}  // namespace
}  // namespace cuscope::nvml
