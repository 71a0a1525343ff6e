#include "lib/core/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/core/metric_sets.h"

extern char** environ;

namespace cuscope::core {
namespace {

absl::Status Bad(const std::string& name, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(name, "=", value, ": ", why));
}

absl::StatusOr<bool> ParseBool(const std::string& name, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Bad(name, v, "expected 1/0, true/false, yes/no or on/off");
}

// Sizes accept a plain byte count or a K/M/G suffix (powers of 1024).
absl::StatusOr<uint64_t> ParseSize(const std::string& name, const std::string& v) {
  if (v.empty()) return Bad(name, v, "expected a size such as 4M");
  uint64_t mult = 1;
  std::string digits = v;
  switch (v.back()) {
    case 'K': case 'k': mult = 1ull << 10; digits.pop_back(); break;
    case 'M': case 'm': mult = 1ull << 20; digits.pop_back(); break;
    case 'G': case 'g': mult = 1ull << 30; digits.pop_back(); break;
    default: break;
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n == 0 || n > (1ull << 40) / mult) {
    return Bad(name, v, "expected a positive size such as 4M");
  }
  return n * mult;
}

absl::StatusOr<double> ParseSeconds(const std::string& name, const std::string& v) {
  double d = 0;
  if (!absl::SimpleAtod(v, &d) || !(d >= 0) || d > 1e7) return Bad(name, v, "expected seconds >= 0");
  return d;
}

absl::StatusOr<uint64_t> ParseCount(const std::string& name, const std::string& v) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n)) return Bad(name, v, "expected a whole number >= 0");
  return n;
}

}  // namespace

bool Config::kind_enabled(const std::string& kind) const {
  return std::find(activity_kinds.begin(), activity_kinds.end(), kind) != activity_kinds.end();
}

absl::StatusOr<std::vector<std::string>> ParseActivityKinds(const std::string& list) {
  std::vector<std::string> kinds;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    std::string k(part);
    if (k == "all") {
      kinds.assign(std::begin(kActivityKindNames), std::end(kActivityKindNames));
      continue;
    }
    if (std::find(std::begin(kActivityKindNames), std::end(kActivityKindNames), k) == std::end(kActivityKindNames)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown activity kind '", k, "' (known: ",
                                                     absl::StrJoin(kActivityKindNames, ","), ", all)"));
    }
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  if (kinds.empty()) return absl::InvalidArgumentError("no activity kind given");
  return kinds;
}

