#include "lib/analysis/summary_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::analysis::summary_rows {

std::string Dec(double v) { return absl::StrFormat("%.1f", std::round(v * 10.0) / 10.0); }

const std::vector<Column> kTimeColumns = {
    {"Time (%)", ColumnType::kPercent},  {"Total Time (ns)", ColumnType::kInteger},
    {"Instances", ColumnType::kInteger}, {"Avg (ns)", ColumnType::kDecimal},
    {"Med (ns)", ColumnType::kDecimal},  {"Min (ns)", ColumnType::kInteger},
    {"Max (ns)", ColumnType::kInteger},  {"StdDev (ns)", ColumnType::kDecimal}};

std::string TimeRowOrder::Percent(const Summary& s) const {
  return Dec(grand_total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(grand_total) : 0);
}

TimeRowOrder OrderTimeRows(const std::vector<std::string>& names, const std::vector<Summary>& summaries) {
  TimeRowOrder order;
  for (size_t g = 0; g < summaries.size(); ++g) {
    if (summaries[g].count == 0) continue;
    order.grand_total += summaries[g].total;
    order.groups.push_back(g);
  }
  std::sort(order.groups.begin(), order.groups.end(), [&](size_t a, size_t b) {
    return summaries[a].total != summaries[b].total ? summaries[a].total > summaries[b].total : names[a] < names[b];
  });
  return order;
}

void AddTimeRows(std::vector<std::string> names, const std::vector<Summary>& summaries, Table& table) {
  const TimeRowOrder order = OrderTimeRows(names, summaries);
  for (size_t g : order.groups) {
    const Summary& s = summaries[g];
    table.rows.push_back({order.Percent(s), absl::StrCat(s.total), absl::StrCat(s.count), Dec(s.avg), Dec(s.median),
                          absl::StrCat(s.min), absl::StrCat(s.max), Dec(s.stddev), std::move(names[g])});
  }
}

std::string RangeName(const core::Trace& trace, uint32_t id) {
  return id == 0 || id > trace.dict.string_count() ? "(unnamed range)" : trace.dict.str(id);
}

}  // namespace cuscope::analysis::summary_rows
