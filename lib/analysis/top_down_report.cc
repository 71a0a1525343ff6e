#include "lib/analysis/top_down_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/finding.h"

namespace cuscope::analysis {
namespace {

std::string Dims(const std::array<uint32_t, 3>& d) { return absl::StrCat(d[0], " ", d[1], " ", d[2]); }

bool SameShape(const KernelVerdict& v, const HotKernelEntry& e) {
  if (!v.shape_known || v.name != e.name) return false;
  for (int i = 0; i < 3; ++i) {
    if (v.grid[i] < 0 || v.block[i] < 0) return false;
    if (static_cast<uint32_t>(v.grid[i]) != e.grid[i] || static_cast<uint32_t>(v.block[i]) != e.block[i]) return false;
  }
  return true;
}

// The verdict of a hot kernel: same name, grid and block on the same device, else on any device
// (the collector's choice and its metric rows both carry the device, but a kernel that ran on one
// device and was profiled on another is still the same code and shape).
std::optional<size_t> MatchVerdict(const HotKernelEntry& e, const std::vector<KernelVerdict>& verdicts) {
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].device == e.device && SameShape(verdicts[i], e)) return i;
  }
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (SameShape(verdicts[i], e)) return i;
  }
  return std::nullopt;
}

constexpr char kNoMetrics[] =
    "it did not launch again after the timeline window, so no counters were collected for it";
constexpr char kNoMetricsAdvice[] =
    "To get its verdict, run longer so that it launches again after the window closes, or end the window before "
    "its last launches (a shorter --duration, or a cudaProfilerStart/Stop range that stops earlier).";

std::string LaunchWord(uint64_t n) { return n == 1 ? " launch" : " launches"; }

}  // namespace

std::string HotKernelEntry::Label() const {
  return absl::StrCat(name, " [grid ", Dims(grid), ", block ", Dims(block), "]");
}

bool TopDownReport::any_profiled() const {
  for (const TopDownChoice& c : choices) {
    for (const HotKernelEntry& e : c.kernels) {
      if (e.verdict) return true;
    }
  }
  return false;
}

// The hot kernels' launches and time, and all kernel time, inside the timeline window that closed
// before the choice, measured on the trace's own kernel rows as every other figure of `analyze` is
// (the collector counted the records it had when it chose, which may include launches recorded
// after the window closed). Without capture windows the whole trace is the window and the
// collector's figures stand.
void MeasureInWindow(const Timeline& timeline, TopDownChoice& choice) {
  if (!timeline.has_capture_windows()) return;
  std::optional<Interval> window;
  for (const Interval& w : timeline.capture_windows()) {
    if (w.end <= choice.time_ns || !window) window = w;
  }
  if (!window) return;
  const core::Trace& trace = timeline.trace();
  uint64_t all_ns = 0;
  std::vector<uint64_t> time_ns(choice.kernels.size(), 0), launches(choice.kernels.size(), 0);
  // Each signature's hot kernel (its name, device and shape), decided once, not per launch.
  constexpr size_t kNotHot = SIZE_MAX;
  std::vector<size_t> entry_of(trace.dict.signature_count() + 1, kNotHot);
  for (uint32_t sig = 1; sig < entry_of.size(); ++sig) {
    const v1::KernelSignature& s = trace.dict.signature(sig);
    for (size_t i = 0; i < choice.kernels.size() && entry_of[sig] == kNotHot; ++i) {
      const HotKernelEntry& e = choice.kernels[i];
      if (s.device() == e.device && trace.dict.str(s.name()) == e.name &&
          static_cast<uint32_t>(s.grid_x()) == e.grid[0] && static_cast<uint32_t>(s.grid_y()) == e.grid[1] &&
          static_cast<uint32_t>(s.grid_z()) == e.grid[2] && static_cast<uint32_t>(s.block_x()) == e.block[0] &&
          static_cast<uint32_t>(s.block_y()) == e.block[1] && static_cast<uint32_t>(s.block_z()) == e.block[2]) {
        entry_of[sig] = i;
      }
    }
  }
  const IntervalSet in_window{*window};
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k) || !trace.dict.has_signature(k.signature)) continue;
    // As the baseline counts: the part inside the window, a launch when any of it is.
    uint64_t d = 0;
    if (!RanInside(in_window, {k.start, std::max(k.start, k.end)}, &d)) continue;
    all_ns += d;
    if (const size_t i = entry_of[k.signature]; i != kNotHot) {
      time_ns[i] += d;
      ++launches[i];
    }
  }
  choice.window_kernel_ns = all_ns;
  for (size_t i = 0; i < choice.kernels.size(); ++i) {
    HotKernelEntry& e = choice.kernels[i];
    e.window_ns = time_ns[i];
    e.launches = launches[i];
    e.window_share = all_ns > 0 ? static_cast<double>(time_ns[i]) / static_cast<double>(all_ns) : 0;
  }
  // Hottest first by what is shown (the collector's order where the times tie).
  std::stable_sort(choice.kernels.begin(), choice.kernels.end(),
                   [](const HotKernelEntry& a, const HotKernelEntry& b) { return a.window_ns > b.window_ns; });
  for (size_t i = 0; i < choice.kernels.size(); ++i) {
    choice.kernels[i].tied_with_previous = i > 0 && choice.kernels[i - 1].window_ns == choice.kernels[i].window_ns;
  }
}

