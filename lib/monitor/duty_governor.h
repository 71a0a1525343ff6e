// Monitor mode's duty cycle: when to record, and how much, so that the session's cost stays under
// the budget the user set.
//
// CUPTI's cost is per record: on the H100 a kernel record costs its launching thread ~1.2 us, and
// monitor mode's whole collection ~1.8 us a kernel (60,000 tiny PyTorch kernels, interleaved runs);
// against a 6.9 us launch that is +27%. A program that launches less often pays proportionally less,
// a GEMM server well under 1%. So the governor measures what the session records per second of
// recording (its rate r, records per ns) and models what recording all the time would add to the
// program. Two counts give the rate, each as fast as it can be known: the calls the session timed
// are counted as they are made, so a launch storm shows in the first window it falls into; kernel
// records reach the session in buffers, up to CUPTI's flush period after the window that made them
// (a graph launch is one call and many kernels), so theirs is the rate over about the last second
// (sums of records and recorded time decayed by wall time). r is the larger. With a cost c per record, the
// program spends c*r of each recorded second on it, so its own work runs at (1 - c*r) of its speed
// and the added share of its time is c*r / (1 - c*r). Recording a share d of the time adds d times
// that; d is chosen to hold it at the budget (never under `min_duty`, never over 1).
//
// The recorded share is spread: each interval holds `windows_per_interval` slots, and each slot one
// window of d times its length at a random offset within it (a stratified sample: the figures of an
// interval come from all of it, and a program's period cannot line up with the windows). At d = 1
// the windows join into one and nothing toggles.
//
// Pure: the control thread asks it for windows and tells it what each window recorded
// (capture_controller.h); tested with made-up rates.
#ifndef CUSCOPE_LIB_MONITOR_DUTY_GOVERNOR_H_
#define CUSCOPE_LIB_MONITOR_DUTY_GOVERNOR_H_

#include <cstdint>

namespace cuscope::monitor {

struct DutyOptions {
  uint64_t interval_ns = 1'000'000'000;
  uint32_t windows_per_interval = 8;
  // A fixed share of the time (0..1]; 0: the governor chooses from `budget`.
  double fixed_duty = 0;
  double budget = 0.02;  // of the program's time
  double min_duty = 0.01;
  // Before anything was measured: a share that keeps a launch storm near the budget from the start.
  double initial_duty = 0.1;
  double cost_per_record_ns = 1800;  // monitor mode's per-kernel cost on the H100 (above)
  uint64_t seed = 1;
  // DutyCycle's: when no kernel record has arrived for this long while calls were timed, the
  // records are held back in CUPTI's buffers and are handed over before the next window opens
  // (duty_cycle.h); 0: never.
  uint64_t hand_over_after_ns = 0;
};

class DutyGovernor {
 public:
  explicit DutyGovernor(DutyOptions options);

  struct Window {
    uint64_t on_ns;   // from the session's start
    uint64_t off_ns;  // on_ns + the window's length
  };
  // The window of slot `slot` (numbered from the session's start), at the current duty.
  Window WindowOf(uint64_t slot);
  uint64_t slot_ns() const { return slot_ns_; }

  // A measurement: `elapsed_ns` of wall time since the last one, of which recording was on for
  // `window_ns`, in which the session timed `calls` calls and received `kernel_records` (whenever
  // they were made: buffers come late).
  void Recorded(uint64_t elapsed_ns, uint64_t window_ns, uint64_t calls, uint64_t kernel_records);

  // The share of the time recorded from now on (1: all of it).
  double duty() const { return duty_; }
  // The measured rate while recording (records per second; 0 before anything was measured).
  double records_per_second() const { return rate_per_ns_ * 1e9; }
  // What recording all the time would add to the program's time, and what the current duty adds
  // (shares of the program's time; 0 before anything was measured).
  double full_cost() const;
  double estimated_cost() const { return duty_ * full_cost(); }
  bool governed() const { return options_.fixed_duty == 0; }

 private:
  double Random();

  const DutyOptions options_;
  const uint64_t slot_ns_;
  double duty_;
  double rate_per_ns_ = 0;
  double call_rate_per_ns_ = 0;
  double kernel_records_ = 0, kernel_window_ns_ = 0;  // decayed sums
  bool measured_ = false;
  uint64_t random_state_;
};

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_DUTY_GOVERNOR_H_
