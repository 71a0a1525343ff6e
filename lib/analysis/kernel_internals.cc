#include "lib/analysis/kernel_internals.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/kernel_verdict.h"
#include "lib/analysis/stall_reasons.h"
#include "lib/core/metric_sets.h"

namespace cuscope::analysis {
namespace {

namespace metric = core::metric;

constexpr absl::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// ---- Grouping ---------------------------------------------------------------------------------

struct Group {
  KernelVerdict v;
  uint32_t name_id = 0;
  // Per metric name: sum of values and the launches that had it.
  absl::flat_hash_map<std::string, std::pair<double, uint64_t>> sums;
  double replayed_duration_ns = 0;
};

std::string GroupKey(uint32_t device, uint32_t name, bool known, const std::array<int32_t, 3>& grid,
                     const std::array<int32_t, 3>& block) {
  if (!known) return absl::StrCat(device, "|", name, "|?");
  return absl::StrCat(device, "|", name, "|", grid[0], ",", grid[1], ",", grid[2], "|", block[0], ",", block[1], ",",
                      block[2]);
}

LaunchConfig LaunchOf(const v1::KernelSignature& s) {
  LaunchConfig c;
  c.block_x = static_cast<uint32_t>(std::max(1, s.block_x()));
  c.block_y = static_cast<uint32_t>(std::max(1, s.block_y()));
  c.block_z = static_cast<uint32_t>(std::max(1, s.block_z()));
  c.registers_per_thread = s.registers_per_thread();
  c.static_shared_memory = static_cast<uint64_t>(std::max(0, s.static_shared_memory()));
  c.dynamic_shared_memory = static_cast<uint64_t>(std::max(0, s.dynamic_shared_memory()));
  c.cluster_x = s.cluster_x();
  c.cluster_y = s.cluster_y();
  c.cluster_z = s.cluster_z();
  return c;
}

using ProfiledRows = absl::flat_hash_map<uint64_t, const core::KernelRow*>;
using SignatureOfShape = absl::flat_hash_map<std::string, uint32_t>;

// The kernel row of each profiled launch, by correlation id.
ProfiledRows ProfiledRowsByCorrelation(const Timeline& timeline) {
  ProfiledRows profiled_row;
  for (const core::KernelRow& k : timeline.trace().kernels) {
    if (timeline.Profiled(k.correlation_id)) profiled_row.try_emplace(k.correlation_id, &k);
  }
  return profiled_row;
}

// A metric row that carries its shape but has no kernel row: its shape is all that says which
// kernel it measured.
bool ShapeOnly(const core::MetricRow& row, const ProfiledRows& profiled_row) {
  return row.grid != std::array<uint32_t, 3>{0, 0, 0} && !profiled_row.contains(row.correlation_id);
}

// A signature of each (device, name, grid, block), for the launch configuration of metric rows
// that carry their shape but have no kernel row: built only when such a row exists.
SignatureOfShape SignaturesByShape(const core::Trace& trace, const ProfiledRows& profiled_row) {
  const core::Dictionary& dict = trace.dict;
  SignatureOfShape signature_of_shape;
  const auto shape_only = [&profiled_row](const core::MetricRow& row) { return ShapeOnly(row, profiled_row); };
  if (std::any_of(trace.metrics.begin(), trace.metrics.end(), shape_only)) {
    for (uint32_t id = 1; id <= dict.signature_count(); ++id) {
      const v1::KernelSignature& s = dict.signature(id);
      signature_of_shape.try_emplace(GroupKey(s.device(), s.name(), true, {s.grid_x(), s.grid_y(), s.grid_z()},
                                              {s.block_x(), s.block_y(), s.block_z()}),
                                     id);
    }
  }
  return signature_of_shape;
}

// The profiled launches grouped by kernel and shape, with their metric values summed.
struct Groups {
  std::vector<Group> groups;
  absl::flat_hash_map<std::string, size_t> group_of_key;
};

Groups GroupMetricRows(const Timeline& timeline, const ProfiledRows& profiled_row,
                       const SignatureOfShape& signature_of_shape) {
  const core::Trace& trace = timeline.trace();
  const core::Dictionary& dict = trace.dict;
  Groups out;
  std::vector<Group>& groups = out.groups;
  absl::flat_hash_map<std::string, size_t>& group_of_key = out.group_of_key;
  for (const core::MetricRow& row : trace.metrics) {
    const core::KernelRow* k = nullptr;
    if (auto it = profiled_row.find(row.correlation_id); it != profiled_row.end()) k = it->second;
    const v1::KernelSignature* sig = k && dict.has_signature(k->signature) ? &dict.signature(k->signature) : nullptr;
    const uint32_t device = sig ? sig->device() : row.device;
    const uint32_t name = sig ? sig->name() : row.kernel_name;
    std::array<int32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
    bool shape_known = false;
    if (sig) {
      grid = {sig->grid_x(), sig->grid_y(), sig->grid_z()};
      block = {sig->block_x(), sig->block_y(), sig->block_z()};
      shape_known = true;
    } else if (ShapeOnly(row, profiled_row)) {
      // Profiled after the timeline window closed: the metric row's own shape says which kernel it is.
      for (int i = 0; i < 3; ++i) {
        grid[i] = static_cast<int32_t>(row.grid[i]);
        block[i] = static_cast<int32_t>(row.block[i]);
      }
      shape_known = true;
      auto it = signature_of_shape.find(GroupKey(device, name, true, grid, block));
      if (it != signature_of_shape.end()) sig = &dict.signature(it->second);
    }
    auto [it, inserted] = group_of_key.try_emplace(GroupKey(device, name, shape_known, grid, block), groups.size());
    if (inserted) {
      Group& g = groups.emplace_back();
      g.name_id = name;
      g.v.name = name != 0 ? dict.str(name) : std::string("(unknown kernel)");
      g.v.device = device;
      g.v.shape_known = shape_known;
      g.v.launch_known = sig != nullptr;
      g.v.grid = grid;
      g.v.block = block;
      if (sig) g.v.launch = LaunchOf(*sig);
    }
    Group& g = groups[it->second];
    if (!g.v.launch_known && sig) {
      g.v.launch_known = true;
      g.v.launch = LaunchOf(*sig);
    }
    ++g.v.profiled_launches;
    g.v.pass_count = std::max(g.v.pass_count, row.pass_count);
    const bool captured = timeline.ReplayCaptured(row);
    for (const auto& [metric_id, value] : row.values) {
      if (!std::isfinite(value)) continue;  // a counter the chip could not produce
      auto& [sum, n] = g.sums[dict.str(metric_id)];
      sum += value;
      ++n;
      if (captured && dict.str(metric_id) == metric::kDuration) {
        g.replayed_duration_ns += std::max(0.0, value);
        ++g.v.replayed_launches_timed;
      }
    }
  }
  return out;
}

// Timeline time per group: signatures map to the group of their name and shape, or, for a group
// whose profiled launch had no kernel record, to the group of their name alone.
void AddTimelineTime(const Timeline& timeline, Groups& grouped) {
  const core::Trace& trace = timeline.trace();
  const core::Dictionary& dict = trace.dict;
  std::vector<Group>& groups = grouped.groups;
  const absl::flat_hash_map<std::string, size_t>& group_of_key = grouped.group_of_key;
  std::vector<size_t> group_of_signature(dict.signature_count() + 1, groups.size());
  for (uint32_t id = 1; id <= dict.signature_count(); ++id) {
    const v1::KernelSignature& s = dict.signature(id);
    const std::array<int32_t, 3> grid{s.grid_x(), s.grid_y(), s.grid_z()};
    const std::array<int32_t, 3> block{s.block_x(), s.block_y(), s.block_z()};
    auto it = group_of_key.find(GroupKey(s.device(), s.name(), true, grid, block));
    if (it == group_of_key.end()) it = group_of_key.find(GroupKey(s.device(), s.name(), false, grid, block));
    if (it != group_of_key.end()) group_of_signature[id] = it->second;
  }
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k) || k.signature >= group_of_signature.size()) continue;
    const size_t g = group_of_signature[k.signature];
    if (g == groups.size()) continue;
    ++groups[g].v.timeline_launches;
    groups[g].v.timeline_time_ns += k.end > k.start ? k.end - k.start : 0;
  }
}

}  // namespace

