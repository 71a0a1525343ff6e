// What a rule reports: a verdict with the evidence behind it.
#ifndef CUSCOPE_LIB_ANALYSIS_FINDING_H_
#define CUSCOPE_LIB_ANALYSIS_FINDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/analysis/thresholds.h"

namespace cuscope::analysis {

enum class Severity : int { kInfo = 1, kWarning = 2, kError = 3 };
std::string_view SeverityName(Severity severity);
std::optional<Severity> ParseSeverity(std::string_view name);

struct Number {
  std::string key;
  double value = 0;
  std::string unit;  // "ns", "%", "count", "bytes", "1/s"
};

struct Span {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string label;
};

// A kernel, API call, thread, NVTX range or stream that contributes most to a finding.
struct Offender {
  std::string kind;  // "kernel", "api", "thread", "nvtx", "stream", "cause"
  std::string name;
  uint64_t count = 0;
  uint64_t time_ns = 0;
};

struct Finding {
  std::string rule_id;
  Severity severity = Severity::kInfo;
  std::string headline;
  std::vector<Number> numbers;
  std::vector<Span> spans;
  std::vector<Offender> offenders;
  std::string recommendation;
  uint64_t recoverable_ns = 0;

  void Add(std::string key, double value, std::string unit) {
    numbers.push_back(Number{std::move(key), value, std::move(unit)});
  }
  // The value of a number by key; nullopt when the finding has none by that name.
  std::optional<double> number(std::string_view key) const;
};

// The severity a finding earns from the time it could recover, relative to the analyzed span;
// below `min_recoverable_ms` in absolute terms it is info whatever the share.
Severity SeverityFor(uint64_t recoverable_ns, uint64_t span_ns, const Thresholds& thresholds);

// Accumulates offenders by name and hands back the top N by time (count breaks ties).
class OffenderTally {
 public:
  explicit OffenderTally(std::string kind) : kind_(std::move(kind)) {}
  void Add(std::string_view name, uint64_t time_ns, uint64_t count = 1);
  std::vector<Offender> Top(size_t n) const;
  bool empty() const { return totals_.empty(); }

 private:
  std::string kind_;
  absl::flat_hash_map<std::string, std::pair<uint64_t, uint64_t>> totals_;  // name -> (count, time)
};

// "1.234 ms", "56.7 µs": durations the way a reader scans them.
std::string FormatDuration(uint64_t ns);
std::string FormatBytes(uint64_t bytes);
std::string FormatPercent(double share);  // 0.123 -> "12.3%"
// A double as a count of ns or bytes: 0 for negative or NaN, saturated at the top (a cast of an
// out-of-range double is undefined, and metric values come from the file).
uint64_t ClampToU64(double value);
// A value with an SI prefix and its unit: 1.234e12, "FLOP/s" -> "1.23 TFLOP/s".
std::string FormatSi(double value, std::string_view unit);
// Items joined with ", " after `first`, in lines no wider than 120 columns, each further line
// starting with `indent`; ends with a newline.
std::string WrapItems(const std::vector<std::string>& items, const std::string& first, const std::string& indent);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_FINDING_H_
