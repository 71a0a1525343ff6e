// Summary tables with the columns nsys users know (`cuda_gpu_kern_sum`, `cuda_api_sum`, ...), and
// their text, CSV and JSON renderings.
#ifndef CUSCOPE_LIB_ANALYSIS_TABLES_H_
#define CUSCOPE_LIB_ANALYSIS_TABLES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

enum class ColumnType { kText, kInteger, kPercent, kDecimal };

struct Column {
  std::string name;
  ColumnType type = ColumnType::kText;
};

// Cells hold plain values ("12345", "12.3", a name); the renderers format them by column type.
struct Table {
  std::string name;   // report name, e.g. "cuda_gpu_kern_sum"
  std::string title;  // one line saying what the table shows
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
};

// Per kernel name: Time (%), Total Time (ns), Instances, Avg, Med, Min, Max, StdDev, Name.
Table KernelSummary(const Timeline& timeline);
// The same, grouped by kernel name, grid and block dimensions.
Table KernelGridBlockSummary(const Timeline& timeline);
// Per API function.
Table ApiSummary(const Timeline& timeline);
// Per memory operation kind (memcpy direction, memset): time, and size in MB.
Table MemoryTimeSummary(const Timeline& timeline);
Table MemorySizeSummary(const Timeline& timeline);
// Per (launch API, kernel): API time, queue delay (kernel start - API end, positive only) and
// kernel time.
Table KernelExecutionSummary(const Timeline& timeline);
// Per profiled kernel group (name, grid, block): its time, the sol/occupancy/stall/roofline
// figures averaged over its profiled launches, and the verdict (`kern_metrics`). Numeric cells of
// metrics that were not collected are empty.
Table KernelMetricsSummary(const Timeline& timeline, const Thresholds& thresholds = Thresholds());

// `gpu_metrics` (samples, min, avg, max per device and sampled GPU counter) is GpuMetricsSummary in
// gpu_counters.h.

// The report names `cuscope stats --report` accepts, in the order they are documented.
const std::vector<std::string_view>& ReportNames();
std::optional<Table> BuildReport(std::string_view name, const Timeline& timeline);

// `max_rows` 0 = all rows; the rest are counted in a last line. Empty numeric cells show as "-"
// (as empty fields in CSV and null in JSON).
std::string RenderText(const Table& table, size_t max_rows = 0);
std::string RenderCsv(const Table& table);
// An object: {"report": name, "title": ..., "rows": [{column: value, ...}, ...]}.
std::string RenderJson(const Table& table);
// A JSON string literal.
std::string JsonQuote(std::string_view s);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_TABLES_H_