std::string_view BottleneckName(Bottleneck b) {
  switch (b) {
    case Bottleneck::kUndetermined: return "undetermined";
    case Bottleneck::kCompute: return "compute-bound";
    case Bottleneck::kMemory: return "memory-bound";
    case Bottleneck::kLatency: return "latency-bound";
    case Bottleneck::kMixed: return "mixed";
  }
  return "undetermined";
}

std::string_view OccupancyVerdictName(OccupancyVerdict v) {
  switch (v) {
    case OccupancyVerdict::kUnknown: return "unknown";
    case OccupancyVerdict::kFine: return "fine";
    case OccupancyVerdict::kLowButFine: return "low but fine";
    case OccupancyVerdict::kProblem: return "problem";
  }
  return "unknown";
}

std::string MetricUnit(std::string_view metric_name) {
  const absl::string_view n = Absl(metric_name);
  if (absl::StrContains(n, ".pct_of_peak") || absl::EndsWith(n, "_pct")) return "%";
  if (n == Absl(metric::kDuration) || absl::StartsWith(n, "gpu__time_duration")) return "ns";
  if (absl::StartsWith(n, "dram__bytes") || absl::StrContains(n, "__bytes")) return "bytes";
  if (absl::EndsWith(n, ".per_second")) return "Hz";
  if (absl::StrContains(n, "warps_active")) return "warps";
  if (absl::StartsWith(n, kStallPrefix) || n == Absl(metric::kWarpCyclesPerIssue)) return "cycles/inst";
  if (absl::StrContains(n, "cycles")) return "cycles";
  if (absl::StrContains(n, "inst_executed")) return "count";
  return "";
}

