#include "lib/monitor/metric_families.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/counter_names.h"

namespace cuscope::monitor {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// "COPY_KIND_HTOD" -> "htod", "MEMORY_KIND_DEVICE_STATIC" -> "device_static".
std::string EnumLabel(const std::string& enum_name, absl::string_view prefix) {
  absl::string_view name = enum_name;
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

// Families in the order they are first named; a family without samples is dropped at the end.
class Families {
 public:
  MetricFamily& Counter(const std::string& name, const std::string& help) { return Get(name, help, MetricType::Counter); }
  MetricFamily& Gauge(const std::string& name, const std::string& help) { return Get(name, help, MetricType::Gauge); }
  MetricFamily& Histogram(const std::string& name, const std::string& help) {
    return Get(name, help, MetricType::Histogram);
  }

  static void AddHistogram(MetricFamily& family, Labels labels, const RequestHistogram& h) {
    ClientMetric& metric = family.metric.emplace_back();
    metric.label = std::move(labels);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      ClientMetric::Bucket& bucket = metric.histogram.bucket.emplace_back();
      bucket.cumulative_count = cumulative;
      bucket.upper_bound =
          i < kRequestBucketSeconds.size() ? kRequestBucketSeconds[i] : std::numeric_limits<double>::infinity();
    }
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = h.sum_seconds;
  }

  static void Add(MetricFamily& family, Labels labels, double value) {
    ClientMetric& metric = family.metric.emplace_back();
    metric.label = std::move(labels);
    if (family.type == MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
  }

  std::vector<MetricFamily> Take() && {
    std::vector<MetricFamily> out;
    for (MetricFamily& family : families_) {
      if (!family.metric.empty()) out.push_back(std::move(family));
    }
    return out;
  }

 private:
  MetricFamily& Get(const std::string& name, const std::string& help, MetricType type) {
    for (MetricFamily& family : families_) {
      if (family.name == name) return family;
    }
    MetricFamily& family = families_.emplace_back();
    family.name = name;
    family.help = help;
    family.type = type;
    return family;
  }

  std::vector<MetricFamily> families_;
};

void AddProcessCounters(const RunningTotals& totals, Families& out) {
  Families::Add(out.Counter("cuscope_monitor_intervals_total", "Monitor intervals closed and published."), {},
                static_cast<double>(totals.intervals()));
  Families::Add(out.Counter("cuscope_launch_calls_total", "Kernel and graph launch calls (runtime and driver API)."), {},
                static_cast<double>(totals.launch_calls()));
  Families::Add(out.Counter("cuscope_sync_calls_total", "Calls that wait for the GPU (stream, device, event synchronize)."),
                {}, static_cast<double>(totals.sync_calls()));
  Families::Add(out.Counter("cuscope_sync_wait_seconds_total",
                            "Time at least one host thread spent waiting in a synchronizing call."),
                {}, Seconds(totals.sync_wait_ns()));
  Families::Add(out.Counter("cuscope_cupti_dropped_records_total",
                            "Activity records CUPTI dropped for want of a buffer: the figures miss them."),
                {}, static_cast<double>(totals.records_dropped_by_cupti()));
  Families::Add(out.Counter("cuscope_late_records_total",
                            "Records that arrived after their interval had closed, counted in a later one."),
                {}, static_cast<double>(totals.late_records()));
}

void AddKernelRow(const std::string& device, const KernelTotals& row, Families& out) {
  Labels labels = {{"device", device}, {"kernel", row.label}};
  if (!row.grid.empty()) labels.push_back({"grid", row.grid});
  if (!row.block.empty()) labels.push_back({"block", row.block});
  Families::Add(out.Counter("cuscope_kernel_gpu_seconds_total",
                            "GPU time of a kernel's executions (overlapping ones each count); the top kernels "
                            "by name, grid and block, the rest as kernel=\"other\"."),
                labels, Seconds(row.gpu_ns));
  Families::Add(out.Counter("cuscope_kernel_launches_total", "Executions of a kernel, labelled as its GPU time is."),
                std::move(labels), static_cast<double>(row.launches));
}

void AddDeviceCounters(const DeviceTotals& d, Families& out) {
  const std::string device = absl::StrCat(d.device);
  Families::Add(out.Counter("cuscope_gpu_busy_seconds_total",
                            "Time the device ran at least one kernel, copy or memset."),
                {{"device", device}}, Seconds(d.busy_ns));
  MetricFamily& idle = out.Counter("cuscope_gpu_idle_seconds_total",
                                   "Time the device ran nothing, by what the host was doing meanwhile.");
  for (int c = 0; c < kHostCauseCount; ++c) {
    Families::Add(idle, {{"device", device}, {"cause", HostCauseName(static_cast<HostCause>(c))}},
                  Seconds(d.idle_by_cause_ns[c]));
  }
  Families::Add(out.Counter("cuscope_kernels_total", "Kernel executions."), {{"device", device}},
                static_cast<double>(d.kernels));
  for (const KernelTotals& row : d.kernel_rows) AddKernelRow(device, row, out);
  if (d.other_kernels.launches != 0 || d.other_kernels.gpu_ns != 0) AddKernelRow(device, d.other_kernels, out);
  for (const CopyFigures& copy : d.copies) {
    const Labels labels = {{"device", device},
                           {"kind", EnumLabel(v1::CopyKind_Name(copy.kind), "COPY_KIND_")},
                           {"src", EnumLabel(v1::MemoryKind_Name(copy.src_kind), "MEMORY_KIND_")},
                           {"dst", EnumLabel(v1::MemoryKind_Name(copy.dst_kind), "MEMORY_KIND_")}};
    Families::Add(out.Counter("cuscope_copies_total", "Memory copies, by direction and kinds of memory."), labels,
                  static_cast<double>(copy.count));
    Families::Add(out.Counter("cuscope_copy_bytes_total", "Bytes copied, by direction and kinds of memory."), labels,
                  static_cast<double>(copy.bytes));
    Families::Add(out.Counter("cuscope_copy_seconds_total", "GPU time of memory copies."), labels,
                  Seconds(copy.gpu_ns));
  }
  if (d.memsets != 0) {
    Families::Add(out.Counter("cuscope_memsets_total", "Memsets."), {{"device", device}},
                  static_cast<double>(d.memsets));
    Families::Add(out.Counter("cuscope_memset_bytes_total", "Bytes set by memsets."), {{"device", device}},
                  static_cast<double>(d.memset_bytes));
    Families::Add(out.Counter("cuscope_memset_seconds_total", "GPU time of memsets."), {{"device", device}},
                  Seconds(d.memset_ns));
  }
}

// Requests per route: histograms of their GPU time, queueing and idle time by host cause, and span.
void AddRouteHistograms(const RouteTotals& r, Families& out) {
  Families::AddHistogram(out.Histogram("cuscope_request_gpu_seconds",
                                       "GPU time of a request's kernels (a batch's kernels shared among its requests)."),
                         {{"route", r.route}}, r.gpu);
  Families::AddHistogram(out.Histogram("cuscope_request_queue_seconds",
                                       "Time a request's work waited on the GPU (from each operation's launch, or its stream predecessor's end, to its start)."),
                         {{"route", r.route}}, r.queue);
  MetricFamily& idle = out.Histogram("cuscope_request_idle_seconds",
                                     "Time the GPU ran nothing inside a request's span, by what its thread was doing.");
  for (int c = 0; c < kHostCauseCount; ++c) {
    Families::AddHistogram(idle, {{"route", r.route}, {"cause", HostCauseName(static_cast<HostCause>(c))}}, r.idle[c]);
  }
  Families::AddHistogram(out.Histogram("cuscope_request_span_seconds", "A request's scope, begin to end."),
                         {{"route", r.route}}, r.span);
}

void AddDeviceGauges(const DeviceTotals& d, Families& out) {
  const std::string device = absl::StrCat(d.device);
  Families::Add(out.Gauge("cuscope_gpu_utilization_ratio", "Share of the latest interval the device was busy."),
                {{"device", device}}, d.utilization);
  if (d.utilization_bound >= 0) {
    Families::Add(out.Gauge("cuscope_gpu_utilization_bound_ratio",
                            "Under a duty cycle: the 95% bound of the latest interval's utilization, estimated "
                            "from its recording windows (utilization is within this of the true share)."),
                  {{"device", device}}, d.utilization_bound);
  }
  for (const auto& [name, reading] : d.counters) {
    const GpuCounterGauge* known = nullptr;
    for (const GpuCounterGauge& gauge : GpuCounterGauges()) {
      if (name == gauge.counter) known = &gauge;
    }
    if (known != nullptr) {
      Families::Add(out.Gauge(known->metric, known->help), {{"device", device}},
                    (known->use_max ? reading.max : reading.mean) * known->scale);
    } else {
      Families::Add(out.Gauge("cuscope_gpu_counter", "Any other GPU counter collected: its mean over the latest "
                                                     "interval that had readings, in the counter's own unit."),
                    {{"device", device}, {"counter", name}}, reading.mean);
    }
  }
}

// Monitor mode's duty cycle: how much was recorded, what it costs, and how far the estimates may be off.
void AddCollectionGauges(const CollectionTotals& c, Families& out) {
  if (!c.duty_cycle && !c.estimated) return;
  Families::Add(out.Gauge("cuscope_recorded_ratio",
                          "Share of the latest interval recorded: its figures are estimated from that share (1: "
                          "recorded whole, exact)."),
                {}, c.recorded_share);
  if (c.estimated && c.count_bound >= 0) {
    Families::Add(out.Gauge("cuscope_estimate_count_bound_ratio",
                            "The 95% relative bound of the latest interval's estimated counts (kernels, launches, "
                            "GPU time)."),
                  {}, c.count_bound);
  }
  if (!c.duty_cycle) return;
  Families::Add(out.Gauge("cuscope_duty_cycle_ratio", "Share of the time the session records now."), {}, c.duty);
  Families::Add(out.Gauge("cuscope_estimated_overhead_ratio",
                          "The session's estimated added cost, as a share of the program's time, at the current "
                          "duty cycle."),
                {}, c.estimated_overhead);
  if (c.overhead_budget > 0) {
    Families::Add(out.Gauge("cuscope_overhead_budget_ratio",
                            "The budget the duty cycle holds the session's estimated cost under."),
                  {}, c.overhead_budget);
  }
}

}  // namespace

const std::vector<GpuCounterGauge>& GpuCounterGauges() {
  namespace c = core::counter;
  static const auto* const kGauges = new std::vector<GpuCounterGauge>{
      {c::kPmGrActivePct, "cuscope_gpu_engine_active_ratio", "Share of cycles the compute engine had work.", 0.01, false},
      {c::kPmSmActivePct, "cuscope_gpu_sm_active_ratio", "Share of SM cycles with at least one warp resident.", 0.01,
       false},
      {c::kPmSmIssuePct, "cuscope_gpu_sm_issue_ratio",
       "SM throughput: share of warp-scheduler cycles that issued an instruction.", 0.01, false},
      {c::kPmWarpsActivePct, "cuscope_gpu_warp_occupancy_ratio", "Resident warps over the SMs' warp slots.", 0.01,
       false},
      {c::kPmTensorActivePct, "cuscope_gpu_tensor_active_ratio", "Share of cycles the tensor pipes were issuing.",
       0.01, false},
      {c::kPmDramReadPct, "cuscope_gpu_dram_read_throughput_ratio", "DRAM read bandwidth over its peak.", 0.01, false},
      {c::kPmDramWritePct, "cuscope_gpu_dram_write_throughput_ratio", "DRAM write bandwidth over its peak.", 0.01,
       false},
      {c::kPmPcieReadBytesPerSecond, "cuscope_gpu_pcie_read_bytes_per_second", "PCIe bytes received by the GPU.", 1,
       false},
      {c::kPmPcieWriteBytesPerSecond, "cuscope_gpu_pcie_write_bytes_per_second", "PCIe bytes sent by the GPU.", 1,
       false},
      {c::kPmNvlinkRxBytesPerSecond, "cuscope_gpu_nvlink_receive_bytes_per_second", "NVLink bytes received.", 1,
       false},
      {c::kPmNvlinkTxBytesPerSecond, "cuscope_gpu_nvlink_transmit_bytes_per_second", "NVLink bytes sent.", 1, false},
      {c::kPowerWatts, "cuscope_gpu_power_watts", "Power draw (NVML).", 1, false},
      {c::kTemperatureCelsius, "cuscope_gpu_temperature_celsius", "GPU temperature (NVML).", 1, false},
      {c::kSmClockMhz, "cuscope_gpu_sm_clock_hertz", "SM clock (NVML).", 1e6, false},
      {c::kMemoryClockMhz, "cuscope_gpu_memory_clock_hertz", "Memory clock (NVML).", 1e6, false},
      {c::kMemoryUsedBytes, "cuscope_gpu_memory_used_bytes", "Device memory in use (NVML).", 1, false},
      // A bit mask: a mean of masks means nothing, the highest reading is one of the masks read.
      {c::kClocksEventReasons, "cuscope_gpu_clocks_event_reasons",
       "NVML clocks event (throttle) reasons, a bit mask of nvmlClocksEventReason* values: the interval's "
       "highest reading.",
       1, true},
  };
  return *kGauges;
}

ProcessLabels LaunchLabels(const process::LaunchPlace& place) {
  ProcessLabels labels;
  if (place.rank >= 0) labels.push_back({"rank", std::to_string(place.rank)});
  if (place.local_rank >= 0) labels.push_back({"local_rank", std::to_string(place.local_rank)});
  if (!place.job_id.empty()) labels.push_back({"job_id", place.job_id.substr(0, 128)});
  return labels;
}

std::vector<prometheus::MetricFamily> MetricFamilies(const RunningTotals& totals, const ProcessLabels& process_labels) {
  Families out;
  AddProcessCounters(totals, out);
  for (const DeviceTotals& d : totals.devices()) AddDeviceCounters(d, out);
  for (const RouteTotals& r : totals.routes()) AddRouteHistograms(r, out);
  for (const DeviceTotals& d : totals.devices()) AddDeviceGauges(d, out);
  AddCollectionGauges(totals.collection(), out);
  std::vector<prometheus::MetricFamily> families = std::move(out).Take();
  if (!process_labels.empty()) {
    for (prometheus::MetricFamily& family : families) {
      for (ClientMetric& metric : family.metric) {
        for (const auto& [name, value] : process_labels) metric.label.push_back({name, value});
      }
    }
  }
  return families;
}

}  // namespace cuscope::monitor
