// Monitor mode's duty cycle over time: turns recording on and off at the governor's windows
// (duty_governor.h), tells the governor what each window recorded, and records all the time while
// something needs every record (a trace window, a capture, request scopes).
//
// The control thread calls Step whenever it wakes and sleeps until the time Step returns; the
// switches and counters are hooks, so the schedule is tested here with a made-up clock.
//
// Records held back: CUPTI hands a buffer over only once every record in it is complete, and a
// record that never completes (as a launch replayed for kernel metrics leaves) holds every later
// one back until the forced flush at the session's end. So when kernel launches were timed but no
// kernel record arrived for `hand_over_after_ns`, the buffers are handed over (`hand_over`, a
// forced flush) while recording is off, just before the next window opens: the previous window's
// kernels have had the whole gap to finish. (The aggregator waits two flush periods and more for
// late records; records held longer than that reach a later interval, counted late.)
//
// Records missing: when a hand-over brought nothing either and the next wait passes without a
// kernel record while launches were still timed, CUPTI stopped making kernel records (seen on an
// H100 in 2 to 6 runs of 10 under the governor, after its first cut in a launch storm: every later
// window timed launches and got no kernel record, none late, none dropped). The duty cycle says so
// once (`records_missing`) and records all the time from then on.
#ifndef CUSCOPE_LIB_MONITOR_DUTY_CYCLE_H_
#define CUSCOPE_LIB_MONITOR_DUTY_CYCLE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "lib/monitor/duty_governor.h"

namespace cuscope::monitor {

class DutyCycle {
 public:
  using Clock = std::chrono::steady_clock;
  struct Hooks {
    // Turns recording on or off; false when it could not (the session's recording ended).
    // `weight`: the program's time the window stands for, in multiples of its length (at the
    // opening as planned, at the closing as it turned out).
    std::function<bool(bool on, double weight)> record;
    std::function<bool()> every_record_wanted;
    // What the session recorded so far: calls it timed, and kernel records it received.
    std::function<uint64_t()> calls;
    std::function<uint64_t()> kernel_records;
    // Of those calls, the kernel launches: what should bring kernel records (null: the calls).
    std::function<uint64_t()> launches;
    // Hands over what CUPTI's buffers hold, complete or not (called only while recording is off).
    std::function<void()> hand_over;
    // Called once when kernel records went missing (above); `launches`: timed since the last one came.
    std::function<void(uint64_t launches)> records_missing;
  };
  // Recording is on at `start` (the session's window opened with it).
  DutyCycle(DutyOptions options, Hooks hooks, Clock::time_point start);

  // Switches as the schedule says at `now`; returns when to be called next.
  Clock::time_point Step(Clock::time_point now);

  // For `cuscope status` and /metrics (any thread).
  struct Status {
    double duty = 1;            // share of the time recorded from now on
    double estimated_cost = 0;  // of the program's time, at that duty (0: not yet measured)
    double records_per_second = 0;
    bool every_record = false;  // recording all the time because something needs every record
    bool governed = false;      // the duty follows a budget (not fixed)
    uint64_t hand_overs = 0;    // times records held back in CUPTI's buffers were handed over
    bool records_missing = false;  // CUPTI stopped making kernel records: recording all the time
  };
  Status status() const;

 private:
  // The window of the current slot, on the steady clock.
  void ScheduleSlot();
  void TurnOn(Clock::time_point now);
  void TurnOff(Clock::time_point now);
  void Measure(Clock::time_point now);
  // Notes when kernel records last arrived; hands held-back records over (recording off).
  void WatchArrivals(Clock::time_point now);
  void HandOverHeldRecords(Clock::time_point now);
  uint64_t Launches() const { return hooks_.launches ? hooks_.launches() : hooks_.calls(); }
  // What a window of `length` in one slot stands for: the slot, in multiples of the length (>= 1).
  double SlotWeight(Clock::duration length) const;
  void Publish();

  DutyGovernor governor_;
  const Hooks hooks_;
  const Clock::time_point start_;
  uint64_t slot_ = 0;
  Clock::time_point on_at_, off_at_;
  bool on_ = true;
  bool stopped_ = false;  // recording ended: nothing more to switch
  Clock::time_point measured_from_;  // recording on since (or last measured)
  Clock::time_point last_measure_;
  Clock::time_point on_since_;  // the open window's opening
  double open_weight_ = 1;
  uint64_t calls_at_ = 0, kernels_at_ = 0;
  const Clock::duration hand_over_after_;
  uint64_t arrived_records_ = 0;  // kernel records received, as last seen
  uint64_t launches_at_arrival_ = 0;
  Clock::time_point last_arrival_;  // (or last hand-over)
  bool handed_over_since_arrival_ = false;
  std::atomic<bool> records_missing_{false};

  std::atomic<double> duty_{1};
  std::atomic<double> cost_{0};
  std::atomic<double> full_cost_{0};
  std::atomic<double> rate_{0};
  std::atomic<bool> every_record_{false};
  std::atomic<uint64_t> hand_overs_{0};
};

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_DUTY_CYCLE_H_