std::string KernelVerdict::GridText() const { return absl::StrCat(grid[0], " ", grid[1], " ", grid[2]); }
std::string KernelVerdict::BlockText() const { return absl::StrCat(block[0], " ", block[1], " ", block[2]); }

std::string KernelVerdict::Label() const {
  if (!shape_known) return name;
  return absl::StrCat(name, " [grid ", GridText(), ", block ", BlockText(), "]");
}

const MetricValue* KernelVerdict::metric(std::string_view metric_name) const {
  for (const MetricValue& m : metrics) {
    if (m.name == metric_name) return &m;
  }
  return nullptr;
}

std::vector<KernelVerdict> JudgeKernels(const Timeline& timeline, const Thresholds& thresholds) {
  const core::Trace& trace = timeline.trace();
  if (trace.metrics.empty()) return {};

  const ProfiledRows profiled_row = ProfiledRowsByCorrelation(timeline);
  const SignatureOfShape signature_of_shape = SignaturesByShape(trace, profiled_row);
  Groups grouped = GroupMetricRows(timeline, profiled_row, signature_of_shape);
  AddTimelineTime(timeline, grouped);
  std::vector<Group>& groups = grouped.groups;

  uint64_t all_kernel_time = 0;
  for (const DeviceTimeline& d : timeline.devices()) all_kernel_time += d.kernel_time_ns;
  for (const Group& g : groups) all_kernel_time += ClampToU64(g.replayed_duration_ns);

  const kernel_verdict::RequestedMetrics requested(trace.header.config().metrics().begin(), trace.header.config().metrics().end());
  std::vector<KernelVerdict> out;
  out.reserve(groups.size());
  for (Group& g : groups) {
    KernelVerdict& v = g.v;
    for (auto& [name, sum_n] : g.sums) {
      const auto& [sum, n] = sum_n;
      v.metrics.push_back(MetricValue{name, sum / static_cast<double>(n), MetricUnit(name), n});
    }
    std::sort(v.metrics.begin(), v.metrics.end(),
              [](const MetricValue& a, const MetricValue& b) { return a.name < b.name; });
    v.gpu_time_ns = v.timeline_time_ns + ClampToU64(g.replayed_duration_ns);
    v.kernel_time_share =
        all_kernel_time > 0 ? static_cast<double>(v.gpu_time_ns) / static_cast<double>(all_kernel_time) : 0;
    for (const DeviceTimeline& d : timeline.devices()) {
      if (d.device == v.device) v.device_span_ns = d.counted_active_ns();
    }
    v.device_span_ns = std::max(v.device_span_ns, v.gpu_time_ns);
    kernel_verdict::Judge(v, trace, requested, thresholds);
    out.push_back(std::move(v));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelVerdict& a, const KernelVerdict& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.name < b.name;
  });
  return out;
}

