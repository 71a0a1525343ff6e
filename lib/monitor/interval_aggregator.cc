#include "lib/monitor/interval_aggregator.h"

#include "lib/intervals/claim_in_order.h"
#include "lib/monitor/request_figures.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cuscope::monitor {
namespace {

using intervals::Interval;
using intervals::IntervalSet;

std::array<uint32_t, 3> Dim3(int32_t x, int32_t y, int32_t z) {
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z)};
}

// The host causes in order of precedence, as indices into OpenInterval::host (-1: none).
int HostIndex(core::ApiCategory category) {
  const HostCause cause = core::HostCauseOf(category);
  return cause == HostCause::kOutsideCuda ? -1 : static_cast<int>(cause);
}

// Adds `device` to a sorted list of device ids, once.
void InsertSorted(std::vector<uint32_t>& devices, uint32_t device) {
  const auto at = std::lower_bound(devices.begin(), devices.end(), device);
  if (at == devices.end() || *at != device) devices.insert(at, device);
}

uint64_t Scaled(uint64_t value, double scale) {
  return static_cast<uint64_t>(std::llround(static_cast<double>(value) * scale));
}

// A duty cycle's copies and memsets, from the windows to the whole interval (kernels are scaled
// by group before the top ones are chosen).
void ScaleCopies(DeviceFigures& d, double scale) {
  for (CopyFigures& c : d.copies) {
    c.count = Scaled(c.count, scale);
    c.bytes = Scaled(c.bytes, scale);
    c.gpu_ns = Scaled(c.gpu_ns, scale);
  }
  d.memsets = Scaled(d.memsets, scale);
  d.memset_bytes = Scaled(d.memset_bytes, scale);
  d.memset_ns = Scaled(d.memset_ns, scale);
}

}  // namespace

IntervalAggregator::IntervalAggregator(Options options, uint64_t origin_ns)
    : options_(std::move(options)), origin_(origin_ns) {}

int64_t IntervalAggregator::IndexOf(uint64_t time) const {
  const int64_t index = time <= origin_ ? 0 : static_cast<int64_t>((time - origin_) / options_.interval_ns);
  return std::max(index, next_to_close_);
}

IntervalAggregator::OpenInterval& IntervalAggregator::Open(int64_t index) { return open_[index]; }

IntervalAggregator::OpenInterval& IntervalAggregator::OpenFor(uint64_t time) {
  const bool late = time > origin_ && static_cast<int64_t>((time - origin_) / options_.interval_ns) < next_to_close_;
  OpenInterval& in = Open(IndexOf(time));
  if (late) ++in.late;
  return in;
}

void IntervalAggregator::AddPiece(Pieces& pieces, Interval piece) const {
  if (piece.empty()) return;
  pieces.push_back(piece);
  if (pieces.size() < options_.max_pieces) return;
  // Bounded memory: merge what overlaps; if the pieces are still that many (a stream of tiny
  // activities with tiny gaps between them), close the smallest gaps too, doubling the tolerance,
  // which can only add a little busy time.
  IntervalSet merged = intervals::UnionOf(std::move(pieces));
  uint64_t tolerance = 64;
  while (merged.size() > options_.max_pieces / 2) {
    IntervalSet coarser;
    for (const Interval& x : merged) {
      if (!coarser.empty() && x.begin <= coarser.back().end + tolerance) {
        coarser.back().end = std::max(coarser.back().end, x.end);
      } else {
        coarser.push_back(x);
      }
    }
    merged = std::move(coarser);
    tolerance *= 2;
  }
  pieces = std::move(merged);
}

void IntervalAggregator::AddSpan(uint64_t begin, uint64_t end, const std::function<Pieces&(OpenInterval&)>& pick) {
  if (end <= begin) return;
  latest_end_ = std::max(latest_end_, end);
  for (int64_t k = IndexOf(begin);; ++k) {
    const uint64_t k_end = StartOf(k + 1);
    // A late record's time before the open intervals lands at the start of the oldest one.
    const uint64_t from = std::max(begin, StartOf(k));
    const uint64_t to = std::min(end, k_end);
    AddPiece(pick(Open(k)), Interval{from, std::max(from, to)});
    if (end <= k_end) break;
  }
}

