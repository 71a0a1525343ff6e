// Serves fabricated monitor figures through the metrics endpoint, for the test that has a real
// Prometheus server scrape it (prometheus_scrape_test.sh).
//
//   fake_monitor_source INTERVALS PERIOD_MS
// prints "port=<port>" once it listens (loopback, a free port), waits for SIGUSR1 (so that the
// scraper can be started first), publishes INTERVALS identical intervals, one every PERIOD_MS, then
// keeps serving until SIGTERM or SIGINT. Each interval: device
// 0 busy kBusyNs, one kernel "ns::gemm" (grid 128, block 256) running kKernelNs over kLaunches
// launches, one 1 MiB host-to-device copy; so after N intervals the totals are N times those.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "lib/monitor/prometheus_exporter.h"

namespace {

constexpr uint64_t kIntervalNs = 1'000'000'000;
constexpr uint64_t kBusyNs = 250'000'000;
constexpr uint64_t kKernelNs = 200'000'000;
constexpr uint64_t kLaunches = 10;

cuscope::monitor::IntervalFigures FabricatedInterval(uint64_t index) {
  using namespace cuscope;
  monitor::IntervalFigures f;
  f.start_ns = index * kIntervalNs;
  f.end_ns = f.start_ns + kIntervalNs;
  monitor::DeviceFigures& d = f.devices.emplace_back();
  d.device = 0;
  d.busy_ns = kBusyNs;
  d.idle_ns = kIntervalNs - kBusyNs;
  d.idle_by_cause_ns[static_cast<int>(monitor::HostCause::kSync)] = d.idle_ns;
  d.kernels = kLaunches;
  d.kernel_gpu_ns = kKernelNs;
  monitor::KernelFigures& k = d.top_kernels.emplace_back();
  k.name = "_ZN2ns4gemmIfEEvPfi";
  k.grid = {128, 1, 1};
  k.block = {256, 1, 1};
  k.launches = kLaunches;
  k.gpu_ns = kKernelNs;
  d.copies.push_back({v1::COPY_KIND_HTOD, v1::MEMORY_KIND_PINNED, v1::MEMORY_KIND_DEVICE, 1, 1 << 20, 1'000'000});
  d.counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 1, 300, 300});
  f.launch_calls = kLaunches;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INTERVALS PERIOD_MS\n", argv[0]);
    return 2;
  }
  const long intervals = std::atol(argv[1]);
  const long period_ms = std::atol(argv[2]);
  // Blocked before the server's threads exist, so that they inherit it and sigwait gets the signal.
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigset_t all = stop;
  sigaddset(&all, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);

  auto exporter = cuscope::monitor::PrometheusExporter::Start("0");
  if (!exporter.ok()) {
    std::fprintf(stderr, "cuscope: %s\n", std::string(exporter.status().message()).c_str());
    return 1;
  }
  std::printf("port=%d\n", (*exporter)->port());
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&go, &signal_number);
  for (long i = 0; i < intervals; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    (*exporter)->Publish(FabricatedInterval(static_cast<uint64_t>(i)));
  }
  sigwait(&stop, &signal_number);
  return 0;
}
