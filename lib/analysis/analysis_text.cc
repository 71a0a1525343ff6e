#include "lib/analysis/analysis_text.h"

#include <algorithm>
#include <cinttypes>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/core/terminal_text.h"

namespace cuscope::analysis {
namespace {

std::string FormatNumber(const Number& n) {
  if (n.unit == "ns") return FormatDuration(ClampToU64(n.value));
  if (n.unit == "ratio") return FormatPercent(n.value);
  if (n.unit == "bytes") return FormatBytes(ClampToU64(n.value));
  if (n.unit == "1/s") return absl::StrFormat("%.0f/s", n.value);
  if (n.unit == "%") return absl::StrFormat("%.1f%%", n.value);
  if (n.unit == "FLOP/s" || n.unit == "Hz") return FormatSi(n.value, n.unit);
  if (n.unit == "FLOP/B") return absl::StrFormat("%.3g FLOP/B", n.value);
  if (n.unit == "cycles/inst" || n.unit == "waves") return absl::StrFormat("%.2f", n.value);
  if (n.unit == "warps") return absl::StrFormat("%.1f", n.value);
  if (n.unit.empty()) return absl::StrFormat("%g", n.value);
  return absl::StrFormat("%.0f", n.value);
}

// The kernel-internals section: each profiled kernel's verdict and the evidence, in a few lines.
// In a top-down trace the hot kernels' verdicts are in the top-down section; this one then lists
// only the profiled kernels that are not among them (none, normally).
std::string RenderKernelInternals(const Analysis& analysis) {
  const KernelInternalsSummary& s = analysis.kernel_internals;
  if (analysis.kernel_verdicts.empty()) return "";
  std::vector<size_t> shown;
  if (analysis.top_down.present) {
    shown = analysis.top_down.other_verdicts;
    if (shown.empty()) return "";
  } else {
    for (size_t i = 0; i < analysis.kernel_verdicts.size(); ++i) shown.push_back(i);
  }
  std::string out;
  if (analysis.top_down.present) {
    out = absl::StrCat("Other profiled kernels (not among the top-down's hot kernels): ", shown.size());
  } else {
    out = absl::StrCat("Kernel internals: ", s.groups, s.groups == 1 ? " profiled kernel, " : " profiled kernels, ",
                       s.profiled_launches, s.profiled_launches == 1 ? " launch" : " launches", " profiled");
    if (s.kernel_time_ns > 0) {
      const double total = static_cast<double>(s.kernel_time_ns);
      absl::StrAppend(&out, "; they take ", FormatPercent(static_cast<double>(s.profiled_time_ns) / total),
                      " of GPU kernel time");
      std::vector<std::string> parts;
      for (int b = 0; b < kBottleneckCount; ++b) {
        if (s.time_by_bottleneck[b] == 0) continue;
        parts.push_back(absl::StrCat(FormatPercent(static_cast<double>(s.time_by_bottleneck[b]) / total), " ",
                                     std::string(BottleneckName(static_cast<Bottleneck>(b)))));
      }
      if (!parts.empty()) absl::StrAppend(&out, " (", absl::StrJoin(parts, ", "), ")");
    }
  }
  out += ":\n\n";
  int rank = 0;
  for (size_t i : shown) {
    const KernelVerdict& v = analysis.kernel_verdicts[i];
    absl::StrAppend(&out, "  ", ++rank, ". ", v.Label(), ": ", std::string(BottleneckName(v.bottleneck)), " (",
                    FormatDuration(v.gpu_time_ns), ", ", FormatPercent(v.kernel_time_share), " of kernel time, ",
                    v.profiled_launches, v.profiled_launches == 1 ? " launch" : " launches", " profiled)\n");
    out += RenderVerdictDetails(v, "     ");
    out += "\n";
  }
  return out;
}

}  // namespace

std::string FormatSinceStart(uint64_t time, uint64_t origin) {
  const bool before = time < origin;
  const uint64_t ns = before ? origin - time : time - origin;
  return absl::StrFormat("%c%" PRIu64 ".%06" PRIu64 " ms", before ? '-' : '+', ns / 1'000'000, ns % 1'000'000);
}

std::string RenderFindingText(const Finding& f, int rank, uint64_t origin) {
  const auto esc = [](std::string_view text) { return core::EscapeForTerminal(text); };
  std::string out;
  absl::StrAppend(&out, rank, ". [", std::string(SeverityName(f.severity)), "] ", f.rule_id, ": ", esc(f.headline),
                  "\n");
  if (f.recoverable_ns > 0) absl::StrAppend(&out, "   could recover: up to ", FormatDuration(f.recoverable_ns), "\n");
  std::string numbers;
  std::vector<std::string> metrics;  // PerfWorks counter values: many, so wrapped
  for (const Number& n : f.numbers) {
    if (n.unit == "id") continue;
    if (n.key.find("__") != std::string::npos) {
      metrics.push_back(absl::StrCat(esc(n.key), "=", FormatNumber(n)));
      continue;
    }
    absl::StrAppend(&numbers, numbers.empty() ? "" : ", ", esc(n.key), "=", FormatNumber(n));
  }
  if (!numbers.empty()) absl::StrAppend(&out, "   numbers: ", numbers, "\n");
  if (!metrics.empty()) out += WrapItems(metrics, "   metrics: ", "     ");
  for (const Offender& o : f.offenders) {
    absl::StrAppend(&out, "   ", o.kind, ": ", esc(o.name), " (");
    if (o.count > 0) absl::StrAppend(&out, o.count, "x, ");
    absl::StrAppend(&out, FormatDuration(o.time_ns), ")\n");
  }
  for (const Span& sp : f.spans) {
    if (origin == 0) {
      absl::StrAppend(&out, "   span: ", esc(sp.label), " [", sp.begin, " .. ", sp.end, "] ns (",
                      FormatDuration(sp.end > sp.begin ? sp.end - sp.begin : 0), ")\n");
    } else {
      absl::StrAppend(&out, "   span: ", esc(sp.label), " [", FormatSinceStart(sp.begin, origin), " .. ",
                      FormatSinceStart(sp.end, origin), "] from the session start (",
                      FormatDuration(sp.end > sp.begin ? sp.end - sp.begin : 0), ")\n");
    }
  }
  absl::StrAppend(&out, "   advice: ", esc(f.recommendation), "\n\n");
  return out;
}

std::string RenderAnalysisText(const Analysis& analysis, const std::string& trace_path, size_t top_rows,
                               core::KernelNameStyle names) {
  const v1::TraceSummary& s = analysis.summary;
  // Names in findings come from the trace: each is escaped for the terminal where it is put in
  // (the CLI escapes the whole text once more, for the sections rendered elsewhere).
  const auto esc = [](std::string_view text) { return core::EscapeForTerminal(text); };
  std::string out = absl::StrCat("cuscope analyze ", esc(trace_path), ": ", s.records(), " records, ", s.kernels(),
                                 " kernels, ", s.memcpys(), " copies, ", s.api_calls(), " API calls over ",
                                 FormatDuration(s.span_ns()));
  // Kernels recorded outside the timeline window: say which figures count which.
  const Baseline& b = analysis.baseline;
  if (b.windows_recorded && b.kernels != s.kernels()) {
    absl::StrAppend(&out, " in the whole trace; ", b.kernels, " of the kernels (", FormatDuration(b.kernel_ns),
                    " of kernel time) ran in the timeline window: the baseline, the GPU lines and the top-down count "
                    "the window, the findings and the tables the whole trace");
  }
  out += "\n";
  // A monitor run keeps figures, not records: its baseline is the monitor table, not a timeline.
  const bool monitor_only = s.kernels() == 0 && s.api_calls() == 0 &&
                            std::any_of(analysis.tables.begin(), analysis.tables.end(),
                                        [](const Table& t) { return t.name == "monitor_sum"; });
  out += monitor_only ? std::string("Baseline: a monitor run, figures per interval instead of records "
                                    "(monitor_sum and monitor_kern_sum below)\n")
                      : RenderBaselineText(analysis.baseline);
  for (const std::string& w : analysis.warnings) absl::StrAppend(&out, "warning: ", esc(w), "\n");
  for (const v1::DeviceSummary& d : s.devices()) {
    const uint64_t metrics_ns = std::min(d.active_ns(), d.metrics_collection_ns());
    const uint64_t unobserved_ns = std::min(d.active_ns() - metrics_ns, analysis.baseline.UnobservedNs(d.device()));
    absl::StrAppend(&out, "GPU ", d.device(), ": busy ", FormatPercent(d.busy_share()), " of its active ",
                    FormatDuration(d.counted_active_ns()));
    if (metrics_ns > 0) absl::StrAppend(&out, " (without ", FormatDuration(metrics_ns), " of metric collection)");
    if (unobserved_ns > 0) {
      absl::StrAppend(&out, " (without ", FormatDuration(unobserved_ns), " outside the capture windows)");
    }
    if (d.replayed_busy_ns() > 0) {
      absl::StrAppend(&out, " (", FormatDuration(d.replayed_busy_ns()), " of kernels replayed for metrics counted busy)");
    }
    // The kernels and kernel time of the baseline's window, so that the two lines agree; what ran
    // outside it (a deep launch queue draining after the window closed) apart.
    const DeviceBaseline* window = analysis.baseline.Device(d.device());
    if (window == nullptr) {
      absl::StrAppend(&out, " (", d.kernels(), " kernels, ", FormatDuration(d.kernel_time_ns()), " kernel time)\n");
    } else if (window->kernel_ns_outside == 0 && window->kernels_outside == 0) {
      absl::StrAppend(&out, " (", window->kernels, " kernels, ", FormatDuration(window->kernel_ns), " kernel time)\n");
    } else {
      absl::StrAppend(&out, " (", window->kernels, " kernels, ", FormatDuration(window->kernel_ns),
                      " kernel time in the window; outside it ", window->kernels_outside, " more kernels and ",
                      FormatDuration(window->kernel_ns_outside), " of kernel time)\n");
    }
  }
  out += "\n";
  if (analysis.healthy()) {
    absl::StrAppend(&out, "Nothing wrong found: no rule raised a warning or an error.\n");
    if (s.devices_size() == 0 && !monitor_only) absl::StrAppend(&out, "(the trace holds no GPU work)\n");
  }
  // The kernel-internals section (in a top-down trace, the top-down's hot kernels and their verdicts
  // first) goes under the hot-kernel list: after that finding, or after all findings when there is
  // none.
  const std::string internals =
      RenderTopDownText(analysis.top_down, analysis.kernel_verdicts) + RenderKernelInternals(analysis);
  bool internals_shown = internals.empty();
  if (!analysis.findings.empty()) {
    absl::StrAppend(&out, "Findings (most severe and most costly first):\n\n");
    int rank = 0;
    for (const Finding& f : analysis.findings) {
      out += RenderFindingText(f, ++rank, s.session_start_ns());
      if (f.rule_id == "hot.kernels" && !internals_shown) {
        out += internals;
        internals_shown = true;
      }
    }
  }
  if (!internals_shown) out += internals;
  out += RenderGpuCountersText(analysis.gpu_counters);
  for (const Table& t : analysis.tables) absl::StrAppend(&out, RenderText(WithKernelNames(t, names), top_rows), "\n");
  // The tables' names are shown already (their columns sized to them); these are the findings'.
  return core::RenameKernelNamesIn(out, names);
}

}  // namespace cuscope::analysis
