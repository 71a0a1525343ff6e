#include "lib/requests/request_ledger.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "lib/intervals/claim_in_order.h"

namespace cuscope::requests {
namespace {

using intervals::Interval;
using intervals::IntervalSet;

constexpr std::string_view kOtherRoute = "other";

void TakeEarlier(uint64_t& earliest, uint64_t t) {
  if (t != 0 && (earliest == 0 || t < earliest)) earliest = t;
}

}  // namespace

RequestLedger::RequestLedger(Options options) : options_(std::move(options)) {}

uint32_t RequestLedger::InternRoute(std::string_view route) {
  if (route.empty()) return 0;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (routes_[i] == route) return static_cast<uint32_t>(i + 1);
  }
  if (routes_.size() + 1 >= options_.max_routes) {
    // The last slot is "other", for every route past the cap.
    for (size_t i = 0; i < routes_.size(); ++i) {
      if (routes_[i] == kOtherRoute) return static_cast<uint32_t>(i + 1);
    }
    routes_.emplace_back(kOtherRoute);
    return static_cast<uint32_t>(routes_.size());
  }
  routes_.emplace_back(route);
  return static_cast<uint32_t>(routes_.size());
}

std::string_view RequestLedger::RouteName(uint32_t route) const {
  return route == 0 || route > routes_.size() ? std::string_view() : std::string_view(routes_[route - 1]);
}

RequestLedger::Scope* RequestLedger::Open(uint64_t thread, uint64_t start, uint64_t id, bool batch,
                                          std::string_view route, std::span<const uint64_t> members) {
  if (scopes_.size() >= options_.max_open_scopes) {
    // The oldest scope goes: a thread that died inside a scope must not hold memory for ever.
    auto oldest = std::min_element(scopes_.begin(), scopes_.end(),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
    const Scope dropped = std::move(oldest->second);
    Retire(dropped);
    ++dropped_scopes_;
  }
  const uint64_t serial = next_serial_++;
  // Read before the insert below, which may move every scope of the map.
  const Scope* parent = Innermost(thread, start);
  const uint64_t parent_serial = parent != nullptr ? parent->serial : 0;
  Scope& s = scopes_[serial];
  s.serial = serial;
  s.parent = parent_serial;
  s.thread = thread;
  s.start = start;
  s.id = id;
  s.batch = batch;
  s.route = batch ? 0 : InternRoute(route);
  s.members.assign(members.begin(), members.end());
  std::vector<uint64_t>& live = threads_[thread];
  auto at = std::upper_bound(live.begin(), live.end(), start,
                             [this](uint64_t t, uint64_t other) { return t < scopes_.at(other).start; });
  live.insert(at, serial);
  return &s;
}

RequestLedger::Scope* RequestLedger::Innermost(uint64_t thread, uint64_t time) {
  auto it = threads_.find(thread);
  if (it == threads_.end()) return nullptr;
  const std::vector<uint64_t>& live = it->second;
  auto after = std::upper_bound(live.begin(), live.end(), time,
                                [this](uint64_t t, uint64_t serial) { return t < scopes_.at(serial).start; });
  if (after == live.begin()) return nullptr;
  auto found = scopes_.find(*std::prev(after));
  while (found != scopes_.end()) {
    Scope& s = found->second;
    if (s.end == 0 || time <= s.end) return &s;
    if (s.parent == 0) return nullptr;
    found = scopes_.find(s.parent);
  }
  return nullptr;
}

void RequestLedger::BeginScope(uint64_t thread, uint64_t start, uint64_t id, bool batch, std::string_view route,
                               std::span<const uint64_t> members) {
  Open(thread, start, id, batch, route, members);
}

void RequestLedger::EndScope(uint64_t thread, uint64_t start, uint64_t end, uint64_t id, bool batch,
                             std::string_view route, std::span<const uint64_t> members) {
  if (auto it = threads_.find(thread); it != threads_.end()) {
    // By start: only the scopes that began at `start` can be it (a trace's thread has thousands).
    for (auto serial = it->second.rbegin(); serial != it->second.rend(); ++serial) {
      Scope& s = scopes_.at(*serial);
      if (s.start < start) break;
      if (s.end == 0 && s.start == start && s.id == id && s.batch == batch) {
        s.end = std::max(end, start);
        return;
      }
    }
  }
  Open(thread, start, id, batch, route, members)->end = std::max(end, start);
}

void RequestLedger::Call(uint64_t thread, uint64_t start, uint64_t end, uint64_t correlation_id,
                         core::ApiCategory category) {
  Scope* owner = Innermost(thread, start);
  if (owner == nullptr) return;
  if (correlation_id != 0 && owner->correlations.size() < options_.max_operations_per_scope) {
    owner->correlations.push_back(correlation_id);
    owner_[correlation_id] = Owner{owner->serial, std::max(start, end)};
    if (options_.owned) options_.owned(correlation_id, owner->route, owner->batch);
  }
  if (category == core::ApiCategory::kLaunch) TakeEarlier(owner->first_launch, start);
  const core::HostCause cause = core::HostCauseOf(category);
  if (cause == core::HostCause::kOutsideCuda) return;
  // What its thread was doing, for every request scope that holds the call.
  for (Scope* s = owner; s != nullptr;) {
    if (!s->batch && s->calls.size() < options_.max_calls_per_scope) s->calls.push_back({start, std::max(start, end), cause});
    auto parent = s->parent != 0 ? scopes_.find(s->parent) : scopes_.end();
    s = parent != scopes_.end() ? &parent->second : nullptr;
  }
}

void RequestLedger::Work(uint64_t correlation_id, uint32_t device, uint32_t stream, uint64_t start, uint64_t end,
                         WorkKind kind) {
  end = std::max(start, end);
  std::vector<Interval>& history = history_[device];
  if (history.size() >= options_.max_history_operations) {
    // Full: the oldest half goes (the newest requests are the ones still to be made final).
    history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(history.size() / 2));
  }
  history.push_back({start, end});
  auto it = owner_.find(correlation_id);
  if (correlation_id == 0 || it == owner_.end()) return;
  Scope& s = scopes_.at(it->second.serial);
  const double ns = static_cast<double>(end - start);
  if (kind == WorkKind::kKernel) {
    s.gpu_ns += ns;
    ++s.kernels;
  } else {
    s.copy_ns += ns;
    ++s.copies;
  }
  if (s.first_work == 0 || start < s.first_work) {
    s.first_work = start;
    s.device = device;
  }
  if (s.operations.size() < options_.max_operations_per_scope) {
    s.operations.push_back({stream, it->second.call_end, start, end});
  }
}

