#include "lib/report/diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "lib/analysis/finding.h"
#include "lib/report/json_writer.h"

namespace cuscope::report {
namespace {

using analysis::FormatDuration;
using analysis::FormatPercent;

std::string Duration(double ns) { return FormatDuration(analysis::ClampToU64(ns)); }

// "-1.234 ms" / "+56.7 us": a signed duration.
std::string SignedDuration(double ns) { return absl::StrCat(ns < 0 ? "-" : "+", Duration(std::fabs(ns))); }

std::string SignedPercent(double fraction) { return absl::StrFormat("%+.1f%%", 100.0 * fraction); }

// A figure as text: a duration, or a share as a percentage; "mean ± stddev (n runs)" for several.
std::string Figure(const Comparison& c, const SideStats& s) {
  const auto one = [&](double v) { return c.unit == "ns" ? Duration(v) : FormatPercent(v); };
  if (s.n() <= 1) return one(s.mean);
  return absl::StrCat(one(s.mean), " ± ", one(s.stddev));
}

std::string Change(const Comparison& c) {
  if (c.unit == "ratio") return absl::StrFormat("%+.1f pts", 100.0 * c.change);
  std::string out = SignedDuration(c.change);
  if (c.relative) absl::StrAppend(&out, " (", SignedPercent(*c.relative), ")");
  return out;
}

std::string SeverityText(const std::optional<analysis::Severity>& s) {
  return s ? std::string(analysis::SeverityName(*s)) : std::string("-");
}

// Pads or cuts `s` to `width` display columns (UTF-8 aware enough for names and "±").
std::string Cell(std::string_view s, size_t width, bool right) {
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xc0) != 0x80;
  std::string text(s);
  if (columns > width) {
    // Cut on a character boundary and mark the cut.
    size_t keep = 0, seen = 0;
    while (keep < text.size() && seen < width - 1) {
      ++keep;
      while (keep < text.size() && (static_cast<unsigned char>(text[keep]) & 0xc0) == 0x80) ++keep;
      ++seen;
    }
    text = absl::StrCat(text.substr(0, keep), "~");
    columns = width;
  }
  const std::string pad(width - columns, ' ');
  return right ? pad + text : text + pad;
}

}  // namespace

SideStats StatsOf(std::vector<double> values) {
  SideStats s;
  s.values = std::move(values);
  if (s.values.empty()) return s;
  const double n = static_cast<double>(s.values.size());
  s.mean = std::accumulate(s.values.begin(), s.values.end(), 0.0) / n;
  s.min = *std::min_element(s.values.begin(), s.values.end());
  s.max = *std::max_element(s.values.begin(), s.values.end());
  if (s.values.size() > 1) {
    double squares = 0;
    for (double v : s.values) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / (n - 1));
  }
  return s;
}

double TCritical95(double df) {
  // Two-sided 95% quantiles of Student's t (0.975 one-sided) for df 1..30, then 40, 60, 120, inf.
  static constexpr double kSmall[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (!(df >= 1)) return kSmall[0];
  if (df < 31) return kSmall[static_cast<int>(df) - 1];
  if (df < 40) return 2.042;
  if (df < 60) return 2.021;
  if (df < 120) return 2.000;
  if (std::isinf(df)) return 1.960;
  return 1.980;
}

Comparison Compare(std::string name, std::string unit, std::vector<double> base, std::vector<double> next,
                   const DiffOptions& options) {
  Comparison c;
  c.name = std::move(name);
  c.unit = std::move(unit);
  c.base = StatsOf(std::move(base));
  c.next = StatsOf(std::move(next));
  c.change = c.next.mean - c.base.mean;
  if (c.base.mean != 0) c.relative = c.change / c.base.mean;
  c.noise_test = c.base.n() >= 2 && c.next.n() >= 2;
  if (c.noise_test) {
    const double a = c.base.stddev * c.base.stddev / static_cast<double>(c.base.n());
    const double b = c.next.stddev * c.next.stddev / static_cast<double>(c.next.n());
    const double se = std::sqrt(a + b);
    if (se > 0) {
      c.t_statistic = std::fabs(c.change) / se;
      const double denominator =
          a * a / static_cast<double>(c.base.n() - 1) + b * b / static_cast<double>(c.next.n() - 1);
      c.df = denominator > 0 ? (a + b) * (a + b) / denominator : std::numeric_limits<double>::infinity();
    } else {
      // Identical runs on each side: any difference is beyond their (zero) spread.
      c.t_statistic = c.change == 0 ? 0 : std::numeric_limits<double>::infinity();
      c.df = std::numeric_limits<double>::infinity();
    }
    c.t_critical = TCritical95(c.df);
    c.significant = *c.t_statistic > c.t_critical;
  } else {
    c.significant = c.relative ? std::fabs(*c.relative) >= options.min_change : c.change != 0;
  }
  return c;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kHelped:
      return "helped";
    case Verdict::kWorse:
      return "worse";
    case Verdict::kNoChange:
      return "no-change";
    case Verdict::kWithinNoise:
      return "within-noise";
    case Verdict::kNotComparable:
      return "not-comparable";
  }
  return "not-comparable";
}

