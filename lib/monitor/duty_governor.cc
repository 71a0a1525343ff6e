#include "lib/monitor/duty_governor.h"

#include <algorithm>
#include <cmath>

namespace cuscope::monitor {
namespace {

// How much of the call rate each measurement replaces when it falls (a rise is taken whole: the
// budget is held first, the duty given back over a few windows).
constexpr double kCallRateWeight = 0.5;
// The kernel records' memory, in wall time: two of CUPTI's flush periods (500 ms in cuscope), so
// that the records of a window, counted when their buffer comes, are set against that window's
// time and the rate holds between buffers.
constexpr double kKernelMemoryNs = 1e9;
// c*r past this would mean the program does nothing but pay for its records: the model's edge.
constexpr double kMaxBusyShare = 0.95;

}  // namespace

DutyGovernor::DutyGovernor(DutyOptions options)
    : options_(options),
      slot_ns_(std::max<uint64_t>(1, options.interval_ns / std::max<uint32_t>(1, options.windows_per_interval))),
      duty_(options.fixed_duty > 0 ? std::min(1.0, options.fixed_duty) : std::clamp(options.initial_duty, options.min_duty, 1.0)),
      random_state_(options.seed * 0x9E3779B97F4A7C15ull + 1) {}

double DutyGovernor::Random() {
  // xorshift64*: fast, and the same windows for the same seed (tests).
  random_state_ ^= random_state_ >> 12;
  random_state_ ^= random_state_ << 25;
  random_state_ ^= random_state_ >> 27;
  return static_cast<double>((random_state_ * 0x2545F4914F6CDD1Dull) >> 11) / static_cast<double>(1ull << 53);
}

DutyGovernor::Window DutyGovernor::WindowOf(uint64_t slot) {
  const uint64_t start = slot * slot_ns_;
  if (duty_ >= 1) return {start, start + slot_ns_};
  const uint64_t length = std::max<uint64_t>(1, static_cast<uint64_t>(duty_ * static_cast<double>(slot_ns_)));
  const uint64_t offset = static_cast<uint64_t>(Random() * static_cast<double>(slot_ns_ - length));
  return {start + offset, start + offset + length};
}

double DutyGovernor::full_cost() const {
  if (!measured_) return 0;
  const double busy = std::min(kMaxBusyShare, options_.cost_per_record_ns * rate_per_ns_);
  return busy / (1 - busy);
}

void DutyGovernor::Recorded(uint64_t elapsed_ns, uint64_t window_ns, uint64_t calls, uint64_t kernel_records) {
  if (window_ns == 0) return;
  const double window = static_cast<double>(window_ns);
  const double call_rate = static_cast<double>(calls) / window;
  call_rate_per_ns_ = measured_ ? std::max(call_rate, (1 - kCallRateWeight) * call_rate_per_ns_ + kCallRateWeight * call_rate)
                                : call_rate;
  const double keep = std::exp(-static_cast<double>(std::max(elapsed_ns, window_ns)) / kKernelMemoryNs);
  kernel_records_ = keep * kernel_records_ + static_cast<double>(kernel_records);
  kernel_window_ns_ = keep * kernel_window_ns_ + window;
  rate_per_ns_ = std::max(call_rate_per_ns_, kernel_records_ / kernel_window_ns_);
  measured_ = true;
  if (!governed()) return;
  const double full = full_cost();
  duty_ = full <= options_.budget ? 1.0 : std::clamp(options_.budget / full, options_.min_duty, 1.0);
}

}  // namespace cuscope::monitor
