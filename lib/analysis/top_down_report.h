// The one-run top-down (`cuscope profile --top-down=N`): the collector records a timeline window,
// chooses that window's N hottest kernels (name + grid + block, core::SelectHotKernels) when it
// closes, and then collects Range Profiler metrics on the next launches of those kernels. This
// puts both halves in one report:
//
//   1. the timeline window: idle time and its causes (the ordinary rules; the metrics phase after
//      the window is outside every capture window, so it is neither idle nor busy there), and
//   2. the hot kernels as the collector chose them, in its order, each with its share of the
//      window's kernel time and its launches, and its verdict from the metric rows matched by name,
//      grid and block (the profiled launches ran after the window, so their kernel rows are absent).
//
// A hot kernel with no metric rows did not launch again after the window, so nothing was
// collected for it; the report says so and what to do.
#ifndef CUSCOPE_LIB_ANALYSIS_TOP_DOWN_REPORT_H_
#define CUSCOPE_LIB_ANALYSIS_TOP_DOWN_REPORT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"
#include "lib/core/hot_kernel_choice.h"

namespace cuscope::analysis {

struct HotKernelEntry {
  std::string name;  // mangled, as the trace has it
  uint32_t device = 0;
  std::array<uint32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  uint64_t window_ns = 0;  // its GPU time in the window
  uint64_t launches = 0;   // in the window
  double window_share = 0;  // of the window's kernel time
  // Tied with the kernel before it on time: the collector ordered them by launches, then by name
  // and shape.
  bool tied_with_previous = false;
  std::optional<size_t> verdict;  // index into the verdicts it was built from

  std::string Label() const;  // "gemm [grid 264 1 1, block 256 1 1]"
};

struct TopDownChoice {
  uint64_t time_ns = 0;  // when it was made (the window had closed)
  uint64_t window_kernel_ns = 0;
  std::vector<HotKernelEntry> kernels;  // the collector's order: hottest first
};

struct TopDownReport {
  bool present = false;  // a top-down trace: choices recorded, or the header asked for one
  uint32_t kernels_asked = 0;
  uint32_t launches_asked = 0;  // per kernel (0: not recorded)
  std::vector<TopDownChoice> choices;
  // The header asked for a top-down but no choice was recorded (the program ended before the window
  // closed): what the choice would have been, from the timeline.
  std::vector<core::HotKernelChoice> would_choose;
  // Metric collection while the timeline was off (the metrics phase): replay windows and their time.
  uint64_t metrics_phase_windows = 0;
  uint64_t metrics_phase_ns = 0;
  // Verdicts of profiled kernels that are not among the hot kernels (indices).
  std::vector<size_t> other_verdicts;
  bool any_profiled() const;
};

// `verdicts` is JudgeKernels' result; entries refer to it by index.
TopDownReport BuildTopDown(const Timeline& timeline, const std::vector<KernelVerdict>& verdicts);

std::string RenderTopDownText(const TopDownReport& report, const std::vector<KernelVerdict>& verdicts);
// The hot kernels with their verdicts as a table ("top_down"), for --format json.
Table TopDownTable(const TopDownReport& report, const std::vector<KernelVerdict>& verdicts);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_TOP_DOWN_REPORT_H_
