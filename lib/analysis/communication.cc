#include "lib/analysis/communication.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace cuscope::analysis {
namespace {

constexpr std::string_view kNcclDomain = "NCCL";

constexpr int64_t kNone = -1;
// Ranges nest a few deep (a collective inside a group); a trace that claims more is not followed
// further, so that no input makes a lookup walk far.
constexpr int kMaxNesting = 64;

// One thread's calls, by start (indices into Communication.calls), each with the call whose range
// encloses it (kNone at the outermost level), and the collectives of each outermost group: what the
// ncclGroupEnd that closes it launches.
struct ThreadCalls {
  std::vector<uint32_t> calls;
  std::vector<int64_t> parent;  // by position in `calls`: the enclosing call's position
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> group_members;  // ncclGroupEnd call -> collectives
};
using CallsByThread = absl::flat_hash_map<uint32_t, ThreadCalls>;

// Parents from the nesting of the ranges (one stack pass), and groups from ncclGroupStart and
// ncclGroupEnd in call order (their depth counted, so that nested groups belong to the outermost).
void IndexThread(const std::vector<NcclCall>& calls, ThreadCalls& t) {
  t.parent.assign(t.calls.size(), kNone);
  std::vector<size_t> open;  // positions whose range is still open
  size_t depth = 0;
  std::vector<uint32_t> members;
  for (size_t pos = 0; pos < t.calls.size(); ++pos) {
    const NcclCall& call = calls[t.calls[pos]];
    while (!open.empty() && calls[t.calls[open.back()]].end < call.start) open.pop_back();
    if (!open.empty()) t.parent[pos] = static_cast<int64_t>(open.back());
    open.push_back(pos);
    if (call.api == "ncclGroupStart") {
      ++depth;
    } else if (call.api == "ncclGroupEnd") {
      if (depth > 0 && --depth == 0) t.group_members[t.calls[pos]] = std::exchange(members, {});
    } else if (depth > 0 && call.collective != Collective::kUnknown) {
      members.push_back(t.calls[pos]);
    }
  }
}

// The position in `t` of the innermost call whose range holds `time`, or kNone: the latest call
// that starts by then, else the nearest of its enclosing calls that is still open.
int64_t InnermostAt(const std::vector<NcclCall>& calls, const ThreadCalls& t, uint64_t time) {
  auto it = std::upper_bound(t.calls.begin(), t.calls.end(), time,
                             [&calls](uint64_t at, uint32_t i) { return at < calls[i].start; });
  if (it == t.calls.begin()) return kNone;
  int64_t pos = (it - t.calls.begin()) - 1;
  for (int depth = 0; pos != kNone && depth < kMaxNesting; ++depth) {
    if (calls[t.calls[static_cast<size_t>(pos)]].end >= time) return pos;
    pos = t.parent[static_cast<size_t>(pos)];
  }
  return kNone;
}

void Join(NcclCall& call, CommunicationOp& op) {
  call.ran_kernel = true;
  ++op.calls;
  if (op.collective == Collective::kUnknown) op.collective = call.collective;
  if (!call.payload) return;
  op.bytes = op.bytes.value_or(0) + call.payload->bytes;
  if (call.payload->communicator && !op.communicator) op.communicator = call.payload->communicator;
}

// Joins `op`, launched on the thread of `t` at `time`, to its calls: the innermost enclosing call
// that is a collective, or the end of a group. A group's collectives go to the first kernel its end
// launched (handed over once, so that however many kernels a group launches, each member is looked
// at once).
void JoinToCalls(std::vector<NcclCall>& calls, ThreadCalls& t, uint64_t time, CommunicationOp& op) {
  int64_t pos = InnermostAt(calls, t, time);
  for (int depth = 0; pos != kNone && depth < kMaxNesting; ++depth, pos = t.parent[static_cast<size_t>(pos)]) {
    const uint32_t index = t.calls[static_cast<size_t>(pos)];
    NcclCall& call = calls[index];
    if (call.collective != Collective::kUnknown) {
      Join(call, op);
      return;
    }
    auto group = t.group_members.find(index);
    if (group == t.group_members.end()) continue;  // an inner group's end, or no collective
    for (uint32_t member : group->second) {
      if (!calls[member].ran_kernel) Join(calls[member], op);
    }
    t.group_members.erase(group);
    return;
  }
}

}  // namespace

