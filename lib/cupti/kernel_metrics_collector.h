// Kernel internals in-process: the CUPTI Range Profiler around selected kernel launches.
//
// The collector sees every kernel launch through CUPTI's driver-API callbacks. For a launch the
// selection picks, it starts the Range Profiler (auto range, kernel replay) on the API's entry and
// stops it on its exit: CUPTI replays that one kernel as many times as the metrics need passes,
// saving and restoring the memory it touches, so the program's results do not change. The launch
// becomes synchronous and its kernel record has no duration; the collector reports the span as a
// metrics window so the timeline never reads it as the program's own time.
//
// Refusals (no range profiling on this device or driver, counters reserved for administrators,
// another profiler holding them, a metric the chip lacks) become one `cuscope:` line each; the
// metrics stop, the timeline goes on.
#ifndef CUSCOPE_LIB_CUPTI_KERNEL_METRICS_COLLECTOR_H_
#define CUSCOPE_LIB_CUPTI_KERNEL_METRICS_COLLECTOR_H_

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/settings/config.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/kernel_selection.h"
#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti {

// The counters of one profiled launch.
struct ProfiledLaunch {
  uint64_t correlation_id = 0;  // the launching runtime call's, else the driver call's
  uint32_t device = 0;
  std::string kernel_name;  // mangled, as the kernel record has it
  core::LaunchShape shape;
  uint32_t passes = 0;
  std::vector<std::pair<std::string, double>> values;
  uint64_t start_ns = 0;  // CUPTI timestamps around the profiled launch call
  uint64_t end_ns = 0;
};

class KernelMetricsCollector {
 public:
  using Emit = std::function<void(ProfiledLaunch)>;
  using Warn = std::function<void(const std::string&)>;

  // `config.metrics` must not be empty; the selection was validated with the config. CUPTI (the
  // Range Profiler, its clock) is reached through `cupti`, which must outlive the collector.
  KernelMetricsCollector(CuptiApi& cupti, const settings::Config& config, Emit emit, Warn warn);
  ~KernelMetricsCollector();

  // The callbacks to enable on the session's subscriber.
  static std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> Callbacks();

  // Routes one callback; `timeline_open` says whether collection is on now (capture gating).
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data, bool timeline_open);

  // One-run top-down: until this is called nothing is profiled; from then on, only launches of
  // these kernels (name, grid and block), at most `launches_each` of each. Any thread.
  void SetTargets(std::vector<core::HotKernelChoice> targets, uint64_t launches_each);

  // A monitor-mode capture's top-down is over: no launch is chosen until the next SetTargets, and
  // the Range Profiler lets go of every context, so the GPU counters over time may sample again.
  // Waits for a launch being profiled (at most `wait`); false when it did not end in time, and the
  // profilers stay set up then.
  bool ClearTargets(std::chrono::milliseconds wait);

  // Turns the Range Profiler off on every context still alive.
  void Shutdown();

  uint64_t profiled() const { return profiled_.load(); }

  // Implementation details, named here so the source file's thread-local state can refer to them.
  struct ContextProfiler;
  struct Active;

 private:

  void OnLaunchEnter(CUpti_CallbackId cbid, const CUpti_CallbackData& info);
  void OnLaunchExit(const CUpti_CallbackData& info);
  // The context's profiler disabled and forgotten: the context is going away, or its start failed.
  void ReleaseProfiler(CUcontext ctx);
  // Whether any launch may still be chosen, and whether this one is (counting it).
  bool MayChoose();
  // Whether to profile this launch; for a top-down target, `target` says which (-1: none).
  bool Choose(std::string_view mangled_name, const core::LaunchShape& shape, int* target);
  // A target's launch whose profile could not be read (another thread's kernel ran inside it):
  // the target may be profiled on a later launch instead.
  void GiveBack(int target);
  static constexpr uint64_t kMaxTriesPerLaunch = 8;
  // The context's profiler, set up on first use; nullptr when that failed (metrics are off then).
  ContextProfiler* ProfilerFor(CUcontext ctx);
  void TurnOff(const std::string& why);

  CuptiApi& cupti_;
  settings::Config config_;
  Emit emit_;
  Warn warn_;
  std::atomic<bool> off_{false};
  std::atomic<bool> busy_{false};  // a launch is being profiled; others pass unprofiled
  std::atomic<uint64_t> profiled_{0};
  std::mutex mu_;                  // selector_ and contexts_; never held across a CUPTI call
  std::optional<core::KernelSelector> selector_;
  // Top-down targets and how many launches of each were profiled; unset until SetTargets.
  std::optional<std::vector<core::HotKernelChoice>> targets_;
  std::vector<uint64_t> target_profiled_;
  std::vector<uint64_t> target_given_back_;  // each target's launches whose profile was not one launch's
  uint64_t launches_each_ = 0;
  absl::flat_hash_map<CUcontext, std::unique_ptr<ContextProfiler>> contexts_;
  bool profiler_initialized_ = false;
  bool rejected_reported_ = false;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_KERNEL_METRICS_COLLECTOR_H_