IntervalSet RequestLedger::Waits(const Scope& s) {
  std::vector<Operation> ops = s.operations;
  std::sort(ops.begin(), ops.end(), [](const Operation& a, const Operation& b) {
    return std::tie(a.stream, a.start, a.end) < std::tie(b.stream, b.start, b.end);
  });
  std::vector<Interval> waits;
  uint64_t stream_end = 0;  // the end of the scope's latest operation on this stream so far
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i == 0 || ops[i].stream != ops[i - 1].stream) stream_end = 0;
    const uint64_t ready = std::max(ops[i].ready, stream_end);
    if (ops[i].start > ready) waits.push_back({ready, ops[i].start});
    stream_end = std::max(stream_end, ops[i].end);
  }
  return intervals::UnionOf(std::move(waits));
}

void RequestLedger::Retire(const Scope& s) {
  for (uint64_t c : s.correlations) {
    if (auto it = owner_.find(c); it != owner_.end() && it->second.serial == s.serial) owner_.erase(it);
  }
  if (auto it = threads_.find(s.thread); it != threads_.end()) {
    std::vector<uint64_t>& live = it->second;
    live.erase(std::remove(live.begin(), live.end(), s.serial), live.end());
    if (live.empty()) threads_.erase(it);
  }
  scopes_.erase(s.serial);
}

void RequestLedger::ShareBatch(const Scope& s) {
  if (s.members.empty()) return;
  const IntervalSet waits = Waits(s);
  const double n = static_cast<double>(s.members.size());
  for (uint64_t request : s.members) {
    Share& share = shares_[request];
    share.gpu_ns += s.gpu_ns / n;
    share.kernels += s.kernels;
    share.copy_ns += s.copy_ns / n;
    share.copies += s.copies;
    TakeEarlier(share.first_launch, s.first_launch);
    if (s.first_work != 0 && (share.first_work == 0 || s.first_work < share.first_work)) {
      share.first_work = s.first_work;
      share.device = s.device;
    }
    ++share.batches;
    share.latest_end = std::max(share.latest_end, s.end);
    // Waiting is time, not work: each request of the batch waited all of it.
    share.waits = intervals::Union(share.waits, waits);
  }
}

RequestFigures RequestLedger::Figures(const Scope& s, const absl::flat_hash_map<uint32_t, IntervalSet>& busy,
                                      const IntervalSet& any_busy) {
  RequestFigures f;
  f.id = s.id;
  f.route = s.route;
  f.thread = s.thread;
  f.start = s.start;
  f.end = s.end;
  f.gpu_ns = s.gpu_ns;
  f.kernels = s.kernels;
  f.copy_ns = s.copy_ns;
  f.copies = s.copies;
  f.first_launch = s.first_launch;
  f.first_work = s.first_work;
  f.device = s.device;
  IntervalSet waits = Waits(s);
  if (auto it = shares_.find(s.id); it != shares_.end()) {
    const Share& share = it->second;
    f.gpu_ns += share.gpu_ns;
    f.kernels += share.kernels;
    f.copy_ns += share.copy_ns;
    f.copies += share.copies;
    f.batches = share.batches;
    TakeEarlier(f.first_launch, share.first_launch);
    if (share.first_work != 0 && (f.first_work == 0 || share.first_work < f.first_work)) {
      f.first_work = share.first_work;
      f.device = share.device;
    }
    waits = intervals::Union(waits, share.waits);
    shares_.erase(it);
  }
  f.queue_ns = intervals::TotalLength(waits);
  if (options_.keep_waits) f.waits = std::move(waits);
  // Idle: its device's gaps inside its span, each stretch given to the first cause (in precedence)
  // whose calls cover it; what no call covers is outside CUDA.
  const IntervalSet* device_busy = &any_busy;
  if (f.first_work != 0) {
    auto it = busy.find(f.device);
    static const IntervalSet kNothing;
    device_busy = it != busy.end() ? &it->second : &kNothing;
  }
  IntervalSet idle = intervals::GapsWithin(*device_busy, Interval{s.start, s.end});
  f.idle_ns = intervals::TotalLength(idle);
  std::array<IntervalSet, core::kHostCauseCount - 1> by_cause;  // kOutsideCuda: what none covers
  for (const CallPiece& c : s.calls) by_cause[static_cast<int>(c.cause)].push_back({c.begin, c.end});
  for (IntervalSet& calls : by_cause) calls = intervals::UnionOf(std::move(calls));
  const std::vector<IntervalSet> claimed = intervals::ClaimInOrder(idle, by_cause);
  for (int c = 0; c < core::kHostCauseCount - 1; ++c) f.idle_by_cause_ns[c] = intervals::TotalLength(claimed[c]);
  f.idle_by_cause_ns[static_cast<int>(core::HostCause::kOutsideCuda)] = intervals::TotalLength(idle);
  return f;
}