std::vector<NcclCall> NcclCalls(const core::Trace& trace) {
  std::vector<NcclCall> calls;
  const core::Dictionary& dict = trace.dict;
  absl::flat_hash_map<uint64_t, const core::NvtxPayloadRecord*> payloads;
  for (const core::NvtxPayloadRecord& p : trace.nvtx_payloads) {
    if (p.kind == v1::NVTX_PAYLOAD_KIND_EXTENDED) payloads.emplace(p.id, &p);
  }
  uint32_t nccl_domain = 0;  // the domain's string id, once seen
  absl::flat_hash_map<uint64_t, const core::NvtxRow*> open;
  for (const core::NvtxRow& row : trace.nvtx) {
    if (row.kind == v1::NVTX_KIND_RANGE_START) {
      // A start names its domain; the end (CUPTI's, for a pop) may not: it is paired by id.
      if (row.domain == 0) continue;
      if (nccl_domain == 0) {
        if (dict.str(row.domain) != kNcclDomain) continue;
        nccl_domain = row.domain;
      } else if (row.domain != nccl_domain) {
        continue;
      }
      open[row.id] = &row;
      continue;
    }
    if (row.kind != v1::NVTX_KIND_RANGE_END || open.empty()) continue;
    auto it = open.find(row.id);
    if (it == open.end()) continue;
    const core::NvtxRow& start = *it->second;
    NcclCall call;
    call.start = start.time;
    call.end = std::max(start.time, row.time);
    call.thread = start.thread;
    call.api = dict.str(start.name);
    call.collective = CollectiveOfCall(call.api).value_or(Collective::kUnknown);
    if (auto p = payloads.find(row.id); p != payloads.end()) {
      call.payload = DecodeNcclPayload(call.api, p->second->schema_id, p->second->data);
    }
    calls.push_back(std::move(call));
    open.erase(it);
  }
  std::stable_sort(calls.begin(), calls.end(), [](const NcclCall& a, const NcclCall& b) { return a.start < b.start; });
  return calls;
}

Communication BuildCommunication(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Communication out;
  out.calls = NcclCalls(trace);
  for (const NcclCall& c : out.calls) out.has_payloads |= c.payload.has_value();
  CallsByThread by_thread;
  for (uint32_t i = 0; i < out.calls.size(); ++i) by_thread[out.calls[i].thread].calls.push_back(i);
  for (auto& [thread, calls] : by_thread) IndexThread(out.calls, calls);

  // What each kernel signature is, parsed once; a trace without NCCL's kernels (most) ends here,
  // before any per-kernel work.
  const core::Dictionary& dict = trace.dict;
  std::vector<NcclKernelName> names(dict.signature_count() + 1);
  bool any_nccl = false;
  for (uint32_t id = 1; id <= dict.signature_count(); ++id) {
    names[id] = ParseNcclKernelName(dict.str(dict.signature(id).name()));
    any_nccl |= names[id].nccl;
  }
  if (!any_nccl) return out;
  const auto name_of = [&](const core::KernelRow& k) -> const NcclKernelName& {
    return names[k.signature < names.size() ? k.signature : 0];
  };
  for (const DeviceTimeline& d : timeline.devices()) {
    DeviceCommunication dc;
    dc.device = d.device;
    const size_t first_op = out.ops.size();  // this device's ops start here
    std::vector<Interval> communication, compute;
    for (OpRef ref : d.ops) {
      if (ref.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = trace.kernels[ref.index()];
      const Interval span = timeline.OpInterval(ref);
      const NcclKernelName& name = name_of(k);
      if (!name.nccl) {
        compute.push_back(span);
        continue;
      }
      communication.push_back(span);
      CommunicationOp op;
      op.kernel = ref.index();
      op.device = d.device;
      op.stream = k.stream;
      op.start = span.begin;
      op.end = span.end;
      op.collective = name.collective;
      if (const core::ApiCallRow* launch = timeline.ApiFor(k.correlation_id)) {
        if (auto calls = by_thread.find(launch->thread); calls != by_thread.end()) {
          JoinToCalls(out.calls, calls->second, launch->start, op);
        }
      }
      out.ops.push_back(op);
    }
    if (communication.empty()) continue;  // a device that only computed
    const IntervalSet comm_set = UnionOf(std::move(communication));
    dc.compute = UnionOf(std::move(compute));
    dc.communication_ns = TotalLength(comm_set);
    dc.compute_ns = TotalLength(dc.compute);
    dc.overlapped_ns = TotalLength(Intersect(comm_set, dc.compute));
    dc.kernel_ns = TotalLength(Union(comm_set, dc.compute));
    for (size_t i = first_op; i < out.ops.size(); ++i) {
      CommunicationOp& op = out.ops[i];
      op.exposed_ns = (op.end - op.start) - CoveredLength(dc.compute, Interval{op.start, op.end});
    }
    out.devices.push_back(std::move(dc));
  }
  std::stable_sort(out.ops.begin(), out.ops.end(),
                   [](const CommunicationOp& a, const CommunicationOp& b) { return a.start < b.start; });
  return out;
}

}  // namespace cuscope::analysis
