#include "lib/core/metric_sets.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cuscope::core {
namespace metric {
std::string StallMetric(std::string_view reason) {
  return absl::StrCat("smsp__average_warps_issue_stalled_", std::string(reason), "_per_issue_active.ratio");
}
}  // namespace metric

namespace {

std::vector<std::string> Names(std::initializer_list<std::string_view> names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (std::string_view n : names) out.emplace_back(n);
  return out;
}

// unit__counter[.rollup[.submetric...]]: lower-case letters, digits and underscores around a
// double underscore, then dot-separated parts.
bool LooksLikeMetricName(std::string_view name) {
  const size_t sep = name.find("__");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= name.size()) return false;
  for (char c : name) {
    if (!(absl::ascii_islower(static_cast<unsigned char>(c)) || absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
          c == '_' || c == '.')) {
      return false;
    }
  }
  return name.back() != '.';
}

}  // namespace

const std::vector<std::string>& MetricSetNames() {
  static const auto* names = new std::vector<std::string>{"sol", "occupancy", "stalls", "roofline"};
  return *names;
}

std::vector<std::string> MetricSet(std::string_view set) {
  using namespace metric;
  if (set == "sol") {
    return Names({kDuration, kSmThroughputPct, kMemoryThroughputPct, kDramThroughputPct, kL2ThroughputPct,
                  kL1ThroughputPct, kSmFrequency, kDramFrequency, kElapsedCycles});
  }
  if (set == "occupancy") return Names({kAchievedOccupancyPct, kAchievedActiveWarps});
  if (set == "stalls") {
    std::vector<std::string> out = Names({kWarpCyclesPerIssue});
    for (std::string_view reason : kStallReasons) out.push_back(StallMetric(reason));
    return out;
  }
  if (set == "roofline") {
    return Names({kDuration, kDramBytes, kFadd, kFmul, kFfma, kDadd, kDmul, kDfma, kHadd, kHmul, kHfma,
                  kTensorPipePct, kTensorFp16, kTensorBf16, kTensorTf32, kTensorFp8});
  }
  return {};
}

absl::StatusOr<std::vector<std::string>> ExpandMetricList(std::string_view list) {
  std::vector<std::string> out;
  auto add = [&out](std::string name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  };
  for (absl::string_view raw : absl::StrSplit(absl::string_view(list.data(), list.size()), ',')) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    const std::string_view entry(stripped.data(), stripped.size());
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("empty entry in metric list \"", std::string(list), "\""));
    }
    std::vector<std::string> set = MetricSet(entry);
    if (!set.empty()) {
      for (std::string& m : set) add(std::move(m));
    } else if (LooksLikeMetricName(entry)) {
      add(std::string(entry));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("\"", std::string(entry),
                                                     "\" is neither a metric set (sol, occupancy, stalls, roofline) "
                                                     "nor a metric name such as sm__throughput.avg.pct_of_peak_"
                                                     "sustained_elapsed"));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("the metric list is empty");
  return out;
}

}  // namespace cuscope::core
