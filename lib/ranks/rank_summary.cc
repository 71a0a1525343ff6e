#include "lib/ranks/rank_summary.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/communication.h"
#include "lib/intervals/interval_set.h"
#include "lib/analysis/rules/rules.h"
#include "lib/ranks/clock_alignment.h"

namespace cuscope::ranks {
namespace {

using intervals::Interval;
using intervals::IntervalSet;
using analysis::OpKind;
using analysis::OpRef;

// The stretches of `window` that `busy` does not cover.
std::vector<Interval> IdleWithin(const IntervalSet& busy, Interval window) {
  std::vector<Interval> idle;
  auto it = std::lower_bound(busy.begin(), busy.end(), window.begin,
                             [](const Interval& i, uint64_t t) { return i.end <= t; });
  uint64_t at = window.begin;
  for (; it != busy.end() && it->begin < window.end; ++it) {
    if (it->begin > at) idle.push_back({at, it->begin});
    at = std::max(at, it->end);
  }
  if (at < window.end) idle.push_back({at, window.end});
  return idle;
}

struct DeviceSets {
  IntervalSet compute;  // kernels not NCCL's
  IntervalSet busy;     // everything
  IntervalSet copies;   // copies and memsets
  uint64_t first_op = 0;
};

// The sets of the devices that ran NCCL kernels (only their collectives look back): compute from the
// communication model (kernels that are not NCCL's), copies and everything from the timeline.
std::map<uint32_t, DeviceSets> BuildDeviceSets(const analysis::Timeline& timeline, const analysis::Communication& comm) {
  std::map<uint32_t, DeviceSets> out;
  for (const analysis::DeviceCommunication& c : comm.devices) out[c.device].compute = c.compute;
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    auto it = out.find(d.device);
    if (it == out.end()) continue;
    std::vector<Interval> copies;
    for (OpRef ref : d.ops) {
      if (ref.kind() != OpKind::kKernel) copies.push_back(timeline.OpInterval(ref));
    }
    it->second.copies = intervals::UnionOf(std::move(copies));
    it->second.busy = d.busy;
    it->second.first_op = d.active.begin;
  }
  return out;
}

IntervalSet HostSyncCalls(const analysis::Timeline& timeline) {
  std::vector<Interval> calls;
  for (const core::ApiCallRow& call : timeline.trace().api_calls) {
    if (timeline.Traits(call).category == core::ApiCategory::kSync && call.end > call.start) {
      calls.push_back({call.start, call.end});
    }
  }
  return intervals::UnionOf(std::move(calls));
}

BeforeCollective Before(const DeviceSets& sets, const IntervalSet& host_sync, Interval window) {
  BeforeCollective b;
  if (window.empty()) return b;
  b.compute_ns = intervals::CoveredLength(sets.compute, window);
  const uint64_t busy = intervals::CoveredLength(sets.busy, window);
  // Copies while a kernel computed are counted as compute: what delayed the device is the kernel.
  b.copy_ns = std::min(intervals::CoveredLength(sets.copies, window), busy - std::min(busy, b.compute_ns));
  b.idle_ns = window.length() - busy;
  for (const Interval& gap : IdleWithin(sets.busy, window)) b.sync_ns += intervals::CoveredLength(host_sync, gap);
  return b;
}

// The NVTX range name whose outermost instances are most numerous (at least two), on any thread;
// NCCL's own ranges are calls, not steps.
std::string ChooseStepRange(const analysis::Timeline& timeline) {
  absl::flat_hash_map<uint32_t, uint64_t> outermost;
  for (const analysis::ThreadTimeline& th : timeline.threads()) {
    uint64_t open_until = 0;
    for (const analysis::NvtxRange& r : th.ranges) {
      if (r.begin < open_until) continue;  // inside an outer range
      open_until = r.end;
      ++outermost[r.name];
    }
  }
  uint32_t best = 0;
  uint64_t best_count = 1;
  for (const auto& [name, count] : outermost) {
    const std::string& text = timeline.trace().dict.str(name);
    if (name == 0 || text.starts_with("nccl")) continue;
    if (count > best_count || (count == best_count && best != 0 && text < timeline.trace().dict.str(best))) {
      best = name;
      best_count = count;
    }
  }
  return best == 0 ? "" : timeline.trace().dict.str(best);
}

// The step's instances, outermost ones of the thread that has the most of them.
std::vector<Interval> StepInstances(const analysis::Timeline& timeline, const std::string& name) {
  std::vector<Interval> best;
  for (const analysis::ThreadTimeline& th : timeline.threads()) {
    std::vector<Interval> mine;
    uint64_t open_until = 0;
    for (const analysis::NvtxRange& r : th.ranges) {
      if (r.begin < open_until) continue;
      open_until = r.end;
      if (timeline.trace().dict.str(r.name) == name) mine.push_back({r.begin, r.end});
    }
    if (mine.size() > best.size()) best = std::move(mine);
  }
  return best;
}

void AddSteps(const analysis::Timeline& timeline, const analysis::Communication& comm, const ClockAlignment& clock,
              const std::string& name, RankSummary& out) {
  const std::vector<Interval> steps = StepInstances(timeline, name);
  if (steps.empty()) return;
  out.step_name = name;
  out.steps.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    // Each end moved by its own interpolated offset: whatever the references say, not before the start.
    out.steps[i].start = clock.ToWall(steps[i].begin);
    out.steps[i].end = std::max(out.steps[i].start, clock.ToWall(steps[i].end));
  }
  const core::Trace& trace = timeline.trace();
  // The step whose range held the launch call of an operation; -1 for none.
  const auto step_of = [&](uint64_t correlation) -> int64_t {
    const core::ApiCallRow* call = timeline.ApiFor(correlation);
    if (call == nullptr) return -1;
    auto it = std::upper_bound(steps.begin(), steps.end(), call->start,
                               [](uint64_t t, const Interval& s) { return t < s.begin; });
    if (it == steps.begin()) return -1;
    --it;
    return call->start <= it->end ? it - steps.begin() : -1;
  };
  std::vector<bool> nccl(trace.kernels.size(), false);
  for (const analysis::CommunicationOp& op : comm.ops) nccl[op.kernel] = true;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const core::KernelRow& k = trace.kernels[i];
    if (nccl[i] || !timeline.OnTimeline(k) || k.end <= k.start) continue;
    if (const int64_t s = step_of(k.correlation_id); s >= 0) out.steps[s].compute_ns += k.end - k.start;
  }
  for (const core::MemcpyRecord& m : trace.memcpys) {
    if (const int64_t s = step_of(m.correlation_id); s >= 0 && m.end > m.start) out.steps[s].copy_ns += m.end - m.start;
  }
  for (const core::MemsetRecord& m : trace.memsets) {
    if (const int64_t s = step_of(m.correlation_id); s >= 0 && m.end > m.start) out.steps[s].copy_ns += m.end - m.start;
  }
}

}  // namespace