KernelInternalsSummary SummarizeVerdicts(const std::vector<KernelVerdict>& verdicts, const Timeline& timeline) {
  KernelInternalsSummary s;
  for (const DeviceTimeline& d : timeline.devices()) s.kernel_time_ns += d.kernel_time_ns;
  for (const KernelVerdict& v : verdicts) {
    ++s.groups;
    s.profiled_launches += v.profiled_launches;
    s.profiled_time_ns += v.gpu_time_ns;
    s.kernel_time_ns += v.gpu_time_ns - v.timeline_time_ns;
    s.time_by_bottleneck[static_cast<int>(v.bottleneck)] += v.gpu_time_ns;
  }
  return s;
}

std::string ReplayBiasNote(const KernelVerdict& v) {
  if (v.pass_count <= 1 || ((!v.dram_pct || v.dram_derived) && !v.l2_pct)) return "";
  return absl::StrCat("DRAM and L2 from ", v.pass_count,
                      " replay passes read a few points above ncu's (up to 3.5 on the H200); DRAM collected alone "
                      "(--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed, one pass) agrees within 1 point");
}

std::string RenderVerdictDetails(const KernelVerdict& v, const std::string& indent) {
  auto optional_pct = [](const char* label, const std::optional<double>& x) {
    return x ? absl::StrFormat("%s %.1f%%", label, *x) : std::string();
  };
  std::string out = absl::StrCat(indent, "why: ", v.reason, "\n");
  std::vector<std::string> throughput;
  for (const std::string& part : {optional_pct("SM", v.sm_pct), optional_pct("memory", v.memory_pct),
                                  optional_pct(v.dram_derived ? "DRAM (derived)" : "DRAM", v.dram_pct),
                                  optional_pct("L2", v.l2_pct), optional_pct("L1", v.l1_pct)}) {
    if (!part.empty()) throughput.push_back(part);
  }
  if (v.duration_ns) throughput.push_back(absl::StrCat("duration ", FormatDuration(ClampToU64(*v.duration_ns))));
  if (!throughput.empty()) out += WrapItems(throughput, absl::StrCat(indent, "throughput: "), absl::StrCat(indent, "  "));
  if (const std::string note = ReplayBiasNote(v); !note.empty()) absl::StrAppend(&out, indent, "note: ", note, "\n");
  absl::StrAppend(&out, indent, "occupancy: ", v.occupancy_note, "\n");
  if (!v.stall_note.empty()) absl::StrAppend(&out, indent, "stalls: ", v.stall_note, "\n");
  if (!v.roofline_note.empty()) absl::StrAppend(&out, indent, "roofline: ", v.roofline_note, "\n");
  for (const std::string& u : v.undecided) absl::StrAppend(&out, indent, "not decided: ", u, "\n");
  absl::StrAppend(&out, indent, "advice: ", v.recommendation, "\n");
  return out;
}

}  // namespace cuscope::analysis