std::string SpanPhrase(const DiffOptions& options) {
  switch (options.span) {
    case DiffSpan::kAll:
      return "end to end";
    case DiffSpan::kNvtx:
      return absl::StrCat("per NVTX range \"", options.nvtx_range, "\"");
    case DiffSpan::kSteady:
      break;
  }
  return "in steady state";
}

// "; its ranges: step (400x), forward (400x), ..." (the most frequent ten), or that it has none.
std::string RangesThere(const std::vector<RunFigures>& runs) {
  absl::flat_hash_map<std::string, uint64_t> counts;
  for (const RunFigures& r : runs) {
    for (const auto& [name, figure] : r.nvtx) {
      if (figure.count > 0) counts[name] += figure.count;
    }
  }
  if (counts.empty()) return "; it has no NVTX ranges";
  std::vector<std::pair<std::string, uint64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> shown;
  for (size_t i = 0; i < sorted.size() && i < 10; ++i) {
    shown.push_back(absl::StrCat("\"", sorted[i].first, "\" (", sorted[i].second, "x)"));
  }
  return absl::StrCat("; its ranges: ", absl::StrJoin(shown, ", "), sorted.size() > 10 ? ", ..." : "");
}

namespace {

std::vector<double> ValuesOf(const std::vector<RunFigures>& runs,
                             const std::function<double(const RunFigures&)>& field) {
  std::vector<double> out;
  for (const RunFigures& r : runs) out.push_back(field(r));
  return out;
}

// The compared time (steady state, end to end, or the mean length of an NVTX range), the busy
// share over the same span (an NVTX range's mean length has no span of its own: the whole run's
// share then), the kernel time and the GPU's active time, each side against the other.
void CompareTimes(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next, const DiffOptions& options,
                  DiffResult& d) {
  const auto e2e = [&options](const RunFigures& r) {
    switch (options.span) {
      case DiffSpan::kAll:
        return static_cast<double>(r.end_to_end_ns);
      case DiffSpan::kNvtx: {
        auto it = r.nvtx.find(options.nvtx_range);
        return it == r.nvtx.end() || it->second.count == 0
                   ? 0.0
                   : static_cast<double>(it->second.total_ns) / static_cast<double>(it->second.count);
      }
      case DiffSpan::kSteady:
        break;
    }
    return static_cast<double>(r.steady_ns);
  };
  const char* compared_name = options.span == DiffSpan::kAll    ? "end_to_end"
                              : options.span == DiffSpan::kNvtx ? "nvtx_range"
                                                                : "steady_state";
  const auto busy = [&options](const RunFigures& r) {
    return options.span == DiffSpan::kSteady ? r.steady_gpu_busy_share : r.gpu_busy_share;
  };
  const auto ktime = [](const RunFigures& r) { return static_cast<double>(r.kernel_time_ns); };
  const auto active = [&options](const RunFigures& r) {
    return static_cast<double>(options.span == DiffSpan::kSteady ? r.steady_gpu_active_ns : r.gpu_active_ns);
  };
  d.end_to_end = Compare(compared_name, "ns", ValuesOf(base, e2e), ValuesOf(next, e2e), options);
  d.gpu_busy = Compare("gpu_busy", "ratio", ValuesOf(base, busy), ValuesOf(next, busy), options);
  d.kernel_time = Compare("kernel_time", "ns", ValuesOf(base, ktime), ValuesOf(next, ktime), options);
  d.base_gpu_active = StatsOf(ValuesOf(base, active));
  d.new_gpu_active = StatsOf(ValuesOf(next, active));
}

// Kernels by name: means over each side's runs (a run without the kernel counts as 0), the one
// with the most time on either side first.
std::vector<KernelDelta> KernelDeltas(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next) {
  std::map<std::string, KernelDelta> kernels;
  const auto add_kernels = [&kernels](const std::vector<RunFigures>& runs, bool is_base) {
    const double n = static_cast<double>(std::max<size_t>(runs.size(), 1));
    for (const RunFigures& r : runs) {
      for (const KernelFigure& k : r.kernels) {
        KernelDelta& kd = kernels[k.name];
        kd.name = k.name;
        kd.display_name = k.display_name;
        (is_base ? kd.base_count : kd.new_count) += static_cast<double>(k.count) / n;
        (is_base ? kd.base_total_ns : kd.new_total_ns) += static_cast<double>(k.total_ns) / n;
      }
    }
  };
  add_kernels(base, true);
  add_kernels(next, false);
  std::vector<KernelDelta> out;
  for (auto& [name, kd] : kernels) out.push_back(std::move(kd));
  std::sort(out.begin(), out.end(), [](const KernelDelta& a, const KernelDelta& b) {
    const double ma = std::max(a.base_total_ns, a.new_total_ns), mb = std::max(b.base_total_ns, b.new_total_ns);
    return ma != mb ? ma > mb : a.name < b.name;
  });
  return out;
}

// Findings by rule id, in the order BASE ranks them, then NEW's new ones in NEW's order: resolved
// (BASE only), appeared (NEW only) or persisting.
void FindingDeltas(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next, DiffResult& d) {
  std::vector<FindingDelta> rules;
  absl::flat_hash_map<std::string, size_t> slot;
  const auto add_findings = [&](const std::vector<RunFigures>& runs, bool is_base) {
    for (const RunFigures& r : runs) {
      absl::flat_hash_map<std::string, bool> seen_in_run;
      for (const FindingFigure& f : r.findings) {
        auto [it, inserted] = slot.try_emplace(f.rule_id, rules.size());
        if (inserted) rules.push_back(FindingDelta{f.rule_id, {}, {}, {}, {}, 0, 0});
        FindingDelta& fd = rules[it->second];
        auto& severity = is_base ? fd.base_severity : fd.new_severity;
        severity = severity ? std::max(*severity, f.severity) : f.severity;
        std::string& headline = is_base ? fd.base_headline : fd.new_headline;
        if (headline.empty()) headline = f.headline;
        if (!seen_in_run[f.rule_id]) (is_base ? fd.base_runs : fd.new_runs) += 1;
        seen_in_run[f.rule_id] = true;
      }
    }
  };
  add_findings(base, true);
  add_findings(next, false);
  for (FindingDelta& fd : rules) {
    if (fd.base_runs > 0 && fd.new_runs == 0) {
      d.resolved.push_back(std::move(fd));
    } else if (fd.base_runs == 0) {
      d.appeared.push_back(std::move(fd));
    } else {
      d.persisting.push_back(std::move(fd));
    }
  }
}

// The verdict and its sentence, from the compared time; and the rule that decided it.
void Conclude(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next, const DiffOptions& options,
              DiffResult& d) {
  const Comparison& e = d.end_to_end;
  std::string busy_part =
      absl::StrCat("GPU busy ", FormatPercent(d.gpu_busy.base.mean), " -> ", FormatPercent(d.gpu_busy.next.mean));
  std::string kernel_part =
      absl::StrCat("kernel time ", Duration(d.kernel_time.base.mean), " -> ", Duration(d.kernel_time.next.mean));
  if (d.kernel_time.relative) absl::StrAppend(&kernel_part, " (", SignedPercent(*d.kernel_time.relative), ")");
  const std::string runs_note =
      e.noise_test ? absl::StrCat("means of ", e.base.n(), " and ", e.next.n(), " runs: ") : std::string();
  const std::string times = absl::StrCat("(", runs_note, Duration(e.base.mean), " -> ", Duration(e.next.mean), ")");
  if (base.empty() || next.empty() || e.base.mean <= 0 || e.next.mean <= 0) {
    d.verdict = Verdict::kNotComparable;
    const char* side = e.base.mean <= 0 ? "BASE" : "NEW";
    d.conclusion = options.span == DiffSpan::kNvtx
                       ? absl::StrCat("Not comparable: ", side, " has no NVTX range \"", options.nvtx_range, "\"",
                                      RangesThere(e.base.mean <= 0 ? base : next))
                       : absl::StrCat("Not comparable: ", side, " has no recorded ",
                                      options.span == DiffSpan::kSteady ? "GPU activity (steady-state time 0)"
                                                                        : "activity (end-to-end time 0)");
  } else if (e.significant) {
    const bool faster = e.change < 0;
    d.verdict = faster ? Verdict::kHelped : Verdict::kWorse;
    const double factor = faster ? e.base.mean / e.next.mean : e.next.mean / e.base.mean;
    d.conclusion = absl::StrFormat("NEW is %.2fx %s %s %s", factor, faster ? "faster" : "slower", d.span, times);
    if (e.noise_test) {
      absl::StrAppend(&d.conclusion, absl::StrFormat(", beyond run-to-run noise (Welch's t = %.1f > %.2f)",
                                                     *e.t_statistic, e.t_critical));
    }
    absl::StrAppend(&d.conclusion, "; ", busy_part, "; ", kernel_part);
  } else if (e.noise_test) {
    d.verdict = Verdict::kWithinNoise;
    d.conclusion = absl::StrFormat(
        "No change beyond run-to-run noise: %s %s -> %s (%s), Welch's t = %.2f, needs > %.2f; %s; %s", d.span,
        Figure(e, e.base), Figure(e, e.next), e.relative ? SignedPercent(*e.relative) : "", *e.t_statistic,
        e.t_critical, busy_part, kernel_part);
  } else {
    d.verdict = Verdict::kNoChange;
    d.conclusion = absl::StrFormat(
        "No clear change: %s %s -> %s (%s), under the %.0f%% one run per side cannot tell from noise "
        "(give 2 or more runs per side for a noise test); %s; %s",
        d.span, Duration(e.base.mean), Duration(e.next.mean), e.relative ? SignedPercent(*e.relative) : "",
        100.0 * options.min_change, busy_part, kernel_part);
  }
  if (e.noise_test) {
    d.rule = absl::StrFormat(
        "%d BASE and %d NEW runs: the difference of the mean times %s counts when Welch's t-test rejects "
        "equal means at 95%% (two-sided): |mean NEW - mean BASE| > t_crit(df) x sqrt(s_BASE^2/n_BASE + "
        "s_NEW^2/n_NEW), s the sample standard deviation within each side",
        e.base.n(), e.next.n(), d.span);
  } else {
    d.rule = absl::StrFormat(
        "one run on %s: a change of the time %s of at least %.0f%% of BASE counts; smaller ones cannot "
        "be told from run-to-run noise (give 2 or more runs per side for a noise test)",
        e.base.n() <= 1 && e.next.n() <= 1 ? "each side" : "one side", d.span, 100.0 * options.min_change);
  }
}

}  // namespace