absl::StatusOr<Config> ParseConfigFromEnvironment(const std::vector<std::pair<std::string, std::string>>& env) {
  Config c;
  for (const auto& [name, value] : env) {
    if (name.rfind("CUSCOPE_", 0) != 0) continue;
    c.settings[name] = value;
    if (name == "CUSCOPE_OUTPUT") {
      if (value.empty()) return Bad(name, value, "expected a file name");
      c.output = value;
    } else if (name == "CUSCOPE_FORCE_OVERWRITE") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.force_overwrite = *b;
    } else if (name == "CUSCOPE_KINDS") {
      auto k = ParseActivityKinds(value);
      if (!k.ok()) return Bad(name, value, std::string(k.status().message()));
      c.activity_kinds = *k;
    } else if (name == "CUSCOPE_BUFFER_SIZE") {
      auto s = ParseSize(name, value);
      if (!s.ok()) return s.status();
      if (*s < (64u << 10)) return Bad(name, value, "a buffer must be at least 64K");
      c.buffer_bytes = *s;
    } else if (name == "CUSCOPE_BUFFER_POOL_CAP") {
      auto s = ParseSize(name, value);
      if (!s.ok()) return s.status();
      c.buffer_pool_cap_bytes = *s;
    } else if (name == "CUSCOPE_FLUSH_PERIOD_MS") {
      uint32_t ms = 0;
      if (!absl::SimpleAtoi(value, &ms) || ms == 0 || ms > 60000) return Bad(name, value, "expected 1..60000 ms");
      c.flush_period_ms = ms;
    } else if (name == "CUSCOPE_DELAY") {
      auto s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      c.delay_seconds = *s;
    } else if (name == "CUSCOPE_DURATION") {
      auto s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      c.duration_seconds = *s;
    } else if (name == "CUSCOPE_CAPTURE_RANGE") {
      if (value != "none" && value != "cudaProfilerApi") return Bad(name, value, "expected none or cudaProfilerApi");
      c.capture_range = value;
    } else if (name == "CUSCOPE_METRICS") {
      auto m = ExpandMetricList(value);
      if (!m.ok()) return Bad(name, value, std::string(m.status().message()));
      c.metrics = *m;
      c.metrics_request = value;
    } else if (name == "CUSCOPE_KERNEL_NAME") {
      if (value.empty()) return Bad(name, value, "expected a kernel name or regex:PATTERN");
      c.kernel_selection.kernel_name = value;
      if (auto sel = KernelSelector::Create(c.kernel_selection); !sel.ok()) {
        return Bad(name, value, std::string(sel.status().message()));
      }
    } else if (name == "CUSCOPE_LAUNCH_SKIP" || name == "CUSCOPE_LAUNCH_COUNT" || name == "CUSCOPE_PER_KERNEL_COUNT") {
      auto n = ParseCount(name, value);
      if (!n.ok()) return n.status();
      if (name == "CUSCOPE_LAUNCH_SKIP") c.kernel_selection.launch_skip = *n;
      if (name == "CUSCOPE_LAUNCH_COUNT") c.kernel_selection.launch_count = *n;
      if (name == "CUSCOPE_PER_KERNEL_COUNT") c.kernel_selection.per_kernel_count = *n;
    } else if (name == "CUSCOPE_LIBRARY") {
      // Read by `cuscope profile` to find the collector; nothing for the collector itself.
    } else if (name == "CUSCOPE_QUIET") {
      auto b = ParseBool(name, value);
      if (!b.ok()) return b.status();
      c.quiet = *b;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown setting ", name,
                                                     " (known: CUSCOPE_OUTPUT, CUSCOPE_FORCE_OVERWRITE, CUSCOPE_KINDS, "
                                                     "CUSCOPE_BUFFER_SIZE, CUSCOPE_BUFFER_POOL_CAP, "
                                                     "CUSCOPE_FLUSH_PERIOD_MS, CUSCOPE_DELAY, CUSCOPE_DURATION, "
                                                     "CUSCOPE_CAPTURE_RANGE, CUSCOPE_QUIET, CUSCOPE_METRICS, "
                                                     "CUSCOPE_KERNEL_NAME, CUSCOPE_LAUNCH_SKIP, CUSCOPE_LAUNCH_COUNT, "
                                                     "CUSCOPE_PER_KERNEL_COUNT, CUSCOPE_LIBRARY)"));
    }
  }
  if (c.buffer_pool_cap_bytes < c.buffer_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("CUSCOPE_BUFFER_POOL_CAP (", c.buffer_pool_cap_bytes,
                                                   ") is smaller than one buffer (", c.buffer_bytes, ")"));
  }
  const bool selection_given = c.settings.count("CUSCOPE_KERNEL_NAME") || c.settings.count("CUSCOPE_LAUNCH_SKIP") ||
                               c.settings.count("CUSCOPE_LAUNCH_COUNT") || c.settings.count("CUSCOPE_PER_KERNEL_COUNT");
  if (selection_given && c.metrics.empty()) {
    return absl::InvalidArgumentError(
        "a kernel selection (CUSCOPE_KERNEL_NAME, CUSCOPE_LAUNCH_SKIP, CUSCOPE_LAUNCH_COUNT, CUSCOPE_PER_KERNEL_COUNT) "
        "needs CUSCOPE_METRICS: it chooses the launches whose counters are collected");
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> ProcessEnvironment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace cuscope::core
