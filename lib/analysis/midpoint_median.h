// The median as `nsys stats` reports it (its Med column): the middle value, or the mean of the two
// middle values for an even count. Where a figure stands beside nsys's, it is computed this way;
// rules.h's Median (the lower middle, an integer) serves the thresholds of the rules.
#ifndef CUSCOPE_LIB_ANALYSIS_MIDPOINT_MEDIAN_H_
#define CUSCOPE_LIB_ANALYSIS_MIDPOINT_MEDIAN_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cuscope::analysis {

// 0 for an empty list. Takes the values by copy: selection reorders them.
template <typename T>
double MidpointMedian(std::vector<T> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = static_cast<double>(values[mid]);
  if (values.size() % 2) return upper;
  return (static_cast<double>(*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid))) +
          upper) /
         2;
}

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_MIDPOINT_MEDIAN_H_
