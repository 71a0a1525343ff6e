#include "lib/monitor/duty_cycle.h"

#include <algorithm>

namespace cuscope::monitor {
namespace {

// A window that opens within this of the last one's end joins it: no switch off and on again.
constexpr auto kJoin = std::chrono::microseconds(500);
// While everything is recorded (a duty of 1), the rate is measured this many times a slot, so
// that a launch storm after a quiet stretch is recorded whole for an eighth of a slot, not a slot.
constexpr uint64_t kChecksPerFullSlot = 8;

}  // namespace

DutyCycle::DutyCycle(DutyOptions options, Hooks hooks, Clock::time_point start)
    : governor_(options),
      hooks_(std::move(hooks)),
      start_(start),
      measured_from_(start),
      last_measure_(start),
      hand_over_after_(std::chrono::nanoseconds(options.hand_over_after_ns)),
      last_arrival_(start) {
  calls_at_ = hooks_.calls();
  kernels_at_ = hooks_.kernel_records();
  arrived_records_ = kernels_at_;
  launches_at_arrival_ = Launches();
  ScheduleSlot();
  Publish();
}

void DutyCycle::ScheduleSlot() {
  const DutyGovernor::Window w = governor_.WindowOf(slot_);
  on_at_ = start_ + std::chrono::nanoseconds(w.on_ns);
  off_at_ = start_ + std::chrono::nanoseconds(w.off_ns);
}

void DutyCycle::Measure(Clock::time_point now) {
  if (!on_ || now <= measured_from_) return;
  // Calls are timed only while recording; kernel records arrive whenever their buffer does, so
  // those received while off count too (they were made in an earlier window).
  const uint64_t calls = hooks_.calls();
  const uint64_t kernels = hooks_.kernel_records();
  const auto ns = [](Clock::duration d) { return static_cast<uint64_t>(std::chrono::nanoseconds(d).count()); };
  governor_.Recorded(ns(now - last_measure_), ns(now - measured_from_), calls - calls_at_, kernels - kernels_at_);
  calls_at_ = calls;
  kernels_at_ = kernels;
  measured_from_ = now;
  last_measure_ = now;
  Publish();
}

double DutyCycle::SlotWeight(Clock::duration length) const {
  const double ns = static_cast<double>(std::chrono::nanoseconds(length).count());
  return ns > 0 ? std::max(1.0, static_cast<double>(governor_.slot_ns()) / ns) : 1.0;
}

void DutyCycle::WatchArrivals(Clock::time_point now) {
  const uint64_t records = hooks_.kernel_records();
  if (records == arrived_records_) return;
  arrived_records_ = records;
  launches_at_arrival_ = Launches();
  last_arrival_ = now;
  handed_over_since_arrival_ = false;
}

void DutyCycle::HandOverHeldRecords(Clock::time_point now) {
  if (on_ || !hooks_.hand_over || hand_over_after_ == Clock::duration::zero()) return;
  const uint64_t launches = Launches();
  if (launches == launches_at_arrival_ || now - last_arrival_ < hand_over_after_) return;
  if (handed_over_since_arrival_) {
    // The last hand-over brought nothing either: no record is held back, none is made.
    if (!records_missing_.exchange(true) && hooks_.records_missing) {
      hooks_.records_missing(launches - launches_at_arrival_);
    }
    return;
  }
  hooks_.hand_over();
  hand_overs_.fetch_add(1, std::memory_order_relaxed);
  handed_over_since_arrival_ = true;
  // What the hand-over brought is counted at the next look; the wait starts again.
  launches_at_arrival_ = launches;
  last_arrival_ = now;
}

void DutyCycle::TurnOn(Clock::time_point now) {
  if (on_ || stopped_) return;
  HandOverHeldRecords(now);
  // A window of a slot stands for the slot; one recording everything (a duty of 1, or every
  // record wanted) for itself.
  const bool whole = governor_.duty() >= 1 || every_record_.load(std::memory_order_relaxed);
  const double weight = whole ? 1.0 : SlotWeight(off_at_ - on_at_);
  if (!hooks_.record(true, weight)) {
    stopped_ = true;
    return;
  }
  on_ = true;
  on_since_ = now;
  open_weight_ = weight;
  measured_from_ = now;
  calls_at_ = hooks_.calls();  // (none were timed while off)
}

void DutyCycle::TurnOff(Clock::time_point now) {
  if (!on_ || stopped_) return;
  Measure(now);
  // A window of a slot that ran long (the thread woke late) still stands for its slot only.
  const double weight = open_weight_ > 1 ? SlotWeight(now - on_since_) : 1.0;
  if (!hooks_.record(false, weight)) stopped_ = true;
  on_ = false;
}

DutyCycle::Clock::time_point DutyCycle::Step(Clock::time_point now) {
  if (stopped_) return Clock::time_point::max();
  WatchArrivals(now);
  const bool every = hooks_.every_record_wanted() || records_missing_.load(std::memory_order_relaxed);
  every_record_.store(every, std::memory_order_relaxed);
  if (every) {
    // A window of a slot goes on as one recording everything, which stands for itself.
    if (on_ && open_weight_ > 1) TurnOff(now);
    TurnOn(now);
    // Still measured, a slot at a time, so the duty is right when the need ends.
    while (now >= off_at_) {
      ++slot_;
      ScheduleSlot();
    }
    if (now >= measured_from_ + std::chrono::nanoseconds(governor_.slot_ns())) Measure(now);
    return std::min(off_at_, now + std::chrono::nanoseconds(governor_.slot_ns()));
  }
  while (true) {
    // In the window, or on already with the window about to open (a duty of 1: windows join).
    if (now < off_at_ && (now >= on_at_ || (on_ && on_at_ <= now + kJoin))) {
      TurnOn(now);
      if (governor_.duty() < 1) return off_at_;
      // A whole slot recorded: measured as it goes, and cut short once the rate asks for less.
      const auto check = std::chrono::nanoseconds(governor_.slot_ns() / kChecksPerFullSlot);
      if (now >= measured_from_ + check) Measure(now);
      if (governor_.duty() >= 1 || stopped_) return std::min(off_at_, now + check);
      TurnOff(now);
      ++slot_;
      ScheduleSlot();
      continue;
    }
    if (now < on_at_) {
      TurnOff(now);
      return on_at_;
    }
    // The window is over: the next slot's, unless that is over too (the thread woke late).
    Measure(now);
    ++slot_;
    ScheduleSlot();
    if (off_at_ <= now) {
      const uint64_t elapsed = static_cast<uint64_t>(std::chrono::nanoseconds(now - start_).count());
      slot_ = std::max(slot_, elapsed / governor_.slot_ns());
      ScheduleSlot();
      if (off_at_ <= now) {
        ++slot_;
        ScheduleSlot();
      }
    }
  }
}

void DutyCycle::Publish() {
  duty_.store(governor_.duty(), std::memory_order_relaxed);
  cost_.store(governor_.estimated_cost(), std::memory_order_relaxed);
  full_cost_.store(governor_.full_cost(), std::memory_order_relaxed);
  rate_.store(governor_.records_per_second(), std::memory_order_relaxed);
}

DutyCycle::Status DutyCycle::status() const {
  Status s;
  s.every_record = every_record_.load(std::memory_order_relaxed);
  s.duty = s.every_record ? 1.0 : duty_.load(std::memory_order_relaxed);
  s.estimated_cost = (s.every_record ? full_cost_ : cost_).load(std::memory_order_relaxed);
  s.records_per_second = rate_.load(std::memory_order_relaxed);
  s.governed = governor_.governed();
  s.hand_overs = hand_overs_.load(std::memory_order_relaxed);
  s.records_missing = records_missing_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace cuscope::monitor
