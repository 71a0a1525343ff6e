#include "lib/analysis/communication.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace cuscope::analysis {
namespace {

constexpr std::string_view kNcclDomain = "NCCL";

// The calls of each thread, by start (indices into Communication.calls).
using CallsByThread = absl::flat_hash_map<uint32_t, std::vector<uint32_t>>;

// The innermost call on `thread` whose range holds `time`, or -1.
int64_t CallAt(const std::vector<NcclCall>& calls, const std::vector<uint32_t>& on_thread, uint64_t time) {
  auto it = std::upper_bound(on_thread.begin(), on_thread.end(), time,
                             [&calls](uint64_t t, uint32_t i) { return t < calls[i].start; });
  // Ranges of one thread nest: walk back to the latest one that still holds `time`.
  while (it != on_thread.begin()) {
    --it;
    if (calls[*it].end >= time) return *it;
  }
  return -1;
}

void Join(NcclCall& call, CommunicationOp& op) {
  call.ran_kernel = true;
  ++op.calls;
  if (!call.payload) return;
  op.bytes = op.bytes.value_or(0) + call.payload->bytes;
  if (call.payload->communicator && !op.communicator) op.communicator = call.payload->communicator;
}

// Joins `op`, launched on `thread` at `time`, to its calls.
void JoinToCalls(std::vector<NcclCall>& calls, const std::vector<uint32_t>& on_thread, uint64_t time,
                 CommunicationOp& op) {
  const int64_t at = CallAt(calls, on_thread, time);
  if (at < 0) return;
  NcclCall& call = calls[static_cast<size_t>(at)];
  if (call.collective != Collective::kUnknown) {
    Join(call, op);
    if (op.collective == Collective::kUnknown) op.collective = call.collective;
    return;
  }
  if (call.api != "ncclGroupEnd") return;
  // A group: every collective called since its ncclGroupStart on this thread, not yet joined.
  auto it = std::lower_bound(on_thread.begin(), on_thread.end(), call.start,
                             [&calls](uint32_t i, uint64_t t) { return calls[i].start < t; });
  while (it != on_thread.begin()) {
    --it;
    NcclCall& member = calls[*it];
    if (member.api == "ncclGroupStart") break;
    if (member.collective == Collective::kUnknown || member.ran_kernel) continue;
    Join(member, op);
    if (op.collective == Collective::kUnknown) op.collective = member.collective;
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
  for (uint32_t i = 0; i < out.calls.size(); ++i) by_thread[out.calls[i].thread].push_back(i);

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
      out.communication_kernel_ns += span.length();
      out.ops.push_back(op);
    }
    if (communication.empty() && compute.empty()) continue;
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