void IntervalAggregator::SeeDevice(uint32_t device) { InsertSorted(devices_seen_, device); }

void IntervalAggregator::AddBusy(uint32_t device, uint64_t begin, uint64_t end) {
  SeeDevice(device);
  AddSpan(begin, end, [device](OpenInterval& in) -> Pieces& { return in.devices[device].busy; });
}

uint32_t IntervalAggregator::NameId(std::string_view name) {
  auto it = name_ids_.find(absl::string_view(name.data(), name.size()));
  if (it != name_ids_.end()) return it->second;
  if (names_.size() >= options_.max_kernel_names) return kOtherName;
  const uint32_t id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(names_.back(), id);
  return id;
}

const core::ApiTraits& IntervalAggregator::TraitsOf(v1::ApiDomain domain, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = traits_.find(key);
  if (it != traits_.end()) return it->second;
  const std::string name = options_.api_name ? options_.api_name(domain, cbid) : std::string();
  return traits_.emplace(key, core::ClassifyApi(name)).first->second;
}

void IntervalAggregator::Add(const core::KernelActivity& a) {
  if (a.end < a.start || a.start == 0) return;
  const uint32_t device = a.config.device;
  ledger_.Work(a.correlation_id, device, a.stream, a.start, a.end, requests::WorkKind::kKernel);
  if (options_.sampled && a.graph_id == 0) {
    uint64_t issued = a.start;
    if (auto it = launch_ends_.find(a.correlation_id); it != launch_ends_.end()) {
      issued = it->second;
      launch_ends_.erase(it);
    }
    samples_.Work(device, a.start, a.end, issued);
  }
  AddBusy(device, a.start, a.end);
  DeviceAccumulator& acc = OpenFor(a.start).devices[device];
  const KernelGroupKey key{NameId(a.config.name), Dim3(a.config.grid_x, a.config.grid_y, a.config.grid_z),
                           Dim3(a.config.block_x, a.config.block_y, a.config.block_z)};
  const bool whole = options_.sampled && a.graph_id != 0;
  auto& groups = whole ? acc.graph_kernels : acc.kernels;
  Tally* tally = whole ? &acc.other_graph_kernels : &acc.other_kernels;
  if (key.name_id != kOtherName) {
    auto it = groups.find(key);
    if (it != groups.end()) {
      tally = &it->second;
    } else if (groups.size() < options_.max_kernel_groups) {
      tally = &groups[key];
    }
  }
  ++tally->count;
  tally->ns += a.end - a.start;
}

void IntervalAggregator::Add(const core::MemcpyRecord& r) {
  if (r.end < r.start || r.start == 0) return;
  ledger_.Work(r.correlation_id, r.device, r.stream, r.start, r.end, requests::WorkKind::kCopy);
  if (options_.sampled) samples_.Work(r.device, r.start, r.end, r.start);
  AddBusy(r.device, r.start, r.end);
  Tally& t = OpenFor(r.start).devices[r.device].copies[{static_cast<int>(r.copy_kind), static_cast<int>(r.src_kind),
                                                        static_cast<int>(r.dst_kind)}];
  ++t.count;
  t.ns += r.end - r.start;
  t.bytes += r.bytes;
}

void IntervalAggregator::Add(const core::MemsetRecord& r) {
  if (r.end < r.start || r.start == 0) return;
  ledger_.Work(r.correlation_id, r.device, r.stream, r.start, r.end, requests::WorkKind::kMemset);
  if (options_.sampled) samples_.Work(r.device, r.start, r.end, r.start);
  AddBusy(r.device, r.start, r.end);
  Tally& t = OpenFor(r.start).devices[r.device].memsets;
  ++t.count;
  t.ns += r.end - r.start;
  t.bytes += r.bytes;
}

