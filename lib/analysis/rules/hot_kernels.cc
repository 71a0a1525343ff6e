// hot.kernels: the kernels that hold most of the GPU's kernel time, the entry point to the
// kernel-internals analysis. Informational: a hot kernel is where to look, not a fault.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {

std::vector<Finding> HotKernelsRule(const Timeline& timeline, const Thresholds& thresholds) {
  const core::Trace& trace = timeline.trace();
  // Sum by signature first (dense ids, no hashing per kernel), then by name.
  std::vector<std::pair<uint64_t, uint64_t>> by_signature(trace.dict.signature_count() + 1);  // (time, count)
  uint64_t total = 0;
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    const uint64_t duration = k.end > k.start ? k.end - k.start : 0;
    total += duration;
    if (k.signature < by_signature.size()) {
      by_signature[k.signature].first += duration;
      ++by_signature[k.signature].second;
    }
  }
  if (total == 0) return {};
  OffenderTally names("kernel");
  for (uint32_t sig = 1; sig < by_signature.size(); ++sig) {
    if (by_signature[sig].second > 0) {
      names.Add(trace.dict.kernel_name(sig), by_signature[sig].first, by_signature[sig].second);
    }
  }
  const size_t top_n = std::max<size_t>(1, static_cast<size_t>(thresholds.hot_kernels_top));
  std::vector<Offender> top = names.Top(top_n);
  const double top_share = static_cast<double>(top.front().time_ns) / static_cast<double>(total);
  if (top_share < thresholds.hot_kernel_min_share) return {};
  uint64_t top_total = 0;
  for (const Offender& o : top) top_total += o.time_ns;
  Finding f;
  f.rule_id = "hot.kernels";
  f.severity = Severity::kInfo;
  f.headline = absl::StrCat(top.front().name, " takes ", FormatPercent(top_share), " of GPU kernel time; the top ",
                            top.size(), " take ", FormatPercent(static_cast<double>(top_total) / static_cast<double>(total)));
  f.Add("kernel_time_ns", static_cast<double>(total), "ns");
  f.Add("top_share", top_share, "ratio");
  f.Add("top_n_share", static_cast<double>(top_total) / static_cast<double>(total), "ratio");
  f.offenders = std::move(top);
  f.recommendation =
      "Start kernel-level work here: profile these kernels' internals (speed of light, occupancy, stalls) to see "
      "whether they are compute-, memory- or latency-bound.";
  return {std::move(f)};
}

}  // namespace cuscope::analysis
