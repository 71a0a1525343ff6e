// A process with the collector inside and a fake record source: CUPTI is faked, four 1-us kernels
// arrive every 20 ms on a clock that keeps pace with the real one. Settings come from CUSCOPE_*
// as for an injected program. It prints "ready" once the collector runs and stops it when its
// standard input closes, so tests can drive `cuscope capture`, `status` and `ps` against it. With
// FAKE_WORKLOAD_CALLS=1 it also makes a kernel launch's runtime call every millisecond (a call's
// exit is where a duty cycle's detach happens).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "lib/settings/config.h"
#include "lib/cupti/activity_collector.h"
#include "tests/cupti/fake_cupti.h"

int main() {
  auto config = cuscope::settings::ParseConfigFromEnvironment(cuscope::settings::ProcessEnvironment());
  if (!config.ok()) {
    std::fprintf(stderr, "fake_workload: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  static cuscope::cupti::testing::FakeCupti cupti;  // outlives the collector, as CUPTI does
  if (auto st = cuscope::cupti::StartCollector(*config, "injection", cupti); !st.ok()) {
    std::fprintf(stderr, "fake_workload: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::atomic<bool> done{false};
  std::thread source([&] {
    while (!done.load()) {
      cupti.DeliverKernels(4, cupti.Timestamp());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cupti.AdvanceClock(20'000'000);
    }
  });
  std::thread calls;
  if (const char* c = std::getenv("FAKE_WORKLOAD_CALLS"); c != nullptr && std::string(c) == "1") {
    calls = std::thread([&] {
      for (uint32_t correlation = 1; !done.load(); ++correlation) {
        cupti.CallLaunch(correlation, "tiny_kernel");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0) {
  }
  done.store(true);
  source.join();
  if (calls.joinable()) calls.join();
  cuscope::cupti::CollectorSummary summary;
  return cuscope::cupti::StopCollector(&summary).ok() ? 0 : 1;
}
