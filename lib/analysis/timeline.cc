#include "lib/analysis/timeline.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/finding.h"
#include "lib/core/metric_sets.h"

namespace cuscope::analysis {
namespace {

constexpr uint32_t kNoIndex = 0;

template <typename Rows>
void SortByStart(std::vector<OpRef>& refs, const Rows& rows) {
  auto by_start = [&rows](OpRef a, OpRef b) { return rows[a.index()].start < rows[b.index()].start; };
  if (!std::is_sorted(refs.begin(), refs.end(), by_start)) std::sort(refs.begin(), refs.end(), by_start);
}

void Widen(Interval& hull, uint64_t begin, uint64_t end) {
  if (hull.begin == 0 && hull.end == 0) {
    hull = {begin, std::max(begin, end)};
    return;
  }
  hull.begin = std::min(hull.begin, begin);
  hull.end = std::max(hull.end, end);
}

// A device's operations by kind, each list in start order once sorted.
struct DeviceOps {
  std::vector<OpRef> kernels, memcpys, memsets;
};

struct OpsByDevice {
  absl::flat_hash_map<uint32_t, DeviceOps> devices;
  uint64_t replayed_kernels = 0;  // left out
};

// The operations of the timeline per device (replayed launches left out), each list allocated once
// at its size: rows are counted first.
OpsByDevice GroupOpsByDevice(const Timeline& t, const core::Trace& trace) {
  const core::Dictionary& dict = trace.dict;
  OpsByDevice out;
  absl::flat_hash_map<uint32_t, DeviceOps>& per_device = out.devices;
  // Signature -> device, so the hot loop does not go through the protobuf accessor.
  std::vector<uint32_t> signature_device(dict.signature_count() + 1, 0);
  for (uint32_t id = 1; id <= dict.signature_count(); ++id) signature_device[id] = dict.signature(id).device();
  {
    absl::flat_hash_map<uint32_t, std::array<size_t, 3>> counts;
    // The last device's entry; null until the first row. No device id serves as "none": every
    // value is one a row can carry.
    uint32_t cached = 0;
    std::array<size_t, 3>* cached_counts = nullptr;
    auto count = [&](uint32_t device, int kind) {
      if (cached_counts == nullptr || device != cached) {
        cached_counts = &counts[device];
        cached = device;
      }
      ++(*cached_counts)[kind];
    };
    for (const core::KernelRow& k : trace.kernels) {
      if (!t.Replayed(k)) count(k.signature < signature_device.size() ? signature_device[k.signature] : 0, 0);
    }
    for (const core::MemcpyRecord& m : trace.memcpys) count(m.device, 1);
    for (const core::MemsetRecord& m : trace.memsets) count(m.device, 2);
    for (const auto& [device, c] : counts) {
      DeviceOps& lists = per_device[device];
      lists.kernels.reserve(c[0]);
      lists.memcpys.reserve(c[1]);
      lists.memsets.reserve(c[2]);
    }
  }
  DeviceOps* last = nullptr;  // null until the first row, as above
  uint32_t last_device = 0;
  auto device_lists = [&](uint32_t device) -> DeviceOps& {
    if (last == nullptr || device != last_device) {
      last = &per_device[device];
      last_device = device;
    }
    return *last;
  };
  for (uint32_t i = 0; i < trace.kernels.size(); ++i) {
    const core::KernelRow& k = trace.kernels[i];
    if (t.Replayed(k)) {
      ++out.replayed_kernels;
      continue;
    }
    const uint32_t device = k.signature < signature_device.size() ? signature_device[k.signature] : 0;
    device_lists(device).kernels.push_back(OpRef(OpKind::kKernel, i));
  }
  for (uint32_t i = 0; i < trace.memcpys.size(); ++i) {
    device_lists(trace.memcpys[i].device).memcpys.push_back(OpRef(OpKind::kMemcpy, i));
  }
  for (uint32_t i = 0; i < trace.memsets.size(); ++i) {
    device_lists(trace.memsets[i].device).memsets.push_back(OpRef(OpKind::kMemset, i));
  }
  return out;
}

// One device's operations of every kind in start order; `lists` is consumed.
std::vector<OpRef> MergeInStartOrder(const Timeline& t, const core::Trace& trace, DeviceOps& lists) {
  SortByStart(lists.kernels, trace.kernels);
  SortByStart(lists.memcpys, trace.memcpys);
  SortByStart(lists.memsets, trace.memsets);
  std::vector<OpRef> ops;
  if (lists.memcpys.empty() && lists.memsets.empty()) {
    ops.swap(lists.kernels);
    return ops;
  }
  ops.reserve(lists.kernels.size() + lists.memcpys.size() + lists.memsets.size());
  auto start_of = [&t](OpRef op) { return t.OpInterval(op).begin; };
  auto earlier = [&](OpRef a, OpRef b) { return start_of(a) < start_of(b); };
  std::vector<OpRef> copies;
  copies.reserve(lists.memcpys.size() + lists.memsets.size());
  std::merge(lists.memcpys.begin(), lists.memcpys.end(), lists.memsets.begin(), lists.memsets.end(),
             std::back_inserter(copies), earlier);
  // Kernels are the bulk: compare their starts directly, without going through OpInterval.
  size_t j = 0;
  uint64_t next_copy = copies.empty() ? std::numeric_limits<uint64_t>::max() : start_of(copies[0]);
  for (OpRef k : lists.kernels) {
    const uint64_t start = trace.kernels[k.index()].start;
    while (next_copy < start && j < copies.size()) {
      ops.push_back(copies[j++]);
      next_copy = j < copies.size() ? start_of(copies[j]) : std::numeric_limits<uint64_t>::max();
    }
    ops.push_back(k);
  }
  ops.insert(ops.end(), copies.begin() + static_cast<std::ptrdiff_t>(j), copies.end());
  lists = DeviceOps();
  return ops;
}

// How many intervals the union of the operations (in start order) has: the busy set is as large
// as the trace's gaps, so it is counted first and allocated once, at its final size.
size_t CountBusyIntervals(const Timeline& t, const std::vector<OpRef>& ops) {
  size_t busy_intervals = 0;
  uint64_t frontier = 0;
  bool any = false;
  for (OpRef op : ops) {
    const Interval x = t.OpInterval(op);
    if (x.empty()) continue;
    if (!any || x.begin > frontier) ++busy_intervals;
    frontier = any ? std::max(frontier, x.end) : x.end;
    any = true;
  }
  return busy_intervals;
}

}  // namespace

// Stream slots while the devices are built: (device, stream) -> index in streams_, and each
// stream's latest operation end so far.
struct Timeline::StreamIndex {
  absl::flat_hash_map<uint64_t, uint32_t> slot;
  std::vector<uint64_t> last_end;
};

Timeline Timeline::Build(const core::Trace& trace) {
  Timeline t;
  t.trace_ = &trace;
  t.ClassifyApiFunctions();
  t.CollectProfiledCorrelations();
  t.DetectStuckCorrelation();
  t.BuildDevices();
  const CorrelationRange correlations = t.BuildThreads();
  t.BuildMetricWindows();
  t.BuildCaptureWindows();
  t.IndexCorrelations(correlations);
  t.AddReplayedKernelTime();
  return t;
}

void Timeline::ClassifyApiFunctions() {
  // Once per distinct function, not per call.
  const core::Dictionary& dict = trace_->dict;
  traits_.resize(dict.function_count() + 1);
  api_names_.resize(dict.function_count() + 1);
  for (uint32_t id = 1; id <= dict.function_count(); ++id) {
    api_names_[id] = core::DisplayApiName(dict.function_name(id));
    traits_[id] = core::ClassifyApi(api_names_[id]);
  }
}

void Timeline::CollectProfiledCorrelations() {
  for (const core::MetricRow& m : trace_->metrics) {
    if (m.correlation_id != 0) profiled_correlations_.push_back(m.correlation_id);
  }
  std::sort(profiled_correlations_.begin(), profiled_correlations_.end());
  profiled_correlations_.erase(std::unique(profiled_correlations_.begin(), profiled_correlations_.end()),
                               profiled_correlations_.end());
}

void Timeline::DetectStuckCorrelation() {
  core::StuckCorrelationVote vote;
  for (const core::KernelRow& k : trace_->kernels) vote.Vote(k);
  if (!vote.HasCandidate()) return;
  for (const core::KernelRow& k : trace_->kernels) vote.Count(k);
  stuck_correlation_ = vote.Result();
}

void Timeline::BuildDevices() {
  const core::Trace& trace = *trace_;
  OpsByDevice grouped = GroupOpsByDevice(*this, trace);
  replayed_kernels_ = grouped.replayed_kernels;
  absl::flat_hash_map<uint32_t, DeviceOps>& per_device = grouped.devices;
  std::vector<uint32_t> device_ids;
  for (const auto& [device, lists] : per_device) device_ids.push_back(device);
  std::sort(device_ids.begin(), device_ids.end());
  StreamIndex streams;
  for (uint32_t device : device_ids) {
    DeviceTimeline d;
    d.device = device;
    d.ops = MergeInStartOrder(*this, trace, per_device[device]);
    AddDeviceOps(d, streams);
    kernel_count_ += d.kernel_count;
    Widen(span_, d.active.begin, d.active.end);
    devices_.push_back(std::move(d));
  }
}

void Timeline::AddDeviceOps(DeviceTimeline& d, StreamIndex& streams) {
  d.busy.reserve(CountBusyIntervals(*this, d.ops));
  uint32_t cached_stream = 0;
  size_t cached_slot = std::numeric_limits<size_t>::max();
  for (OpRef op : d.ops) {
    const Interval x = OpInterval(op);
    if (!x.empty()) {
      if (d.busy.empty() || x.begin > d.busy.back().end) {
        d.busy.push_back(x);
      } else {
        d.busy.back().end = std::max(d.busy.back().end, x.end);
      }
    }
    Widen(d.active, x.begin, x.end);
    if (op.kind() == OpKind::kKernel) {
      ++d.kernel_count;
      d.kernel_time_ns += x.length();
    }
    const uint32_t stream = OpStream(op);
    if (cached_slot == std::numeric_limits<size_t>::max() || stream != cached_stream) {
      auto [it, inserted] = streams.slot.try_emplace((uint64_t{d.device} << 32) | stream, streams_.size());
      if (inserted) {
        streams_.push_back(StreamInfo{d.device, stream, 0, 0, {}});
        streams.last_end.push_back(0);
      }
      cached_stream = stream;
      cached_slot = it->second;
    }
    StreamInfo& s = streams_[cached_slot];
    uint64_t& last_end = streams.last_end[cached_slot];
    ++s.ops;
    // Ops arrive in start order, so the stream's union grows by what sticks out past its end.
    if (x.end > last_end) {
      s.busy_ns += x.end - std::max(x.begin, last_end);
      last_end = x.end;
    }
    Widen(s.active, x.begin, x.end);
  }
}

ThreadTimeline& Timeline::ThreadFor(uint32_t thread) {
  if (thread >= thread_slot_.size()) thread_slot_.resize(thread + 1, kNoIndex);
  if (thread_slot_[thread] == kNoIndex) {
    threads_.push_back(ThreadTimeline{thread, {}, {}, {}});
    thread_slot_[thread] = static_cast<uint32_t>(threads_.size());
  }
  return threads_[thread_slot_[thread] - 1];
}

Timeline::CorrelationRange Timeline::BuildThreads() {
  const core::Trace& trace = *trace_;
  thread_slot_.assign(trace.dict.thread_count() + 1, kNoIndex);
  {
    std::vector<uint32_t> calls_per_thread(thread_slot_.size(), 0);
    for (const core::ApiCallRow& call : trace.api_calls) {
      if (call.thread >= calls_per_thread.size()) calls_per_thread.resize(call.thread + 1, 0);
      ++calls_per_thread[call.thread];
    }
    for (uint32_t thread = 0; thread < calls_per_thread.size(); ++thread) {
      if (calls_per_thread[thread] > 0) ThreadFor(thread).api_calls.reserve(calls_per_thread[thread]);
    }
  }
  CorrelationRange correlations;
  for (uint32_t i = 0; i < trace.api_calls.size(); ++i) {
    const core::ApiCallRow& call = trace.api_calls[i];
    ThreadTimeline& th = ThreadFor(call.thread);
    th.api_calls.push_back(i);
    Widen(th.active, call.start, call.end);
    Widen(span_, call.start, call.end);
    if (call.correlation_id != 0) {
      correlations.min = std::min(correlations.min, call.correlation_id);
      correlations.max = std::max(correlations.max, call.correlation_id);
    }
  }
  for (ThreadTimeline& th : threads_) {
    auto by_start = [&trace](uint32_t a, uint32_t b) { return trace.api_calls[a].start < trace.api_calls[b].start; };
    if (!std::is_sorted(th.api_calls.begin(), th.api_calls.end(), by_start)) {
      std::sort(th.api_calls.begin(), th.api_calls.end(), by_start);
    }
  }
  AddNvtxRanges();
  return correlations;
}

void Timeline::AddNvtxRanges() {
  // A start and an end record share an id.
  absl::flat_hash_map<uint64_t, const core::NvtxRow*> open_ranges;
  for (const core::NvtxRow& row : trace_->nvtx) {
    if (row.kind == v1::NVTX_KIND_RANGE_START) {
      open_ranges[row.id] = &row;
    } else if (row.kind == v1::NVTX_KIND_RANGE_END) {
      auto it = open_ranges.find(row.id);
      if (it == open_ranges.end()) continue;
      const core::NvtxRow& start = *it->second;
      ThreadFor(start.thread).ranges.push_back(
          NvtxRange{start.time, std::max(start.time, row.time), start.name, row.thread != start.thread});
      open_ranges.erase(it);
    }
  }
  for (ThreadTimeline& th : threads_) {
    std::sort(th.ranges.begin(), th.ranges.end(),
              [](const NvtxRange& a, const NvtxRange& b) { return a.begin < b.begin; });
  }
}

void Timeline::BuildMetricWindows() {
  std::vector<Interval> windows;
  for (const v1::CaptureWindow& w : trace_->windows) {
    if (w.kind() != v1::WINDOW_KIND_METRICS) continue;
    ++metric_window_count_;
    // A window still open when the trace ended lasted at least to the last recorded activity.
    const uint64_t end = w.end_ns() != 0 ? w.end_ns() : std::max(w.start_ns(), span_.end);
    windows.push_back({w.start_ns(), end});
  }
  // The launch call of a profiled launch is all profiler time as well: the Range Profiler is set
  // up inside it (hundreds of ms on a context's first profiled launch) before the replay window
  // opens, and the launch itself takes microseconds.
  if (!profiled_correlations_.empty()) {
    for (const core::ApiCallRow& call : trace_->api_calls) {
      if (Profiled(call.correlation_id) && call.end > call.start) windows.push_back({call.start, call.end});
    }
  }
  metric_windows_ = UnionOf(std::move(windows));
  if (metric_windows_.empty()) return;
  for (DeviceTimeline& d : devices_) {
    if (d.active.empty()) continue;
    d.metrics_idle = Subtract(Intersect(metric_windows_, IntervalSet{d.active}), d.busy);
  }
}

void Timeline::BuildCaptureWindows() {
  // Idle time outside the capture windows was not observed.
  capture_windows_ = CaptureWindowSet(trace_->windows, v1::WINDOW_KIND_TIMELINE, span_);
  if (capture_windows_.empty()) return;
  for (DeviceTimeline& d : devices_) {
    if (d.active.empty()) continue;
    const IntervalSet outside = Subtract(IntervalSet{d.active}, capture_windows_);
    if (!outside.empty()) d.unobserved_idle = Subtract(Subtract(outside, d.busy), d.metrics_idle);
  }
  if (!profiled_correlations_.empty()) {
    for (const core::KernelRow& k : trace_->kernels) {
      if (Profiled(k.correlation_id)) profiled_starts_.emplace_back(k.correlation_id, k.start);
    }
    std::sort(profiled_starts_.begin(), profiled_starts_.end());
  }
}

void Timeline::IndexCorrelations(CorrelationRange range) {
  const core::Trace& trace = *trace_;
  const core::Dictionary& dict = trace.dict;
  if (range.max < range.min) return;
  // When a runtime call and a driver call share an id, the runtime call is the one the user wrote.
  auto prefer = [&](uint32_t existing_plus_one, uint32_t candidate) {
    if (existing_plus_one == kNoIndex) return true;
    const auto& existing = trace.api_calls[existing_plus_one - 1];
    return dict.function(existing.function).domain() != v1::API_DOMAIN_RUNTIME &&
           dict.function(trace.api_calls[candidate].function).domain() == v1::API_DOMAIN_RUNTIME;
  };
  const uint64_t span = range.max - range.min + 1;
  if (span <= 4 * trace.api_calls.size() + 1024) {
    corr_base_ = range.min;
    corr_dense_.assign(span, kNoIndex);
    for (uint32_t i = 0; i < trace.api_calls.size(); ++i) {
      const uint64_t corr = trace.api_calls[i].correlation_id;
      if (corr == 0) continue;
      uint32_t& slot = corr_dense_[corr - range.min];
      if (prefer(slot, i)) slot = i + 1;
    }
  } else {
    for (uint32_t i = 0; i < trace.api_calls.size(); ++i) {
      if (trace.api_calls[i].correlation_id != 0) corr_sorted_.emplace_back(trace.api_calls[i].correlation_id, i + 1);
    }
    std::sort(corr_sorted_.begin(), corr_sorted_.end());
  }
}

void Timeline::AddReplayedKernelTime() {
  // Needs the correlation index: a replayed launch is placed by its launch call.
  for (const core::MetricRow& m : trace_->metrics) {
    for (const auto& [name, value] : m.values) {
      if (!(value > 0) || trace_->dict.str(name) != core::metric::kDuration) continue;
      if (!ReplayCaptured(m)) continue;
      for (DeviceTimeline& d : devices_) {
        if (d.device == m.device) d.replayed_kernel_ns += ClampToU64(value);
      }
    }
  }
}

IntervalSet CaptureWindowSet(const std::vector<v1::CaptureWindow>& windows, v1::WindowKind kind, Interval span) {
  std::vector<Interval> done;
  std::vector<uint64_t> open;  // starts of opening halves not yet closed, innermost last
  for (const v1::CaptureWindow& w : windows) {
    if (w.kind() != kind) continue;
    if (w.start_ns() != 0 && w.end_ns() != 0) {
      done.push_back({w.start_ns(), std::max(w.start_ns(), w.end_ns())});
    } else if (w.start_ns() != 0) {
      open.push_back(w.start_ns());
    } else if (w.end_ns() != 0) {
      if (!open.empty()) {
        done.push_back({open.back(), std::max(open.back(), w.end_ns())});
        open.pop_back();
      } else {
        // Its opening half is not in the trace: it was open from before the first record.
        done.push_back({std::min(span.begin, w.end_ns()), w.end_ns()});
      }
    }
  }
  for (uint64_t start : open) done.push_back({start, std::max(start, span.end)});
  return UnionOf(std::move(done));
}

bool Timeline::ReplayCaptured(const core::MetricRow& row) const {
  if (capture_windows_.empty()) return true;
  auto it = std::lower_bound(profiled_starts_.begin(), profiled_starts_.end(),
                             std::make_pair(row.correlation_id, uint64_t{0}));
  if (row.correlation_id != 0 && it != profiled_starts_.end() && it->first == row.correlation_id) {
    return Captured(it->second);
  }
  if (const core::ApiCallRow* call = ApiFor(row.correlation_id)) return Captured(call->start);
  return trace_->top_down.empty();
}

uint32_t Timeline::KernelDevice(const core::KernelRow& k) const {
  return trace_->dict.has_signature(k.signature) ? trace_->dict.signature(k.signature).device() : 0;
}

const core::ApiCallRow* Timeline::ApiForSparse(uint64_t correlation_id) const {
  auto it = std::lower_bound(corr_sorted_.begin(), corr_sorted_.end(), std::make_pair(correlation_id, uint32_t{0}));
  if (it == corr_sorted_.end() || it->first != correlation_id) return nullptr;
  return &trace_->api_calls[it->second - 1];
}

std::optional<int64_t> Timeline::LaunchDelay(const core::KernelRow& kernel) const {
  const core::ApiCallRow* call = ApiFor(kernel.correlation_id);
  if (call == nullptr) return std::nullopt;
  return static_cast<int64_t>(kernel.start) - static_cast<int64_t>(call->end);
}

const core::ApiTraits& Timeline::Traits(const core::ApiCallRow& call) const {
  static const core::ApiTraits kUnknown;
  return call.function < traits_.size() ? traits_[call.function] : kUnknown;
}

std::string_view Timeline::ApiName(const core::ApiCallRow& call) const {
  return call.function < api_names_.size() ? api_names_[call.function] : std::string_view("(unknown API)");
}

std::string_view Timeline::KernelName(const core::KernelRow& kernel) const {
  if (!trace_->dict.has_signature(kernel.signature)) return "(unknown kernel)";
  return trace_->dict.kernel_name(kernel.signature);
}

const ThreadTimeline* Timeline::Thread(uint32_t thread) const {
  if (thread >= thread_slot_.size() || thread_slot_[thread] == kNoIndex) return nullptr;
  return &threads_[thread_slot_[thread] - 1];
}

const NvtxRange* Timeline::EnclosingRange(uint32_t thread, uint64_t time) const {
  const ThreadTimeline* th = Thread(thread);
  if (th == nullptr || th->ranges.empty()) return nullptr;
  auto it = std::upper_bound(th->ranges.begin(), th->ranges.end(), time,
                             [](uint64_t t, const NvtxRange& r) { return t < r.begin; });
  // The latest-starting range that still holds `time` is the innermost one. Ranges nest shallowly,
  // so a bounded walk back finds it.
  for (int steps = 0; it != th->ranges.begin() && steps < 64; ++steps) {
    --it;
    if (it->end >= time) return &*it;
  }
  return nullptr;
}

std::string Timeline::ThreadLabel(uint32_t thread) const {
  if (thread == 0 || thread > trace_->dict.thread_count()) return "thread ?";
  const v1::HostThread& th = trace_->dict.thread(thread);
  return absl::StrCat("thread ", th.tid(), " (pid ", th.pid(), ")");
}

SteadyState SteadyStateOf(const Timeline& timeline, const DeviceTimeline& device, double startup_ops_share) {
  SteadyState steady;
  if (device.ops.empty()) return steady;
  const size_t startup_ops =
      static_cast<size_t>(static_cast<double>(device.ops.size()) * std::max(0.0, startup_ops_share));
  const uint64_t begin = startup_ops > 0 && startup_ops < device.ops.size()
                             ? timeline.OpInterval(device.ops[startup_ops]).begin
                             : device.active.begin;
  steady.span = Interval{begin, std::max(begin, device.active.end)};
  const uint64_t length = steady.span.length();
  steady.counted_ns = length - std::min(length, CoveredLength(device.NotCounted(), steady.span));
  steady.busy_ns = DeviceTimeline::BusyWithReplays(CoveredLength(device.busy, steady.span), steady.counted_ns,
                                                   device.replayed_kernel_ns);
  return steady;
}

}  // namespace cuscope::analysis
