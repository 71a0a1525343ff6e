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

// ---- Figures ----------------------------------------------------------------------------------

namespace {

void EncodeKernel(const KernelFigures& k, uint32_t name, v1::MonitorKernel* out) {
  out->set_name(name);
  out->set_grid_x(k.grid[0]);
  out->set_grid_y(k.grid[1]);
  out->set_grid_z(k.grid[2]);
  out->set_block_x(k.block[0]);
  out->set_block_y(k.block[1]);
  out->set_block_z(k.block[2]);
  out->set_launches(k.launches);
  out->set_gpu_ns(k.gpu_ns);
}

KernelFigures DecodeKernel(const v1::MonitorKernel& k, const core::Dictionary& dict) {
  KernelFigures out;
  out.name = k.name() == 0 ? std::string() : dict.str(k.name());
  out.grid = {k.grid_x(), k.grid_y(), k.grid_z()};
  out.block = {k.block_x(), k.block_y(), k.block_z()};
  out.launches = k.launches();
  out.gpu_ns = k.gpu_ns();
  return out;
}

void EncodeHistogram(const RequestHistogram& h, v1::MonitorHistogram* out) {
  // Up to the last bucket with a count: trailing empty buckets are not written.
  size_t used = h.counts.size();
  while (used > 0 && h.counts[used - 1] == 0) --used;
  for (size_t i = 0; i < used; ++i) out->add_buckets(h.counts[i]);
  out->set_sum_seconds(h.sum_seconds);
}

RequestHistogram DecodeHistogram(const v1::MonitorHistogram& in) {
  RequestHistogram h;
  for (int i = 0; i < in.buckets_size() && static_cast<size_t>(i) < h.counts.size(); ++i) h.counts[i] = in.buckets(i);
  h.sum_seconds = in.sum_seconds();
  return h;
}

}  // namespace

void EncodeMonitorInterval(const IntervalFigures& f, const std::function<uint32_t(std::string_view)>& intern,
                    v1::MonitorInterval* out) {
  out->set_start_ns(f.start_ns);
  out->set_end_ns(f.end_ns);
  out->set_launch_calls(f.launch_calls);
  out->set_sync_calls(f.sync_calls);
  out->set_sync_wait_ns(f.sync_wait_ns);
  out->set_records_dropped_by_cupti(f.records_dropped_by_cupti);
  out->set_late_records(f.late_records);
  if (f.estimated) {
    out->set_estimated(true);
    out->set_observed_ns(f.observed_ns);
    out->set_sample_windows(f.sample_windows);
    out->set_count_bound(f.count_bound);
  }
  for (const RouteRequestFigures& r : f.requests) {
    v1::MonitorRouteRequests* mr = out->add_requests();
    mr->set_route(r.route.empty() ? 0 : intern(r.route));
    mr->set_requests(r.requests);
    EncodeHistogram(r.span, mr->mutable_span());
    EncodeHistogram(r.gpu, mr->mutable_gpu());
    EncodeHistogram(r.queue, mr->mutable_queue());
    for (const RequestHistogram& h : r.idle) EncodeHistogram(h, mr->add_idle_by_cause());
    mr->set_span_p50(r.span_p50);
    mr->set_span_p99(r.span_p99);
    mr->set_span_max(r.span_max);
    mr->set_gpu_p50(r.gpu_p50);
    mr->set_gpu_p99(r.gpu_p99);
    mr->set_queue_p50(r.queue_p50);
    mr->set_queue_p99(r.queue_p99);
  }
  for (const DeviceFigures& d : f.devices) {
    v1::MonitorDevice* md = out->add_devices();
    md->set_device(d.device);
    md->set_busy_ns(d.busy_ns);
    md->set_idle_ns(d.idle_ns);
    if (f.estimated) {
      md->set_observed_ns(d.observed_ns);
      md->set_busy_share_bound(d.busy_share_bound);
    }
    for (uint64_t ns : d.idle_by_cause_ns) md->add_idle_by_cause_ns(ns);
    md->set_kernels(d.kernels);
    md->set_kernel_gpu_ns(d.kernel_gpu_ns);
    for (const KernelFigures& k : d.top_kernels) EncodeKernel(k, intern(k.name), md->add_top_kernels());
    if (d.other_kernels.launches > 0) EncodeKernel(d.other_kernels, 0, md->mutable_other_kernels());
    for (const CopyFigures& c : d.copies) {
      v1::MonitorCopy* mc = md->add_copies();
      mc->set_kind(c.kind);
      mc->set_src_kind(c.src_kind);
      mc->set_dst_kind(c.dst_kind);
      mc->set_count(c.count);
      mc->set_bytes(c.bytes);
      mc->set_gpu_ns(c.gpu_ns);
    }
    md->set_memsets(d.memsets);
    md->set_memset_bytes(d.memset_bytes);
    md->set_memset_ns(d.memset_ns);
    for (const CounterFigures& c : d.counters) {
      v1::MonitorCounter* mc = md->add_counters();
      mc->set_name(intern(c.name));
      mc->set_source(c.source);
      mc->set_samples(c.samples);
      mc->set_mean(c.mean);
      mc->set_max(c.max);
    }
  }
}

