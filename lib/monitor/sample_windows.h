// Monitor mode's duty cycle: what the short recording windows saw, and the estimates drawn from it.
//
// Under a duty cycle (`--duty-cycle`, or the governor of `--overhead-budget`) the session records
// for short windows spread over each interval and nothing between them, so that a program of tiny
// kernels pays CUPTI's per-launch cost only part of the time. Every record then comes from work the
// program issued while a window was open: the window is a sample of the program's launches. From it:
//
// - Each window stands for a stretch of the program `weight` times its length: its slot of the
//   schedule (the governor may choose another share for every slot, and a window recording
//   everything stands for itself). Estimates weigh each window by it, so that a quiet stretch
//   recorded whole and a launch storm recorded a thirteenth of the time each count for the time
//   they stand for (pooling them would count the storm at the quiet stretch's rate).
// - Counts and times per launch (kernels, their GPU time, the top kernels, copies, memsets) scale
//   by the weighted count of the windows' work over their count; launch calls by the weighted
//   count of the windows' launches; sync calls and wait by the time the windows stand for over
//   their host time.
// - The device's busy and idle time is measured over each window's GPU side: from the window's
//   opening to the end of the last work issued in it (the GPU runs work after the host issued it).
//   Before a window's first work starts, the GPU either idled or ran work issued before the window
//   (unrecorded): when the window's first launch call waited more than kQueuedNs for its work to
//   start, the GPU was busy with earlier work meanwhile and that stretch counts as busy; otherwise
//   idle. The busy share, and idle by cause, are the windows' weighted shares of their GPU time,
//   applied to the device's span.
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
#include <utility>
#include <vector>

#include "lib/intervals/interval_set.h"

namespace cuscope::monitor {

// A launch whose work starts later than this after the call returned waited behind other work.
inline constexpr uint64_t kQueuedNs = 30'000;

// One window as an interval sees it: its host time and what each device did for it.
struct SampleWindow {
  uint64_t on_ns = 0;
  uint64_t off_ns = 0;  // 0: still open
  double weight = 1;    // the program's time it stands for, in multiples of its own length
  uint64_t first_launch_end_ns = 0;  // the window's first launch call's return (0: none seen)
  uint64_t launches = 0;
  struct Device {
    uint64_t first_start_ns = UINT64_MAX;
    uint64_t last_end_ns = 0;
    uint64_t items = 0;  // kernels, copies and memsets
  };
  std::map<uint32_t, Device> devices;
};

// The estimates for one device over one interval.
struct SampledDevice {
  double busy_share = 0;     // of the windows' GPU time, weighted (0..1)
  uint64_t observed_ns = 0;  // the windows' GPU time within the device's span
  double observed_weighted_ns = 0;  // the same, each window's by its weight
  std::vector<intervals::Interval> idle;  // idle within the windows' GPU time (to split by cause)
  // Each window's GPU time and weight, in order and not overlapping: for WeightedLength.
  std::vector<std::pair<intervals::Interval, double>> pieces;
  double busy_share_bound = -1;  // 95% bound of the busy share, in points (-1: unknown)
  double count_bound = -1;       // 95% relative bound of the counts (0.05 = 5%; -1: unknown)
};

class SampleWindows {
 public:
  // A window opens; it stands for `weight` times its length of the program's time.
  void Open(uint64_t on_ns, double weight = 1);
  // It closes; `weight` as it turned out (a window that ran long stands for its slot only; 0:
  // as it opened).
  void Close(uint64_t off_ns, double weight = 0);
  bool empty() const { return windows_.empty(); }

  // A launch call (host), and a kernel, copy or memset issued in a window: the window is the one
  // open at `issued_ns` (its launch call's return when known, else its start: the last window
  // opened before it).
  void Launch(uint64_t call_end_ns);
  void Work(uint32_t device, uint64_t start_ns, uint64_t end_ns, uint64_t issued_ns);

  // The windows that opened before `end_ns`, for the interval ending there; one still open past it
  // is cut at `end_ns` and goes on from there.
  std::vector<SampleWindow> TakeBefore(uint64_t end_ns);

  // The windows' host time within [begin, end), and the program's time they stand for there.
  static uint64_t HostTime(const std::vector<SampleWindow>& windows, intervals::Interval span);
  static double RepresentedTime(const std::vector<SampleWindow>& windows, intervals::Interval span);
  // What each item the windows recorded stands for: their weighted count over their count, for a
  // device's work (kernels, copies and memsets) or for the launch calls; `otherwise` when they
  // recorded none.
  static double WorkScale(const std::vector<SampleWindow>& windows, uint32_t device, double otherwise);
  static double LaunchScale(const std::vector<SampleWindow>& windows, double otherwise);
  // The length of `set` within the pieces, each piece's part by its weight.
  static double WeightedLength(const intervals::IntervalSet& set,
                               const std::vector<std::pair<intervals::Interval, double>>& pieces);
  // The 95% relative bound of a count from the windows' own counts (per unit of their host time).
  static double CountBound(const std::vector<SampleWindow>& windows, intervals::Interval span);
  // The device's busy time and idle stretches over the windows' GPU time within `span` (its
  // active part of the interval), from `busy` (the recorded work, merged).
  static SampledDevice Device(const std::vector<SampleWindow>& windows, uint32_t device,
                              const intervals::IntervalSet& busy, intervals::Interval span);

 private:
  SampleWindow* WindowAt(uint64_t time);
  std::deque<SampleWindow> windows_;  // by opening
};

// The 95% bound of a mean from its samples (1.96 standard errors); -1 with fewer than two.
double MeanBound95(const std::vector<double>& samples);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_SAMPLE_WINDOWS_H_
