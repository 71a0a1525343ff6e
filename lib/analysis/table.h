// A report table (named columns of a type, rows of plain-valued cells) and its text, CSV and JSON
// renderings. A leaf: the tables themselves are built elsewhere (tables.h, gpu_counters.h,
// baseline.h, top_down.h), and the catalogue of `cuscope stats` reports is report_catalogue.h.
#ifndef CUSCOPE_LIB_ANALYSIS_TABLE_H_
#define CUSCOPE_LIB_ANALYSIS_TABLE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/json.h"
#include "lib/core/kernel_names.h"

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

// `max_rows` 0 = all rows; the rest are counted in a last line. Empty numeric cells show as "-"
// (as empty fields in CSV and null in JSON).
std::string RenderText(const Table& table, size_t max_rows = 0);
std::string RenderCsv(const Table& table);
// An object: {"report": name, "title": ..., "rows": [{column: value, ...}, ...]}: a numeric
// column's cells as JSON numbers (integers exact to 64 bits), empty ones as null; text as strings.
core::Json TableJson(const Table& table);
// TableJson's text, safe to print on a terminal (core::JsonEscaping::kTerminalSafe).
std::string RenderJson(const Table& table);
// The table with the kernel names in its text cells shown in `style` (core::RenameKernelNamesIn).
Table WithKernelNames(Table table, core::KernelNameStyle style);

// The unit of the time columns (`stats --timeunit`, as nsys stats): the tables are built in ns.
enum class TimeUnit { kNanoseconds, kMicroseconds, kMilliseconds, kSeconds };
// nsys's names: nsec, nanoseconds, usec, microseconds, msec, milliseconds, sec, seconds, and ns, us,
// ms, s; nullopt for anything else.
std::optional<TimeUnit> ParseTimeUnit(std::string_view name);
// The table with every "... (ns)" column in `unit`: renamed "... (us)", "(ms)" or "(s)", its cells
// divided exactly (the digits a nanosecond needs: 3, 6 or 9 decimals) and typed decimal.
Table WithTimeUnit(Table table, TimeUnit unit);

// A JSON string literal, safe to print on a terminal (core::JsonEscaping::kTerminalSafe).
std::string JsonQuote(std::string_view s);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_TABLE_H_