std::vector<RequestFigures> RequestLedger::FinalizeUpTo(uint64_t horizon, bool all) {
  std::vector<const Scope*> ready;
  uint64_t earliest = UINT64_MAX;
  for (const auto& [serial, s] : scopes_) {
    if (s.end == 0) {
      if (all) ++unfinished_scopes_;
      continue;
    }
    if (!all && s.end > horizon) continue;
    ready.push_back(&s);
    earliest = std::min(earliest, s.start);
  }
  std::vector<RequestFigures> out;
  if (!ready.empty()) {
    // Inner scopes end first: an inner batch's shares are in before the request that holds it.
    std::sort(ready.begin(), ready.end(), [](const Scope* a, const Scope* b) {
      return std::tie(a->end, b->start, a->serial) < std::tie(b->end, a->start, b->serial);
    });
    absl::flat_hash_map<uint32_t, IntervalSet> busy;
    std::vector<Interval> every;
    for (const auto& [device, operations] : history_) {
      std::vector<Interval> near;
      for (const Interval& op : operations) {
        if (op.end >= earliest) near.push_back(op);
      }
      every.insert(every.end(), near.begin(), near.end());
      busy[device] = intervals::UnionOf(std::move(near));
    }
    const IntervalSet any_busy = intervals::UnionOf(std::move(every));
    std::vector<uint64_t> serials;
    serials.reserve(ready.size());
    for (const Scope* s : ready) serials.push_back(s->serial);
    for (uint64_t serial : serials) {
      const Scope& s = scopes_.at(serial);
      if (s.batch) {
        ShareBatch(s);
      } else {
        out.push_back(Figures(s, busy, any_busy));
      }
      if (!all) Retire(s);  // at the end everything goes at once
    }
  }
  if (all) {
    shares_unclaimed_ += shares_.size();
    shares_.clear();
    scopes_.clear();
    threads_.clear();
    owner_.clear();
    history_.clear();
    return out;
  }
  PruneHistory(horizon);
  return out;
}

void RequestLedger::PruneHistory(uint64_t horizon) {
  // A scope open longer than the history reaches (its end lost: a thread that died inside it, an
  // end the queue's cap dropped) goes, so that it holds no memory and takes no later call.
  if (horizon > options_.history_ns) {
    std::vector<uint64_t> stale;
    for (const auto& [serial, s] : scopes_) {
      if (s.end == 0 && s.start + options_.history_ns < horizon) stale.push_back(serial);
    }
    for (uint64_t serial : stale) {
      const Scope gone = std::move(scopes_.at(serial));
      Retire(gone);
      ++unfinished_scopes_;
    }
  }
  // What a scope still open (or not yet final) may need, and no more than history_ns behind.
  uint64_t keep_from = horizon;
  for (const auto& [serial, s] : scopes_) keep_from = std::min(keep_from, s.start);
  if (horizon > options_.history_ns) keep_from = std::max(keep_from, horizon - options_.history_ns);
  for (auto& [device, operations] : history_) {
    operations.erase(std::remove_if(operations.begin(), operations.end(),
                                    [keep_from](const Interval& op) { return op.end < keep_from; }),
                     operations.end());
  }
  const uint64_t shares_from = horizon > options_.history_ns ? horizon - options_.history_ns : 0;
  for (auto it = shares_.begin(); it != shares_.end();) {
    if (it->second.latest_end < shares_from) {
      ++shares_unclaimed_;
      shares_.erase(it++);
    } else {
      ++it;
    }
  }
}

std::vector<RequestFigures> RequestLedger::Finalize(uint64_t horizon) { return FinalizeUpTo(horizon, false); }
std::vector<RequestFigures> RequestLedger::FinalizeAll() { return FinalizeUpTo(0, true); }

}  // namespace cuscope::requests
