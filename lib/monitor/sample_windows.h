// Monitor mode's duty cycle: what the short recording windows saw, and the estimates drawn from it.
//
// Under a duty cycle (`--duty-cycle`, or the governor of `--overhead-budget`) the session records
// for short windows spread over each interval and nothing between them, so that a program of tiny
// kernels pays CUPTI's per-launch cost only part of the time. Every record then comes from work the
// program issued while a window was open: the window is a sample of the program's launches. From it:
//
// - Counts and times per launch (kernels, their GPU time, the top kernels, copies, memsets, launch
//   and sync calls) scale by the interval's length over the windows' host time.
// - The device's busy and idle time is measured over each window's GPU side: from the window's
//   opening to the end of the last work issued in it (the GPU runs work after the host issued it).
//   Before a window's first work starts, the GPU either idled or ran work issued before the window
//   (unrecorded): when the window's first launch call waited more than kQueuedNs for its work to
//   start, the GPU was busy with earlier work meanwhile and that stretch counts as busy; otherwise
//   idle. Busy, idle and idle by cause then scale from the windows' GPU time to the device's span.
// - Each estimate carries its 95% bound from the spread between windows (the windows taken as a
//   stratified sample, one per slot of the interval): for the busy share, in points; for the counts,
//   relative. With fewer than two windows the bound is unknown (-1).
//
// Pure: the aggregator feeds it and closes intervals through it (interval_aggregator.h).
#ifndef CUSCOPE_LIB_MONITOR_SAMPLE_WINDOWS_H_
#define CUSCOPE_LIB_MONITOR_SAMPLE_WINDOWS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "lib/analysis/interval.h"

namespace cuscope::monitor {

// A launch whose work starts later than this after the call returned waited behind other work.
inline constexpr uint64_t kQueuedNs = 30'000;

// One window as an interval sees it: its host time and what each device did for it.
struct SampleWindow {
  uint64_t on_ns = 0;
  uint64_t off_ns = 0;  // 0: still open
  uint64_t first_launch_end_ns = 0;  // the window's first launch call's return (0: none seen)
  struct Device {
    uint64_t first_start_ns = UINT64_MAX;
    uint64_t last_end_ns = 0;
    uint64_t items = 0;  // kernels, copies and memsets
  };
  std::map<uint32_t, Device> devices;
};

// The estimates for one device over one interval.
struct SampledDevice {
  uint64_t busy_ns = 0;
  uint64_t observed_ns = 0;  // the windows' GPU time within the device's span
  std::vector<analysis::Interval> idle;  // idle within the windows' GPU time (to split by cause)
  double busy_share_bound = -1;  // 95% bound of the busy share, in points (-1: unknown)
  double count_bound = -1;       // 95% relative bound of the counts (0.05 = 5%; -1: unknown)
};

class SampleWindows {
 public:
  void Open(uint64_t on_ns);
  void Close(uint64_t off_ns);
  bool empty() const { return windows_.empty(); }

  // A launch call (host), and a kernel, copy or memset issued in a window (by its start: the
  // window open when it was issued is the last one opened before it started).
  void Launch(uint64_t call_end_ns);
  void Work(uint32_t device, uint64_t start_ns, uint64_t end_ns);

  // The windows that opened before `end_ns`, for the interval ending there; one still open past it
  // is cut at `end_ns` and goes on from there.
  std::vector<SampleWindow> TakeBefore(uint64_t end_ns);

  // The windows' host time within [begin, end).
  static uint64_t HostTime(const std::vector<SampleWindow>& windows, analysis::Interval span);
  // The 95% relative bound of a count from the windows' own counts (per unit of their host time).
  static double CountBound(const std::vector<SampleWindow>& windows, analysis::Interval span);
  // The device's busy time and idle stretches over the windows' GPU time within `span` (its
  // active part of the interval), from `busy` (the recorded work, merged).
  static SampledDevice Device(const std::vector<SampleWindow>& windows, uint32_t device,
                              const analysis::IntervalSet& busy, analysis::Interval span);

 private:
  SampleWindow* WindowAt(uint64_t time);
  std::deque<SampleWindow> windows_;  // by opening
};

// The 95% bound of a mean from its samples (1.96 standard errors); -1 with fewer than two.
double MeanBound95(const std::vector<double>& samples);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_SAMPLE_WINDOWS_H_