void IntervalAggregator::Add(const core::ApiActivity& a) {
  if (a.end < a.start || a.start == 0) return;
  const core::ApiTraits& traits = TraitsOf(a.domain, a.callback_id);
  const core::ApiCategory category = categories_.Of(a.tid, traits);
  ledger_.Call(a.tid, a.start, a.end, a.correlation_id, category);
  const int cause = HostIndex(category);
  if (cause < 0) return;
  OpenInterval& first = OpenFor(a.start);
  if (traits.category == core::ApiCategory::kLaunch) {
    ++first.launch_calls;
    if (options_.sampled) {
      samples_.Launch(a.end);
      // Bounded: ids whose kernel never comes (a launch that failed, one whose record was lost)
      // are let go wholesale past 131,072 (a graph's kernels are not samples: not kept).
      if (launch_ends_.size() >= (1u << 17)) launch_ends_.clear();
      if (a.correlation_id != 0 && !traits.graph_launch) launch_ends_[a.correlation_id] = a.end;
    }
  }
  if (traits.category == core::ApiCategory::kSync) ++first.sync_calls;
  AddSpan(a.start, a.end, [cause](OpenInterval& in) -> Pieces& { return in.host[cause]; });
}

void IntervalAggregator::AddCounter(uint32_t device, v1::CounterSource source, const std::string& name,
                                    const core::CounterPoint& p) {
  SeeDevice(device);
  CounterTally& t = OpenFor(p.start).devices[device].counters[name];
  t.source = source;
  t.max = t.samples == 0 ? p.value : std::max(t.max, p.value);
  t.sum += p.value;
  ++t.samples;
}

void IntervalAggregator::Add(const core::RequestScopeActivity& r) {
  const std::span<const uint64_t> members(r.batch_requests, r.batch_count);
  if (r.end == 0) {
    ledger_.BeginScope(r.tid, r.start, r.id, r.batch, r.route, members);
  } else {
    ledger_.EndScope(r.tid, r.start, r.end, r.id, r.batch, r.route, members);
  }
}

void IntervalAggregator::TakeRequests(std::vector<requests::RequestFigures> done) {
  for (requests::RequestFigures& r : done) OpenFor(r.end).requests.push_back(std::move(r));
}

void IntervalAggregator::CountDropped(uint64_t records) { Open(next_to_close_).dropped += records; }

std::vector<IntervalFigures> IntervalAggregator::CloseBefore(uint64_t watermark_ns) {
  // A request is final when no record of it can come any more: the intervals' own rule.
  TakeRequests(ledger_.Finalize(watermark_ns));
  std::vector<IntervalFigures> closed;
  while (StartOf(next_to_close_ + 1) <= watermark_ns) {
    closed.push_back(Close(next_to_close_, StartOf(next_to_close_ + 1)));
  }
  return closed;
}

std::vector<IntervalFigures> IntervalAggregator::CloseAll(uint64_t end_ns) {
  end_ns = std::max(end_ns, latest_end_);
  TakeRequests(ledger_.FinalizeAll());
  std::vector<IntervalFigures> closed = CloseBefore(end_ns);
  // The partial interval holding `end_ns`, and any that records reached beyond it.
  for (;;) {
    const int64_t k = next_to_close_;
    const uint64_t start = StartOf(k);
    const bool later_records = !open_.empty() && open_.rbegin()->first >= k;
    if (start >= end_ns && !later_records) break;
    closed.push_back(Close(k, start < end_ns ? std::min(StartOf(k + 1), end_ns) : StartOf(k + 1)));
  }
  return closed;
}