TopDownReport BuildTopDown(const Timeline& timeline, const std::vector<KernelVerdict>& verdicts) {
  const core::Trace& trace = timeline.trace();
  TopDownReport r;
  r.kernels_asked = trace.header.config().top_down_kernels();
  r.launches_asked = trace.header.config().top_down_launches();
  r.present = !trace.top_down.empty() || r.kernels_asked > 0;
  if (!r.present) return r;

  std::vector<bool> matched(verdicts.size(), false);
  for (const v1::TopDownSelection& selection : trace.top_down) {
    TopDownChoice choice;
    choice.time_ns = selection.time_ns();
    choice.window_kernel_ns = selection.window_kernel_ns();
    for (int i = 0; i < selection.kernels_size(); ++i) {
      const v1::HotKernel& hot = selection.kernels(i);
      HotKernelEntry e;
      e.name = hot.name() != 0 ? trace.dict.str(hot.name()) : std::string("(unknown kernel)");
      e.device = hot.device();
      e.grid = {hot.grid_x(), hot.grid_y(), hot.grid_z()};
      e.block = {hot.block_x(), hot.block_y(), hot.block_z()};
      e.window_ns = hot.total_ns();
      e.launches = hot.launches();
      e.window_share = choice.window_kernel_ns > 0
                           ? static_cast<double>(e.window_ns) / static_cast<double>(choice.window_kernel_ns)
                           : 0;
      e.tied_with_previous = i > 0 && selection.kernels(i - 1).total_ns() == hot.total_ns();
      e.verdict = MatchVerdict(e, verdicts);
      if (e.verdict) matched[*e.verdict] = true;
      choice.kernels.push_back(std::move(e));
    }
    MeasureInWindow(timeline, choice);
    r.choices.push_back(std::move(choice));
  }

  if (trace.top_down.empty() && r.kernels_asked > 0) {
    // The choice the collector would have made, from the window's own kernel rows.
    std::vector<core::HotKernelChoice> totals(trace.dict.signature_count() + 1);
    for (const core::KernelRow& k : trace.kernels) {
      if (!timeline.OnTimeline(k) || k.signature >= totals.size()) continue;
      totals[k.signature].total_ns += k.end > k.start ? k.end - k.start : 0;
      ++totals[k.signature].launches;
    }
    for (uint32_t id = 1; id < totals.size(); ++id) {
      const v1::KernelSignature& s = trace.dict.signature(id);
      core::HotKernelChoice& c = totals[id];
      c.name = trace.dict.str(s.name());
      c.device = s.device();
      c.shape.grid = {static_cast<uint32_t>(s.grid_x()), static_cast<uint32_t>(s.grid_y()),
                      static_cast<uint32_t>(s.grid_z())};
      c.shape.block = {static_cast<uint32_t>(s.block_x()), static_cast<uint32_t>(s.block_y()),
                       static_cast<uint32_t>(s.block_z())};
    }
    r.would_choose = core::SelectHotKernels(std::move(totals), r.kernels_asked);
  }

  if (timeline.has_capture_windows()) {
    std::vector<Interval> phase;
    for (const v1::CaptureWindow& w : trace.windows) {
      if (w.kind() != v1::WINDOW_KIND_METRICS || w.start_ns() == 0 || timeline.Captured(w.start_ns())) continue;
      ++r.metrics_phase_windows;
      phase.push_back({w.start_ns(), std::max(w.start_ns(), w.end_ns())});
    }
    r.metrics_phase_ns = TotalLength(UnionOf(std::move(phase)));
  }
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!matched[i]) r.other_verdicts.push_back(i);
  }
  return r;
}