std::string RankIdentity::Label() const {
  if (rank >= 0) return absl::StrCat("rank ", rank);
  return absl::StrCat("trace ", index, " (pid ", pid, ")");
}

RankIdentity IdentityOf(const v1::Session& session, const std::string& path, int index) {
  RankIdentity id;
  id.rank = session.rank();
  id.local_rank = session.local_rank();
  id.world_size = session.world_size();
  id.node_rank = session.node_rank();
  id.host = session.host();
  id.boot_id = session.boot_id();
  id.job_id = session.job_id();
  id.launcher = session.launcher();
  id.pid = session.pid();
  id.path = path;
  id.index = index;
  // A header written before ranks were recorded says 0 for unknown: only a launcher's rank counts.
  if (session.world_size() <= 0 && session.rank() == 0 && session.launcher().empty()) id.rank = -1;
  if (id.rank < -1) id.rank = -1;
  return id;
}

RankSummary SummarizeRank(const analysis::Timeline& timeline, const std::string& path, int index,
                          const RankSummaryOptions& options) {
  const core::Trace& trace = timeline.trace();
  RankSummary out;
  out.id = IdentityOf(trace.header.session(), path, index);
  out.truncated = trace.truncated();

  const ClockAlignment clock = ClockAlignment::FromTrace(trace.header, trace.clock_references);
  out.clock_aligned = clock.known();

  const analysis::Communication comm = analysis::BuildCommunication(timeline);
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    out.active_ns += d.counted_active_ns();
    out.kernel_ns += d.kernel_time_ns;
  }
  for (const analysis::DeviceCommunication& d : comm.devices) {
    out.communication_ns += d.communication_ns;
    out.overlapped_ns += d.overlapped_ns;
    out.exposed_ns += d.exposed_ns();
  }
  for (const analysis::NcclCall& c : comm.calls) {
    if (c.collective == analysis::Collective::kUnknown) continue;
    ++out.nccl_calls;
    if (!c.ran_kernel) ++out.nccl_calls_without_kernel;
  }

  const std::map<uint32_t, DeviceSets> sets = BuildDeviceSets(timeline, comm);
  const IntervalSet host_sync = comm.ops.empty() ? IntervalSet() : HostSyncCalls(timeline);
  absl::flat_hash_map<std::string, uint32_t> key_index;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> stream_order;  // (device, stream) -> NCCL stream number
  std::vector<uint32_t> next_sequence;
  std::vector<uint64_t> last_end;  // per key, CUPTI time
  for (const analysis::CommunicationOp& op : comm.ops) {
    std::string key;
    if (op.communicator) {
      key = absl::StrFormat("communicator 0x%016x", *op.communicator);
    } else {
      auto [it, added] = stream_order.try_emplace({op.device, op.stream}, static_cast<uint32_t>(stream_order.size() + 1));
      key = absl::StrCat("NCCL stream ", it->second);
    }
    auto [k, added] = key_index.try_emplace(key, static_cast<uint32_t>(out.keys.size()));
    if (added) {
      out.keys.push_back(key);
      next_sequence.push_back(0);
      last_end.push_back(0);
    }
    CollectiveArrival a;
    a.key = k->second;
    a.sequence = next_sequence[a.key]++;
    a.collective = op.collective;
    a.start = clock.ToWall(op.start);
    if (auto s = sets.find(op.device); s != sets.end()) {
      const uint64_t from = last_end[a.key] != 0 ? last_end[a.key] : s->second.first_op;
      a.before = Before(s->second, host_sync, Interval{std::min(from, op.start), op.start});
    }
    last_end[a.key] = std::max(last_end[a.key], op.end);
    out.collectives.push_back(a);
  }

  const std::string step = options.step_range.empty() ? ChooseStepRange(timeline) : options.step_range;
  if (!step.empty()) AddSteps(timeline, comm, clock, step, out);
  out.findings = analysis::CommunicationFindings(timeline, comm, options.thresholds);
  return out;
}

}  // namespace cuscope::ranks
