// `cuscope diff` as pure functions: compares the key figures (run_figures.h) of one or more runs
// of a baseline (BASE) with those of a changed program (NEW), and says whether the change helped.
//
// The verdict is taken on the end-to-end time (the capture window as recorded):
//   * one run on either side: a change of at least `min_change` (default 2%) of BASE is a change;
//     anything smaller is "no clear change", since one run cannot tell it from noise.
//   * two or more runs on both sides: the difference of the means counts only when it is larger
//     than the run-to-run noise by Welch's t-test at 95% (two-sided): |mean_new - mean_base| >
//     t_crit(df) * sqrt(s_base^2/n_base + s_new^2/n_new), with s the sample standard deviation of
//     each side and df from Welch-Satterthwaite. Otherwise the verdict is "within noise".
// GPU busy share and total kernel time are compared the same way and reported, not judged on.
// Kernels are matched by their (mangled) name, findings by rule id; with several runs a side's
// figures are the means over its runs and a rule belongs to a side when any of its runs raised it.
#ifndef CUSCOPE_LIB_REPORT_DIFF_H_
#define CUSCOPE_LIB_REPORT_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/kernel_names.h"
#include "lib/report/run_figures.h"

namespace cuscope::report {

// Which time the verdict is taken on.
enum class DiffSpan {
  kSteady,  // steady state (RunFigures::steady_ns): start-up left out, the default
  kAll,     // end to end: first to last recorded activity
  kNvtx,    // the mean length of the NVTX ranges named `nvtx_range` (a step, a request)
};

struct DiffOptions {
  // Smallest relative change of the compared time that one run per side counts as a change.
  double min_change = 0.02;
  DiffSpan span = DiffSpan::kSteady;
  std::string nvtx_range;  // for DiffSpan::kNvtx
};

// How the compared time is named in sentences: "in steady state", "end to end",
// "per NVTX range \"step\"".
std::string SpanPhrase(const DiffOptions& options);

// One side's values of a figure: one per run.
struct SideStats {
  std::vector<double> values;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one run
  double min = 0, max = 0;
  size_t n() const { return values.size(); }
};
SideStats StatsOf(std::vector<double> values);

struct Comparison {
  std::string name;  // "end_to_end", "gpu_busy", "kernel_time"
  std::string unit;  // "ns" or "ratio"
  SideStats base, next;
  double change = 0;                  // next.mean - base.mean
  std::optional<double> relative;     // change / base.mean; nullopt when base.mean is 0
  bool noise_test = false;            // both sides have >= 2 runs: Welch's t-test applies
  std::optional<double> t_statistic;  // |change| / standard error (infinite when the error is 0)
  double t_critical = 0;              // what it must reach
  double df = 0;                      // Welch-Satterthwaite degrees of freedom
  // Larger than the noise (noise_test) or at least min_change of BASE (one run).
  bool significant = false;
};

// Two-sided 95% critical value of Student's t for `df` degrees of freedom (rounded down to the
// table's next lower entry, so the test errs towards "within noise"). df < 1 counts as 1.
double TCritical95(double df);
Comparison Compare(std::string name, std::string unit, std::vector<double> base, std::vector<double> next,
                   const DiffOptions& options);

struct KernelDelta {
  std::string name;
  std::string display_name;
  double base_count = 0, base_total_ns = 0;  // means over the side's runs
  double new_count = 0, new_total_ns = 0;
  double base_avg_ns() const { return base_count > 0 ? base_total_ns / base_count : 0; }
  double new_avg_ns() const { return new_count > 0 ? new_total_ns / new_count : 0; }
  double change_ns() const { return new_total_ns - base_total_ns; }
  std::optional<double> change_relative() const {
    return base_total_ns > 0 ? std::optional<double>(change_ns() / base_total_ns) : std::nullopt;
  }
};

struct FindingDelta {
  std::string rule_id;
  std::optional<analysis::Severity> base_severity;  // the most severe over the side's runs
  std::optional<analysis::Severity> new_severity;
  std::string base_headline, new_headline;  // of the first run that raised it
  size_t base_runs = 0, new_runs = 0;       // how many runs of each side raised it
};

enum class Verdict { kHelped, kWorse, kNoChange, kWithinNoise, kNotComparable };
std::string_view VerdictName(Verdict v);  // "helped", "worse", "no-change", "within-noise", "not-comparable"

struct DiffResult {
  std::vector<std::string> base_labels, new_labels;
  // `end_to_end` is the time compared: named "steady_state", "end_to_end" or "nvtx_range" by the
  // span chosen, which `span` says in words ("in steady state", ...).
  Comparison end_to_end, gpu_busy, kernel_time;
  std::string span;
  SideStats base_gpu_active, new_gpu_active;
  std::vector<KernelDelta> kernels;      // largest of (BASE total, NEW total) first
  std::vector<FindingDelta> resolved;    // raised in BASE, not in NEW
  std::vector<FindingDelta> appeared;    // raised in NEW, not in BASE
  std::vector<FindingDelta> persisting;  // in both
  Verdict verdict = Verdict::kNotComparable;
  // One sentence: "NEW is 2.30x faster end to end (...); GPU busy 27.0% -> 96.0%; ...".
  std::string conclusion;
  // The rule the verdict was taken by, in words.
  std::string rule;
};

// Both sides must hold at least one run.
DiffResult DiffRuns(const std::vector<RunFigures>& base, const std::vector<RunFigures>& next,
                    const DiffOptions& options = DiffOptions());

// Text for people: the verdict first, then the figures, the findings and the kernels (top
// `top_kernels` by time; 0 = all).
// Kernel names shown in `names` (short base names by default; the JSON keeps the recorded ones).
std::string RenderDiffText(const DiffResult& diff, size_t top_kernels = 10,
                           core::KernelNameStyle names = core::KernelNameStyle::kBase);
// One JSON object with every figure (times in ns, shares as fractions).
std::string RenderDiffJson(const DiffResult& diff);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_DIFF_H_