std::string RenderTopDownText(const TopDownReport& r, const std::vector<KernelVerdict>& verdicts) {
  if (!r.present) return "";
  std::string out;
  if (r.choices.empty()) {
    absl::StrAppend(&out, "Top-down: asked for the ", r.kernels_asked,
                    " hottest kernels of the timeline window, but no choice was recorded: the program ended before "
                    "the window closed, so no kernel metrics were collected. End the window earlier (--duration, or "
                    "cudaProfilerStop before the end) so that its hot kernels launch again after it.\n");
    if (!r.would_choose.empty()) {
      absl::StrAppend(&out, "From the timeline, the choice would have been:\n");
      int rank = 0;
      for (const core::HotKernelChoice& c : r.would_choose) {
        absl::StrAppend(&out, "  ", ++rank, ". ", c.name, " [grid ", Dims(c.shape.grid), ", block ", Dims(c.shape.block),
                        "] (", FormatDuration(c.total_ns), ", ", c.launches, LaunchWord(c.launches), ")\n");
      }
    }
    return out + "\n";
  }
  const bool several = r.choices.size() > 1;
  for (size_t ci = 0; ci < r.choices.size(); ++ci) {
    const TopDownChoice& choice = r.choices[ci];
    absl::StrAppend(&out, "Top-down", several ? absl::StrCat(" (choice ", ci + 1, " of ", r.choices.size(), ")") : "",
                    ": the findings above cover the timeline window; when it closed, the collector chose its ",
                    choice.kernels.size(), choice.kernels.size() == 1 ? " hottest kernel" : " hottest kernels",
                    " (of ", FormatDuration(choice.window_kernel_ns), " kernel time) and profiled ",
                    choice.kernels.size() == 1 ? "its" : "their", " next launches");
    if (r.launches_asked > 0) absl::StrAppend(&out, " (up to ", r.launches_asked, " each)");
    out += ":\n\n";
    if (choice.kernels.empty()) {
      absl::StrAppend(&out, "  No kernel ran in the timeline window: nothing was chosen or profiled.\n\n");
      continue;
    }
    int rank = 0;
    for (const HotKernelEntry& e : choice.kernels) {
      ++rank;
      absl::StrAppend(&out, "  ", rank, ". ", e.Label(), ": ", FormatPercent(e.window_share),
                      " of the window's kernel time (", FormatDuration(e.window_ns), ", ", e.launches,
                      LaunchWord(e.launches), ")");
      if (e.tied_with_previous) absl::StrAppend(&out, " [same time as ", rank - 1, ".: fewer launches or later in order]");
      if (!e.verdict) {
        absl::StrAppend(&out, ": no metrics\n     ", kNoMetrics, ". ", kNoMetricsAdvice, "\n\n");
        continue;
      }
      const KernelVerdict& v = verdicts[*e.verdict];
      absl::StrAppend(&out, ": ", std::string(BottleneckName(v.bottleneck)), " (", v.profiled_launches,
                      LaunchWord(v.profiled_launches), " profiled");
      if (r.launches_asked > 0 && v.profiled_launches < r.launches_asked) {
        absl::StrAppend(&out, " of ", r.launches_asked, " asked: it launched only ", v.profiled_launches,
                        v.profiled_launches == 1 ? " time" : " times", " after the window");
      }
      out += ")\n";
      out += RenderVerdictDetails(v, "     ");
      out += "\n";
    }
  }
  if (!r.any_profiled()) {
    absl::StrAppend(&out, "  No hot kernel got metrics. If they did launch again after the window, the counters could "
                          "not be collected: see the cuscope: lines the run printed (counter permission, another "
                          "profiler holding the counters).\n\n");
  }
  if (r.metrics_phase_windows > 0) {
    absl::StrAppend(&out, "  Metric collection ran after the window: ", r.metrics_phase_windows,
                    r.metrics_phase_windows == 1 ? " replay window, " : " replay windows, ",
                    FormatDuration(r.metrics_phase_ns),
                    " in all, while the timeline was off: none of it counts as idle or busy time above.\n\n");
  }
  return out;
}

Table TopDownTable(const TopDownReport& r, const std::vector<KernelVerdict>& verdicts) {
  Table t;
  t.name = "top_down";
  t.title = "Top-down: the timeline window's hot kernels as the collector chose them, with their verdicts";
  t.columns = {{"Choice", ColumnType::kInteger},    {"Rank", ColumnType::kInteger},
               {"Window Share (%)", ColumnType::kPercent}, {"Window Time (ns)", ColumnType::kInteger},
               {"Launches", ColumnType::kInteger},  {"Profiled", ColumnType::kInteger},
               {"Verdict", ColumnType::kText},      {"Note", ColumnType::kText},
               {"Device", ColumnType::kInteger},    {"GridXYZ", ColumnType::kText},
               {"BlockXYZ", ColumnType::kText},     {"Name", ColumnType::kText}};
  for (size_t ci = 0; ci < r.choices.size(); ++ci) {
    int rank = 0;
    for (const HotKernelEntry& e : r.choices[ci].kernels) {
      const KernelVerdict* v = e.verdict ? &verdicts[*e.verdict] : nullptr;
      std::vector<std::string> notes;
      if (v == nullptr) notes.emplace_back(kNoMetrics);
      if (e.tied_with_previous) notes.emplace_back("same time as the kernel before it");
      const std::string note = absl::StrJoin(notes, "; ");
      t.rows.push_back({absl::StrCat(ci + 1), absl::StrCat(++rank), absl::StrFormat("%.1f", 100.0 * e.window_share),
                        absl::StrCat(e.window_ns), absl::StrCat(e.launches),
                        absl::StrCat(v ? v->profiled_launches : 0),
                        v ? std::string(BottleneckName(v->bottleneck)) : std::string("not profiled"), note,
                        absl::StrCat(e.device), Dims(e.grid), Dims(e.block), e.name});
    }
  }
  return t;
}

}  // namespace cuscope::analysis