DiffResult DiffRuns(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next,
                    const DiffOptions& options) {
  DiffResult d;
  for (const RunFigures& r : base) d.base_labels.push_back(r.label);
  for (const RunFigures& r : next) d.new_labels.push_back(r.label);
  d.span = SpanPhrase(options);
  CompareTimes(base, next, options, d);
  d.kernels = KernelDeltas(base, next);
  FindingDeltas(base, next, d);
  Conclude(base, next, options, d);
  return d;
}

std::string RenderDiffText(const DiffResult& d, size_t top_kernels, core::KernelNameStyle names) {
  std::string out = absl::StrCat("cuscope diff\n  BASE: ", absl::StrJoin(d.base_labels, ", "),
                                 "\n  NEW:  ", absl::StrJoin(d.new_labels, ", "), "\n\n");
  absl::StrAppend(&out, "Verdict: ", d.conclusion, "\n");
  absl::StrAppend(&out, "Rule: ", d.rule, "\n");
  if (d.end_to_end.name == "steady_state") {
    absl::StrAppend(&out, "Compared: steady state, from the end of start-up (the first 1% of each GPU's operations) "
                          "to the last GPU operation, less metric collection (gpu.idle's steady state); --span all "
                          "compares first to last activity, --nvtx RANGE a range's mean length\n");
  }
  absl::StrAppend(&out, "\n");

  const bool several = d.end_to_end.noise_test;
  absl::StrAppend(&out, Cell("", 14, false), "  ", Cell("BASE", 24, true), "  ", Cell("NEW", 24, true), "  ",
                  Cell("change", 24, true), several ? "  beyond noise" : "", "\n");
  for (const Comparison* c : {&d.end_to_end, &d.gpu_busy, &d.kernel_time}) {
    const std::string label = c->name == "end_to_end"     ? "end to end"
                              : c->name == "steady_state" ? "steady state"
                              : c->name == "nvtx_range"   ? "NVTX range"
                              : c->name == "gpu_busy" ? "GPU busy"
                                                      : "kernel time";
    std::string noise;
    if (several) {
      noise = absl::StrFormat("  %s (t = %.2f, needs > %.2f)", c->significant ? "yes" : "no",
                              c->t_statistic.value_or(0), c->t_critical);
    }
    absl::StrAppend(&out, Cell(label, 14, false), "  ", Cell(Figure(*c, c->base), 24, true), "  ",
                    Cell(Figure(*c, c->next), 24, true), "  ", Cell(Change(*c), 24, true), noise, "\n");
  }
  Comparison active_view;
  active_view.unit = "ns";
  absl::StrAppend(&out, Cell("GPU active", 14, false), "  ", Cell(Figure(active_view, d.base_gpu_active), 24, true),
                  "  ", Cell(Figure(active_view, d.new_gpu_active), 24, true), "\n");
  if (several) {
    absl::StrAppend(&out, "(runs: BASE ", d.end_to_end.base.n(), ", NEW ", d.end_to_end.next.n(),
                    "; figures are mean ± sample standard deviation)\n");
  }

  const auto finding_lines = [&](const char* title, const std::vector<FindingDelta>& list, bool use_new) {
    absl::StrAppend(&out, "\n", title, list.empty() ? " none\n" : "\n");
    for (const FindingDelta& f : list) {
      absl::StrAppend(&out, "  ", f.rule_id, " [", SeverityText(f.base_severity), " -> ", SeverityText(f.new_severity),
                      "]: ", use_new ? f.new_headline : f.base_headline, "\n");
    }
  };
  finding_lines("Findings resolved (raised for BASE, not for NEW):", d.resolved, false);
  finding_lines("Findings new (raised for NEW, not for BASE):", d.appeared, true);
  finding_lines("Findings in both:", d.persisting, true);

  const size_t shown = top_kernels == 0 ? d.kernels.size() : std::min(top_kernels, d.kernels.size());
  absl::StrAppend(&out, "\nKernel time by kernel", several ? " (means per run)" : "", ", ", shown, " of ",
                  d.kernels.size(), " kernels, most time first:\n");
  absl::StrAppend(&out, Cell("BASE count", 11, true), Cell("avg", 12, true), Cell("total", 13, true),
                  Cell("NEW count", 11, true), Cell("avg", 12, true), Cell("total", 13, true), Cell("change", 14, true),
                  Cell("change %", 10, true), "  kernel\n");
  for (size_t i = 0; i < shown; ++i) {
    const KernelDelta& k = d.kernels[i];
    const auto count = [](double c) {
      return c == std::floor(c) ? absl::StrFormat("%.0f", c) : absl::StrFormat("%.1f", c);
    };
    absl::StrAppend(&out, Cell(count(k.base_count), 11, true),
                    Cell(k.base_count > 0 ? Duration(k.base_avg_ns()) : "-", 12, true),
                    Cell(Duration(k.base_total_ns), 13, true), Cell(count(k.new_count), 11, true),
                    Cell(k.new_count > 0 ? Duration(k.new_avg_ns()) : "-", 12, true),
                    Cell(Duration(k.new_total_ns), 13, true), Cell(SignedDuration(k.change_ns()), 14, true),
                    Cell(k.change_relative() ? SignedPercent(*k.change_relative()) : "new", 10, true), "  ",
                    absl::StripTrailingAsciiWhitespace(Cell(core::KernelDisplayName(k.name, names), 60, false)), "\n");
  }
  if (shown < d.kernels.size()) absl::StrAppend(&out, "... ", d.kernels.size() - shown, " more kernels\n");
  return core::RenameKernelNamesIn(out, names);  // the findings' headlines name kernels too
}

