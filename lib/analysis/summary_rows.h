// The statistics and rows of the summary tables, as nsys's stats reports print them: per group
// count, total, min, max, mean, median and standard deviation (GroupStats), and the rows of a time
// summary ordered by total time (AddTimeRows). Internal to lib/analysis: tables.cc and the tables
// that have a file of their own (nvtx_gpu_projection.cc, kernel_execution_table.cc) share them.
#ifndef CUSCOPE_LIB_ANALYSIS_SUMMARY_ROWS_H_
#define CUSCOPE_LIB_ANALYSIS_SUMMARY_ROWS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/analysis/table.h"
#include "lib/core/trace.h"

namespace cuscope::analysis::summary_rows {

struct Summary {
  uint64_t count = 0, total = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;
};

// Sample statistics per group, as nsys prints them (median of an even count: mean of the two
// middle values; standard deviation with n-1), without a vector per group. Two passes over the
// values: `Count` gathers count, total, min and max; `Place` puts every value into one shared
// buffer, group after group (32-bit when every value fits), where each group's median is then
// selected in place. The caller produces the values twice; the buffer is freed by `Release`.
class GroupStats {
 public:
  size_t AddGroup() {
    groups_.emplace_back();
    return groups_.size() - 1;
  }
  void Resize(size_t groups) { groups_.resize(groups); }
  size_t size() const { return groups_.size(); }
  void Count(size_t g, uint64_t v) {
    State& s = groups_[g];
    if (s.count == 0 || v < s.min) s.min = v;
    if (v > s.max) s.max = v;
    ++s.count;
    s.total += v;
  }
  void Prepare() {
    uint64_t offset = 0, max = 0;
    for (State& s : groups_) {
      s.offset = s.fill = offset;
      offset += s.count;
      max = std::max(max, s.max);
      s.mean = s.count ? static_cast<double>(s.total) / static_cast<double>(s.count) : 0;
    }
    wide_ = max > UINT32_MAX;
    if (wide_) {
      wide_values_.resize(offset);
    } else {
      narrow_values_.resize(offset);
    }
  }
  void Place(size_t g, uint64_t v) {
    State& s = groups_[g];
    if (wide_) {
      wide_values_[s.fill++] = v;
    } else {
      narrow_values_[s.fill++] = static_cast<uint32_t>(v);
    }
    const double d = static_cast<double>(v) - s.mean;
    s.sum_sq += d * d;
  }
  Summary Result(size_t g) {
    const State& st = groups_[g];
    Summary s;
    s.count = st.count;
    if (st.count == 0) return s;
    s.total = st.total;
    s.min = st.min;
    s.max = st.max;
    s.avg = st.mean;
    s.median = wide_ ? MedianOf(wide_values_, st) : MedianOf(narrow_values_, st);
    if (st.count > 1) s.stddev = std::sqrt(st.sum_sq / static_cast<double>(st.count - 1));
    return s;
  }
  void Release() {
    std::vector<uint32_t>().swap(narrow_values_);
    std::vector<uint64_t>().swap(wide_values_);
  }

 private:
  struct State {
    uint64_t count = 0, total = 0, min = 0, max = 0, offset = 0, fill = 0;
    double mean = 0, sum_sq = 0;
  };
  template <typename T>
  static double MedianOf(std::vector<T>& values, const State& st) {
    // Selection, not a full sort: linear time on the millions of launches of one kernel.
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(st.offset);
    const auto last = first + static_cast<std::ptrdiff_t>(st.count);
    const auto mid = first + static_cast<std::ptrdiff_t>(st.count / 2);
    std::nth_element(first, mid, last);
    const double upper = static_cast<double>(*mid);
    if (st.count % 2) return upper;
    return (static_cast<double>(*std::max_element(first, mid)) + upper) / 2.0;
  }
  std::vector<State> groups_;
  bool wide_ = false;
  std::vector<uint32_t> narrow_values_;
  std::vector<uint64_t> wide_values_;
};

// Runs both passes of `stats` over the values `generate` produces (it calls its argument with
// (group, value) for every value) and returns every group's summary.
template <typename Generate>
std::vector<Summary> SummarizeGroups(GroupStats& stats, Generate&& generate) {
  generate([&stats](size_t g, uint64_t v) { stats.Count(g, v); });
  stats.Prepare();
  generate([&stats](size_t g, uint64_t v) { stats.Place(g, v); });
  std::vector<Summary> out(stats.size());
  for (size_t g = 0; g < out.size(); ++g) out[g] = stats.Result(g);
  stats.Release();
  return out;
}

// One decimal, halves rounded away from zero as SQLite's round() (nsys's reports) rounds them.
std::string Dec(double v);

// The columns of a time summary: share, total, instances, mean, median, min, max, deviation.
extern const std::vector<Column> kTimeColumns;

// The groups of a time summary in row order, largest total first (then by name), groups without
// values left out; and each one's share of all groups' total time, in percent.
struct TimeRowOrder {
  std::vector<size_t> groups;
  uint64_t grand_total = 0;
  std::string Percent(const Summary& s) const;
};

TimeRowOrder OrderTimeRows(const std::vector<std::string>& names, const std::vector<Summary>& summaries);

// Rows of a time summary, largest total first; groups without values are left out.
void AddTimeRows(std::vector<std::string> names, const std::vector<Summary>& summaries, Table& table);

// An NVTX range's name, or "(unnamed range)" for a range without one (or an id the trace lacks).
std::string RangeName(const core::Trace& trace, uint32_t id);

inline uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

}  // namespace cuscope::analysis::summary_rows

#endif  // CUSCOPE_LIB_ANALYSIS_SUMMARY_ROWS_H_
