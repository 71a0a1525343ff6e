// comm.exposed: communication not overlapped with computation (the symptom table's "NCCL kernels
// on the critical path, not overlapped").
//
// Per device, from communication.h: the time NCCL kernels ran while no other kernel of the device
// computed is exposed: it adds to the step whatever the other ranks do. Reported when it is at
// least `comm_exposed_min_share` of the device's counted active span. The time it could recover is
// the exposed time (an upper bound: overlapping needs independent work to overlap with). The
// collective with the most exposed time is named, with NCCL's bytes and bus bandwidth when its NVTX
// payloads say.
#include <algorithm>
#include <array>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/communication.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

const DeviceTimeline* DeviceOf(const Timeline& timeline, uint32_t device) {
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

// Exposed time per collective on one device.
std::map<Collective, uint64_t> ExposedByCollective(const Communication& comm, uint32_t device) {
  std::map<Collective, uint64_t> exposed;
  for (const CommunicationOp& op : comm.ops) {
    if (op.device == device) exposed[op.collective] += op.exposed_ns;
  }
  return exposed;
}

}  // namespace

std::vector<Finding> CommunicationRule(const Timeline& timeline, const Thresholds& thresholds) {
  return CommunicationFindings(timeline, BuildCommunication(timeline), thresholds);
}

std::vector<Finding> CommunicationFindings(const Timeline& timeline, const Communication& comm,
                                           const Thresholds& thresholds) {
  std::vector<Finding> findings;
  if (comm.ops.empty()) return findings;
  for (const DeviceCommunication& d : comm.devices) {
    const DeviceTimeline* device = DeviceOf(timeline, d.device);
    if (device == nullptr || d.communication_ns == 0) continue;
    const uint64_t span = device->counted_active_ns();
    const uint64_t exposed = d.exposed_ns();
    if (span == 0 || exposed < thresholds.comm_exposed_min_share * static_cast<double>(span)) continue;
    const std::map<Collective, uint64_t> by_collective = ExposedByCollective(comm, d.device);
    const auto top = std::max_element(by_collective.begin(), by_collective.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    Finding f;
    f.rule_id = "comm.exposed";
    const std::string collective(CollectiveName(top->first));
    f.headline = absl::StrFormat(
        "communication not overlapped on GPU %u: %s of NCCL's %s ran with no compute beside it (%s of the active "
        "span); %s on the critical path holds %s of it",
        d.device, FormatDuration(exposed), FormatDuration(d.communication_ns),
        FormatPercent(static_cast<double>(exposed) / static_cast<double>(span)), collective,
        FormatDuration(top->second));
    f.Add("device", d.device, "count");
    f.Add("communication_ns", static_cast<double>(d.communication_ns), "ns");
    f.Add("exposed_ns", static_cast<double>(exposed), "ns");
    f.Add("overlapped_ns", static_cast<double>(d.overlapped_ns), "ns");
    f.Add("exposed_share", static_cast<double>(exposed) / static_cast<double>(span), "ratio");
    f.Add("communication_share_of_kernel_time",
          d.kernel_ns == 0 ? 0 : static_cast<double>(d.communication_ns) / static_cast<double>(d.kernel_ns), "ratio");
    for (const auto& [c, ns] : by_collective) {
      if (ns == 0) continue;
      f.offenders.push_back(Offender{"collective", std::string(CollectiveName(c)), 0, ns});
    }
    std::sort(f.offenders.begin(), f.offenders.end(),
              [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
    f.recommendation =
        "overlap communication with compute: issue collectives on their own stream while the next layer computes "
        "(DDP buckets the gradients so their all-reduce starts during the backward pass: lower bucket_cap_mb to "
        "start sooner; FSDP prefetches the next all-gather), and check for a synchronization that waits for the "
        "collective before the next kernel (an .item(), a cudaStreamSynchronize)";
    f.recoverable_ns = exposed;
    f.severity = SeverityFor(exposed, span, thresholds);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace cuscope::analysis
