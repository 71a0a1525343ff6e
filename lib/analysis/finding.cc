#include "lib/analysis/finding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::analysis {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "info";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  if (name == "info") return Severity::kInfo;
  if (name == "warning") return Severity::kWarning;
  if (name == "error") return Severity::kError;
  return std::nullopt;
}

std::optional<double> Finding::number(std::string_view key) const {
  for (const Number& n : numbers) {
    if (n.key == key) return n.value;
  }
  return std::nullopt;
}

Severity SeverityFor(uint64_t recoverable_ns, uint64_t span_ns, const Thresholds& thresholds) {
  if (span_ns == 0) return Severity::kInfo;
  if (static_cast<double>(recoverable_ns) < thresholds.min_recoverable_ms * 1e6) return Severity::kInfo;
  const double share = static_cast<double>(recoverable_ns) / static_cast<double>(span_ns);
  if (share >= thresholds.error_share) return Severity::kError;
  if (share >= thresholds.warning_share) return Severity::kWarning;
  return Severity::kInfo;
}

void OffenderTally::Add(std::string_view name, uint64_t time_ns, uint64_t count) {
  auto& [c, t] = totals_[absl::string_view(name.data(), name.size())];
  c += count;
  t += time_ns;
}

std::vector<Offender> OffenderTally::Top(size_t n) const {
  std::vector<Offender> all;
  all.reserve(totals_.size());
  for (const auto& [name, ct] : totals_) all.push_back(Offender{kind_, name, ct.first, ct.second});
  std::sort(all.begin(), all.end(), [](const Offender& a, const Offender& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  });
  if (all.size() > n) all.resize(n);
  return all;
}

std::string FormatDuration(uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 1000000000ull) return absl::StrFormat("%.3f s", v / 1e9);
  if (ns >= 1000000ull) return absl::StrFormat("%.3f ms", v / 1e6);
  if (ns >= 1000ull) return absl::StrFormat("%.1f us", v / 1e3);
  return absl::StrFormat("%d ns", ns);
}

std::string FormatBytes(uint64_t bytes) {
  const double v = static_cast<double>(bytes);
  if (bytes >= (1ull << 30)) return absl::StrFormat("%.2f GiB", v / (1ull << 30));
  if (bytes >= (1ull << 20)) return absl::StrFormat("%.2f MiB", v / (1ull << 20));
  if (bytes >= (1ull << 10)) return absl::StrFormat("%.1f KiB", v / (1ull << 10));
  return absl::StrFormat("%d B", bytes);
}

std::string FormatPercent(double share) { return absl::StrFormat("%.1f%%", share * 100.0); }

uint64_t ClampToU64(double value) {
  if (!(value > 0)) return 0;
  if (value >= 18446744073709549568.0) return UINT64_MAX;  // the largest double below 2^64
  return static_cast<uint64_t>(value);
}

std::string FormatSi(double value, std::string_view unit) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  const double magnitude = value < 0 ? -value : value;
  for (const auto& [scale, prefix] : kPrefixes) {
    if (magnitude >= scale) return absl::StrFormat("%.3g %s%s", value / scale, prefix, std::string(unit));
  }
  return absl::StrFormat("%.3g %s", value, std::string(unit));
}

std::string WrapItems(const std::vector<std::string>& items, const std::string& first, const std::string& indent) {
  std::string out = first, line;
  for (const std::string& item : items) {
    if (!line.empty() && indent.size() + line.size() + 2 + item.size() > 120) {
      absl::StrAppend(&out, line, ",\n", indent);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : ", ", item);
  }
  absl::StrAppend(&out, line, "\n");
  return out;
}

}  // namespace cuscope::analysis
