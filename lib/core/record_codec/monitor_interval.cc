#include "lib/core/record_codec/monitor_interval.h"

namespace cuscope::core {

absl::Status CheckMonitorInterval(const v1::MonitorInterval& interval, const ChunkContext& chunk) {
  if (interval.end_ns() < interval.start_ns()) return Corrupt("monitor interval ends before it starts");
  for (const v1::MonitorDevice& d : interval.devices()) {
    if (!DeviceOk(d.device())) return BadDevice("monitor interval", d.device());
    if (d.idle_by_cause_ns_size() > v1::HostCause_ARRAYSIZE) {
      return Corrupt("monitor interval splits idle time into unknown causes");
    }
    for (const v1::MonitorKernel& k : d.top_kernels()) {
      if (!StringOk(chunk.dict, k.name())) return Corrupt("monitor interval uses an undefined string");
    }
    for (const v1::MonitorCounter& c : d.counters()) {
      if (!StringOk(chunk.dict, c.name())) return Corrupt("monitor interval uses an undefined string");
    }
  }
  for (const v1::MonitorRouteRequests& r : interval.requests()) {
    if (!StringOk(chunk.dict, r.route())) return Corrupt("monitor interval uses an undefined string");
    if (r.idle_by_cause_size() > v1::HostCause_ARRAYSIZE) {
      return Corrupt("monitor interval splits request idle time into unknown causes");
    }
    // 15 bounds and +Inf (lib/monitor/figures.h).
    constexpr int kBuckets = 16;
    bool too_many = r.span().buckets_size() > kBuckets || r.gpu().buckets_size() > kBuckets ||
                    r.queue().buckets_size() > kBuckets;
    for (const v1::MonitorHistogram& h : r.idle_by_cause()) too_many = too_many || h.buckets_size() > kBuckets;
    if (too_many) return Corrupt("monitor interval has a request histogram of more buckets than it defines");
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
