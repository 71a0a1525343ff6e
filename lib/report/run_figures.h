// The key figures of one profiled run, the unit `cuscope diff` and `cuscope log` compare: how long
// the capture window lasted end to end, how busy the GPUs were, the kernel time by kernel, and the
// findings by rule. A pure function of a loaded trace and its analysis.
#ifndef CUSCOPE_LIB_REPORT_RUN_FIGURES_H_
#define CUSCOPE_LIB_REPORT_RUN_FIGURES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"

namespace cuscope::report {

struct KernelFigure {
  std::string name;          // as the trace names it (mangled): the key across runs
  std::string display_name;  // demangled
  uint64_t count = 0;
  uint64_t total_ns = 0;
};

struct FindingFigure {
  std::string rule_id;
  analysis::Severity severity = analysis::Severity::kInfo;
  std::string headline;
  uint64_t recoverable_ns = 0;
};

struct NvtxFigure {
  uint64_t count = 0;     // ranges of the name, every thread
  uint64_t total_ns = 0;  // their lengths, summed
};

struct RunFigures {
  std::string label;  // the trace path, as given
  // End to end: first to last recorded activity of any kind (the capture window as recorded).
  uint64_t end_to_end_ns = 0;
  // Steady state: from the earliest device's start-up end to the last GPU operation's end
  // (analysis::SteadyStateOf: the start-up is the first idle_startup_ops_share of each device's
  // operations, 1% by default), less the time no device counts (metric collection, time outside
  // the capture windows): on one device, the steady state gpu.idle names. 0 without GPU operations.
  uint64_t steady_ns = 0;
  // NVTX ranges by name.
  std::map<std::string, NvtxFigure> nvtx;
  // Summed over the devices: the union of GPU work per device, and the devices' active spans
  // without metric collection. busy_share = busy / active (0 without GPU work).
  uint64_t gpu_busy_ns = 0;
  uint64_t gpu_active_ns = 0;
  double gpu_busy_share = 0;
  // The same share over each device's steady state (from its start-up's end to its last
  // operation): what `cuscope diff` compares with the steady-state time.
  double steady_gpu_busy_share = 0;
  uint64_t steady_gpu_active_ns = 0;  // the devices' steady states, summed, as gpu_active_ns
  uint64_t kernel_count = 0;
  uint64_t kernel_time_ns = 0;          // sum of kernel durations on the timeline
  std::vector<KernelFigure> kernels;    // most time first
  std::vector<FindingFigure> findings;  // ranked, as the analyzer ranks them
  bool truncated = false;

  // The first finding at warning or above, else null: what the run's analysis leads with.
  const FindingFigure* top_finding() const;
};

// `analysis` is Analyze's result over `timeline`.
RunFigures FiguresOf(const analysis::Timeline& timeline, const analysis::Analysis& analysis, std::string label);

// Loads a trace, analyzes it with default thresholds (no tables) and takes its figures.
absl::StatusOr<RunFigures> LoadRunFigures(const std::string& path);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_RUN_FIGURES_H_
