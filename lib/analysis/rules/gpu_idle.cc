// gpu.idle: how much of its active span each device sat idle, and what the host was doing then.
//
// The active span runs from a device's first operation to its last: start-up before the first
// kernel and tear-down after the last are not the GPU waiting for work. Busy time is the union of
// kernels, copies and memsets on the device, so concurrent streams never count twice.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

constexpr std::array<absl::string_view, kApiCategoryCount + 1> kCauseKeys = {
    "idle_in_sync_ns", "idle_in_copy_ns", "idle_in_alloc_ns", "idle_in_launch_ns", "idle_in_other_api_ns",
    "idle_host_bound_ns"};
constexpr std::array<absl::string_view, kApiCategoryCount + 1> kCauseNames = {
    "host in a synchronization call", "host in a memcpy/memset call", "host allocating or freeing memory",
    "host launching work", "host in another CUDA call", "host-bound (no CUDA call running)"};
constexpr std::array<absl::string_view, kApiCategoryCount + 1> kCauseAdvice = {
    "remove synchronization points or replace them with events the GPU waits on, so the host keeps "
    "submitting work while the GPU runs",
    "make the copies asynchronous (pinned memory, cudaMemcpyAsync on their own stream)",
    "allocate once up front or use a caching/stream-ordered allocator (cudaMallocAsync) instead of "
    "allocating in the loop",
    "launches are the bottleneck: fuse small kernels or capture the sequence in a CUDA graph",
    "look at the other CUDA calls made between kernels",
    "the host is busy outside CUDA between submissions (framework overhead, Python, I/O): profile the "
    "host side, move work off the submitting thread, or queue more work ahead"};

}  // namespace

std::vector<Finding> GpuIdleRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  std::optional<HostActivity> host;  // built only when some device is idle enough to explain
  for (const DeviceTimeline& d : timeline.devices()) {
    const uint64_t active_ns = d.active.length();
    if (active_ns == 0) continue;
    const uint64_t busy_ns = d.busy_ns();
    const double busy_share = static_cast<double>(busy_ns) / static_cast<double>(active_ns);
    if (busy_share >= thresholds.gpu_busy_min_share) continue;
    if (!host) host.emplace(timeline);

    const IntervalSet gaps = GapsWithin(d.busy, d.active);
    std::array<uint64_t, kApiCategoryCount + 1> cause_ns{};
    const uint64_t micro_gap_ns = static_cast<uint64_t>(thresholds.micro_gap_us * 1000.0);
    uint64_t micro_gaps = 0, micro_gap_total = 0;
    std::vector<std::pair<Interval, int>> longest;  // gap, dominant cause
    for (const Interval& gap : gaps) {
      const auto by_category = host->Breakdown(gap);
      uint64_t explained = 0;
      int dominant = kApiCategoryCount;
      uint64_t dominant_ns = 0;
      for (int c = 0; c < kApiCategoryCount; ++c) {
        cause_ns[c] += by_category[c];
        explained += by_category[c];
        if (by_category[c] > dominant_ns) {
          dominant_ns = by_category[c];
          dominant = c;
        }
      }
      const uint64_t unexplained = gap.length() - std::min(gap.length(), explained);
      cause_ns[kApiCategoryCount] += unexplained;
      if (unexplained >= dominant_ns) dominant = kApiCategoryCount;
      if (gap.length() < micro_gap_ns) {
        ++micro_gaps;
        micro_gap_total += gap.length();
      }
      longest.emplace_back(gap, dominant);
      if (longest.size() > 16) {
        std::sort(longest.begin(), longest.end(),
                  [](const auto& a, const auto& b) { return a.first.length() > b.first.length(); });
        longest.resize(3);
      }
    }
    std::sort(longest.begin(), longest.end(),
              [](const auto& a, const auto& b) { return a.first.length() > b.first.length(); });
    if (longest.size() > 3) longest.resize(3);

    // Utilization profile: buckets with little work show where in the run the GPU starved.
    const uint64_t buckets = std::max<uint64_t>(1, static_cast<uint64_t>(thresholds.utilization_buckets));
    uint64_t low_buckets = 0;
    Interval worst_bucket;
    double worst_share = 2.0;
    for (uint64_t b = 0; b < buckets; ++b) {
      const Interval bucket{d.active.begin + active_ns * b / buckets, d.active.begin + active_ns * (b + 1) / buckets};
      if (bucket.empty()) continue;
      const double share = static_cast<double>(CoveredLength(d.busy, bucket)) / static_cast<double>(bucket.length());
      if (share < thresholds.utilization_low_share) ++low_buckets;
      if (share < worst_share) {
        worst_share = share;
        worst_bucket = bucket;
      }
    }

    const uint64_t idle_ns = active_ns - busy_ns;
    int top_cause = 0;
    for (int c = 1; c <= kApiCategoryCount; ++c) {
      if (cause_ns[c] > cause_ns[top_cause]) top_cause = c;
    }
    Finding f;
    f.rule_id = "gpu.idle";
    f.recoverable_ns = idle_ns;
    f.severity = SeverityFor(idle_ns, active_ns, thresholds);
    f.headline = absl::StrCat("GPU ", d.device, " idle ", FormatPercent(1.0 - busy_share), " of its active time (",
                              FormatDuration(idle_ns), " of ", FormatDuration(active_ns), "); mostly ",
                              kCauseNames[top_cause]);
    f.Add("device", d.device, "id");
    f.Add("active_ns", static_cast<double>(active_ns), "ns");
    f.Add("busy_ns", static_cast<double>(busy_ns), "ns");
    f.Add("busy_share", busy_share, "ratio");
    f.Add("idle_ns", static_cast<double>(idle_ns), "ns");
    f.Add("gaps", static_cast<double>(gaps.size()), "count");
    f.Add("micro_gaps", static_cast<double>(micro_gaps), "count");
    f.Add("micro_gap_ns", static_cast<double>(micro_gap_total), "ns");
    for (int c = 0; c <= kApiCategoryCount; ++c) f.Add(std::string(kCauseKeys[c]), static_cast<double>(cause_ns[c]), "ns");
    f.Add("low_utilization_buckets", static_cast<double>(low_buckets), "count");
    f.Add("buckets", static_cast<double>(buckets), "count");
    for (int c = 0; c <= kApiCategoryCount; ++c) {
      if (cause_ns[c] > 0) f.offenders.push_back(Offender{"cause", std::string(kCauseNames[c]), 0, cause_ns[c]});
    }
    std::sort(f.offenders.begin(), f.offenders.end(),
              [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
    for (const auto& [gap, cause] : longest) {
      f.spans.push_back(Span{gap.begin, gap.end, absl::StrCat("idle gap: ", kCauseNames[cause])});
    }
    if (!worst_bucket.empty()) {
      f.spans.push_back(Span{worst_bucket.begin, worst_bucket.end,
                             absl::StrCat("least busy bucket: ", FormatPercent(worst_share), " busy")});
    }
    f.recommendation = absl::StrCat("Most idle time is ", kCauseNames[top_cause], ": ", kCauseAdvice[top_cause], ".");
    if (micro_gaps > 0) {
      absl::StrAppend(&f.recommendation, " ", micro_gaps, " gaps are shorter than ", thresholds.micro_gap_us,
                      " us (", FormatDuration(micro_gap_total), " in all): launch latency between short kernels.");
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace cuscope::analysis