std::string RenderDiffJson(const DiffResult& d) {
  JsonWriter w;
  const auto stats = [&](const SideStats& s) {
    w.BeginObject().Key("values").BeginArray();
    for (double v : s.values) w.Number(v);
    w.EndArray().Field("mean", s.mean).Field("stddev", s.stddev).Field("min", s.min).Field("max", s.max);
    w.Field("runs", static_cast<uint64_t>(s.n())).EndObject();
  };
  const auto comparison = [&](const Comparison& c) {
    w.Key(c.name).BeginObject().Field("unit", c.unit).Key("base");
    stats(c.base);
    w.Key("new");
    stats(c.next);
    w.Field("change", c.change).Key("relative_change");
    c.relative ? w.Number(*c.relative) : w.Null();
    w.Field("noise_test", c.noise_test);
    if (c.noise_test) {
      w.Key("t_statistic").Number(c.t_statistic.value_or(0)).Field("t_critical", c.t_critical);
      w.Key("df").Number(c.df);
    }
    w.Field("significant", c.significant).EndObject();
  };
  const auto findings = [&](const char* key, const std::vector<FindingDelta>& list) {
    w.Key(key).BeginArray();
    for (const FindingDelta& f : list) {
      w.BeginObject().Field("rule_id", f.rule_id).Field("base_severity", SeverityText(f.base_severity));
      w.Field("new_severity", SeverityText(f.new_severity)).Field("base_headline", f.base_headline);
      w.Field("new_headline", f.new_headline).Field("base_runs", static_cast<uint64_t>(f.base_runs));
      w.Field("new_runs", static_cast<uint64_t>(f.new_runs)).EndObject();
    }
    w.EndArray();
  };
  w.BeginObject().Key("base").BeginArray();
  for (const std::string& l : d.base_labels) w.String(l);
  w.EndArray().Key("new").BeginArray();
  for (const std::string& l : d.new_labels) w.String(l);
  w.EndArray().Field("verdict", VerdictName(d.verdict)).Field("conclusion", d.conclusion).Field("rule", d.rule);
  w.Field("span", d.span);
  comparison(d.end_to_end);
  comparison(d.gpu_busy);
  comparison(d.kernel_time);
  w.Key("gpu_active_ns").BeginObject().Key("base");
  stats(d.base_gpu_active);
  w.Key("new");
  stats(d.new_gpu_active);
  w.EndObject();
  findings("findings_resolved", d.resolved);
  findings("findings_new", d.appeared);
  findings("findings_persisting", d.persisting);
  w.Key("kernels").BeginArray();
  for (const KernelDelta& k : d.kernels) {
    w.BeginObject().Field("name", k.name).Field("display_name", k.display_name);
    w.Field("base_count", k.base_count).Field("base_avg_ns", k.base_avg_ns()).Field("base_total_ns", k.base_total_ns);
    w.Field("new_count", k.new_count).Field("new_avg_ns", k.new_avg_ns()).Field("new_total_ns", k.new_total_ns);
    w.Field("change_ns", k.change_ns()).Key("change_relative");
    k.change_relative() ? w.Number(*k.change_relative()) : w.Null();
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace cuscope::report