DeviceFigures IntervalAggregator::CloseDevice(uint32_t device, DeviceAccumulator& acc,
                                              const std::array<IntervalSet, kHostCauseCount - 1>& host, Interval span,
                                              const std::vector<SampleWindow>* windows, double count_scale) {
  DeviceFigures d;
  d.device = device;
  const IntervalSet busy = intervals::UnionOf(std::move(acc.busy));
  // The device's time begins at its first operation (interval_aggregator.h says why): the
  // earliest busy piece of the first interval that has one, intervals closing in order.
  if (!std::binary_search(devices_started_.begin(), devices_started_.end(), device)) {
    if (busy.empty()) {
      span.begin = span.end;
    } else {
      span.begin = std::max(span.begin, busy.front().begin);
      InsertSorted(devices_started_, device);
    }
  }
  d.busy_ns = intervals::CoveredLength(busy, span);
  // Idle stretches, claimed cause by cause in order of precedence; what no call covers was
  // spent outside CUDA.
  IntervalSet unclaimed = intervals::GapsWithin(busy, span);
  // Under a duty cycle: busy and idle over the windows' GPU time, each window by its weight, as
  // shares of the device's span. (With no window's GPU time in the interval there is nothing to
  // scale: neither busy nor idle.)
  SampledDevice sampled;
  double time_scale = 1;
  if (windows != nullptr) {
    sampled = SampleWindows::Device(*windows, device, busy, span);
    const uint64_t length = span.end > span.begin ? span.end - span.begin : 0;
    d.observed_ns = sampled.observed_ns;
    d.busy_share_bound = sampled.busy_share_bound;
    time_scale = sampled.observed_weighted_ns > 0 ? static_cast<double>(length) / sampled.observed_weighted_ns : 0;
    d.busy_ns = std::min<uint64_t>(length, static_cast<uint64_t>(std::llround(sampled.busy_share * static_cast<double>(length))));
    d.idle_ns = sampled.observed_ns > 0 ? length - d.busy_ns : 0;
    unclaimed = std::move(sampled.idle);
  } else {
    d.idle_ns = intervals::TotalLength(unclaimed);
  }
  const std::vector<IntervalSet> claimed = intervals::ClaimInOrder(unclaimed, host);
  uint64_t claimed_ns = 0;
  for (int c = 0; c < kHostCauseCount - 1; ++c) {
    const uint64_t claimed_here =
        windows == nullptr ? intervals::TotalLength(claimed[c])
                           : static_cast<uint64_t>(std::llround(SampleWindows::WeightedLength(claimed[c], sampled.pieces) * time_scale));
    d.idle_by_cause_ns[c] = std::min<uint64_t>(d.idle_ns - claimed_ns, claimed_here);
    claimed_ns += d.idle_by_cause_ns[c];
  }
  // What no call covers (the rest, so that the causes sum to the idle time when scaled).
  d.idle_by_cause_ns[static_cast<int>(HostCause::kOutsideCuda)] = d.idle_ns - claimed_ns;

  // Kernels by group: the windows' scaled to the interval, a graph's counted whole.
  const double work_scale = windows != nullptr ? SampleWindows::WorkScale(*windows, device, count_scale) : 1;
  const auto scaled = [work_scale](const Tally& t) { return Tally{Scaled(t.count, work_scale), Scaled(t.ns, work_scale), 0}; };
  absl::flat_hash_map<KernelGroupKey, Tally> merged;
  for (const auto& [key, tally] : acc.kernels) merged[key] = scaled(tally);
  for (const auto& [key, tally] : acc.graph_kernels) {
    Tally& m = merged[key];
    m.count += tally.count;
    m.ns += tally.ns;
  }
  Tally other = scaled(acc.other_kernels);
  other.count += acc.other_graph_kernels.count;
  other.ns += acc.other_graph_kernels.ns;
  std::vector<std::pair<KernelGroupKey, Tally>> groups(merged.begin(), merged.end());
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    if (a.second.ns != b.second.ns) return a.second.ns > b.second.ns;
    return std::tie(a.first.name_id, a.first.grid, a.first.block) < std::tie(b.first.name_id, b.first.grid, b.first.block);
  });
  d.other_kernels.launches = other.count;
  d.other_kernels.gpu_ns = other.ns;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [key, tally] = groups[i];
    d.kernels += tally.count;
    d.kernel_gpu_ns += tally.ns;
    if (i < options_.top_kernels) {
      KernelFigures& k = d.top_kernels.emplace_back();
      k.name = names_[key.name_id];
      k.grid = key.grid;
      k.block = key.block;
      k.launches = tally.count;
      k.gpu_ns = tally.ns;
    } else {
      d.other_kernels.launches += tally.count;
      d.other_kernels.gpu_ns += tally.ns;
    }
  }
  d.kernels += other.count;
  d.kernel_gpu_ns += other.ns;
  for (const auto& [key, tally] : acc.copies) {
    CopyFigures& c = d.copies.emplace_back();
    c.kind = static_cast<v1::CopyKind>(std::get<0>(key));
    c.src_kind = static_cast<v1::MemoryKind>(std::get<1>(key));
    c.dst_kind = static_cast<v1::MemoryKind>(std::get<2>(key));
    c.count = tally.count;
    c.bytes = tally.bytes;
    c.gpu_ns = tally.ns;
  }
  d.memsets = acc.memsets.count;
  d.memset_bytes = acc.memsets.bytes;
  d.memset_ns = acc.memsets.ns;
  if (windows != nullptr) ScaleCopies(d, work_scale);
  for (const auto& [name, tally] : acc.counters) {
    CounterFigures& c = d.counters.emplace_back();
    c.name = name;
    c.source = tally.source;
    c.samples = tally.samples;
    c.mean = tally.samples > 0 ? tally.sum / static_cast<double>(tally.samples) : 0;
    c.max = tally.max;
  }
  return d;
}

