// hot.kernels: the kernels that hold most of the GPU's kernel time, the entry point to the
// kernel-internals analysis. Informational: a hot kernel is where to look, not a fault.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/launch_sites.h"
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
  // With call stacks (--stacks): where the hot kernels were launched from, by the GPU time of the
  // launches whose stack was taken.
  const LaunchStackIndex stacks(trace);
  if (!stacks.empty()) {
    absl::flat_hash_map<std::string_view, size_t> top_index;
    for (size_t i = 0; i < top.size(); ++i) top_index.emplace(top[i].name, i);
    // (top kernel index, launch site as read: call sites in one function are one) -> (time, launches)
    absl::flat_hash_map<uint32_t, std::string> site_text;  // by stack id
    const KernelNameSet kernels = KernelNames(trace.dict);
    absl::flat_hash_map<std::pair<size_t, std::string>, std::pair<uint64_t, uint64_t>> sites;
    for (const core::KernelRow& k : trace.kernels) {
      if (!timeline.OnTimeline(k) || !trace.dict.has_signature(k.signature)) continue;
      const auto it = top_index.find(trace.dict.kernel_name(k.signature));
      if (it == top_index.end()) continue;
      const uint32_t stack = stacks.StackOf(k);
      if (stack == 0) continue;
      auto [text, inserted] = site_text.try_emplace(stack);
      if (inserted) text->second = FrameText(trace.dict, LaunchSiteFrame(trace.dict, stack, kernels));
      auto& [time, launches] = sites[{it->second, text->second}];
      time += k.end > k.start ? k.end - k.start : 0;
      ++launches;
    }
    std::vector<std::pair<std::pair<size_t, std::string>, std::pair<uint64_t, uint64_t>>> ordered(sites.begin(),
                                                                                                  sites.end());
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      return a.first.first != b.first.first ? a.first.first < b.first.first
             : a.second.first != b.second.first ? a.second.first > b.second.first
                                                : a.first.second < b.first.second;
    });
    uint64_t first_total = 0;
    for (const auto& [key, figures] : ordered) {
      if (key.first == 0) first_total += figures.first;
    }
    if (!ordered.empty() && ordered.front().first.first == 0 && first_total > 0) {
      absl::StrAppend(&f.headline, "; ", top.front().name, " launched mostly from ", ordered.front().first.second, " (",
                      FormatPercent(static_cast<double>(ordered.front().second.first) / static_cast<double>(first_total)),
                      " of its launches' time with a stack)");
    }
    for (const auto& [key, figures] : ordered) {
      top.push_back(Offender{"launch site", absl::StrCat(key.second, " launches ", top[key.first].name), figures.second,
                             figures.first});
      if (top.size() >= 2 * top_n + 8) break;
    }
  }
  f.offenders = std::move(top);
  f.recommendation =
      "Start kernel-level work here: profile these kernels' internals (speed of light, occupancy, stalls) to see "
      "whether they are compute-, memory- or latency-bound.";
  return {std::move(f)};
}

}  // namespace cuscope::analysis