IntervalFigures DecodeMonitorInterval(const v1::MonitorInterval& in, const core::Dictionary& dict) {
  IntervalFigures f;
  f.start_ns = in.start_ns();
  f.end_ns = in.end_ns();
  f.launch_calls = in.launch_calls();
  f.sync_calls = in.sync_calls();
  f.sync_wait_ns = in.sync_wait_ns();
  f.records_dropped_by_cupti = in.records_dropped_by_cupti();
  f.late_records = in.late_records();
  f.estimated = in.estimated();
  f.observed_ns = in.observed_ns();
  f.sample_windows = in.sample_windows();
  f.count_bound = in.count_bound();
  for (const v1::MonitorRouteRequests& mr : in.requests()) {
    RouteRequestFigures& r = f.requests.emplace_back();
    r.route = mr.route() == 0 ? std::string() : dict.str(mr.route());
    r.requests = mr.requests();
    r.span = DecodeHistogram(mr.span());
    r.gpu = DecodeHistogram(mr.gpu());
    r.queue = DecodeHistogram(mr.queue());
    for (int c = 0; c < mr.idle_by_cause_size() && c < kHostCauseCount; ++c) r.idle[c] = DecodeHistogram(mr.idle_by_cause(c));
    r.span_p50 = mr.span_p50();
    r.span_p99 = mr.span_p99();
    r.span_max = mr.span_max();
    r.gpu_p50 = mr.gpu_p50();
    r.gpu_p99 = mr.gpu_p99();
    r.queue_p50 = mr.queue_p50();
    r.queue_p99 = mr.queue_p99();
  }
  for (const v1::MonitorDevice& md : in.devices()) {
    DeviceFigures& d = f.devices.emplace_back();
    d.device = md.device();
    d.busy_ns = md.busy_ns();
    d.idle_ns = md.idle_ns();
    if (f.estimated) {
      d.observed_ns = md.observed_ns();
      d.busy_share_bound = md.busy_share_bound();
    }
    for (int c = 0; c < md.idle_by_cause_ns_size() && c < kHostCauseCount; ++c) d.idle_by_cause_ns[c] = md.idle_by_cause_ns(c);
    d.kernels = md.kernels();
    d.kernel_gpu_ns = md.kernel_gpu_ns();
    for (const v1::MonitorKernel& k : md.top_kernels()) d.top_kernels.push_back(DecodeKernel(k, dict));
    d.other_kernels = DecodeKernel(md.other_kernels(), dict);
    d.other_kernels.name.clear();
    for (const v1::MonitorCopy& mc : md.copies()) {
      CopyFigures& c = d.copies.emplace_back();
      c.kind = mc.kind();
      c.src_kind = mc.src_kind();
      c.dst_kind = mc.dst_kind();
      c.count = mc.count();
      c.bytes = mc.bytes();
      c.gpu_ns = mc.gpu_ns();
    }
    d.memsets = md.memsets();
    d.memset_bytes = md.memset_bytes();
    d.memset_ns = md.memset_ns();
    for (const v1::MonitorCounter& mc : md.counters()) {
      CounterFigures& c = d.counters.emplace_back();
      c.name = dict.str(mc.name());
      c.source = mc.source();
      c.samples = mc.samples();
      c.mean = mc.mean();
      c.max = mc.max();
    }
  }
  return f;
}

}  // namespace cuscope::core