IntervalFigures IntervalAggregator::Close(int64_t index, uint64_t end_ns) {
  OpenInterval in;
  if (auto it = open_.find(index); it != open_.end()) {
    in = std::move(it->second);
    open_.erase(it);
  }
  next_to_close_ = index + 1;
  IntervalFigures f;
  f.start_ns = StartOf(index);
  f.end_ns = std::max(end_ns, f.start_ns);
  const Interval span{f.start_ns, f.end_ns};
  std::array<IntervalSet, kHostCauseCount - 1> host;
  for (int c = 0; c < kHostCauseCount - 1; ++c) host[c] = intervals::UnionOf(std::move(in.host[c]));
  f.launch_calls = in.launch_calls;
  f.sync_calls = in.sync_calls;
  f.sync_wait_ns = intervals::CoveredLength(host[static_cast<int>(HostCause::kSync)], span);
  std::vector<SampleWindow> windows;
  double count_scale = 1;
  if (options_.sampled) {
    windows = samples_.TakeBefore(f.end_ns);
    f.estimated = true;
    f.sample_windows = static_cast<uint32_t>(windows.size());
    f.observed_ns = SampleWindows::HostTime(windows, span);
    f.count_bound = SampleWindows::CountBound(windows, span);
    // What the windows' host time stands for: the fallback for work the windows did not see, and
    // the scale of what is measured over time (sync calls and their wait).
    count_scale = f.observed_ns > 0 ? SampleWindows::RepresentedTime(windows, span) / static_cast<double>(f.observed_ns) : 0;
    f.launch_calls = Scaled(f.launch_calls, SampleWindows::LaunchScale(windows, count_scale));
    f.sync_calls = Scaled(f.sync_calls, count_scale);
    f.sync_wait_ns = std::min(f.end_ns - f.start_ns, Scaled(f.sync_wait_ns, count_scale));
  }
  f.records_dropped_by_cupti = in.dropped;
  f.late_records = in.late;
  if (!in.requests.empty()) f.requests = FiguresByRoute(in.requests, ledger_);
  for (uint32_t device : devices_seen_) {
    auto it = in.devices.find(device);
    DeviceAccumulator empty;
    f.devices.push_back(CloseDevice(device, it != in.devices.end() ? it->second : empty, host, span,
                                    options_.sampled ? &windows : nullptr, count_scale));
  }
  return f;
}

}  // namespace cuscope::monitor
