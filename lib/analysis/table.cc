#include "lib/analysis/table.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/str_cat.h"
#include "lib/core/json.h"
#include "lib/core/terminal_text.h"

namespace cuscope::analysis {
namespace {

std::string WithThousands(const std::string& digits) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[i]);
    const size_t left = n - 1 - i;
    if (left > 0 && left % 3 == 0 && digits[i] != '-') out.push_back(',');
  }
  return out;
}

std::string FormatCell(const std::string& value, ColumnType type) {
  if (value.empty() && type != ColumnType::kText) return "-";
  switch (type) {
    case ColumnType::kInteger: return WithThousands(value);
    case ColumnType::kDecimal: {
      const size_t dot = value.find('.');
      if (dot == std::string::npos) return WithThousands(value);
      return WithThousands(value.substr(0, dot)) + value.substr(dot);
    }
    case ColumnType::kPercent: return value;
    // Names come from the trace: escaped so that a name cannot drive the terminal.
    case ColumnType::kText: return core::EscapeForTerminal(value);
  }
  return value;
}

}  // namespace

std::optional<TimeUnit> ParseTimeUnit(std::string_view name) {
  if (name == "nsec" || name == "nanoseconds" || name == "ns") return TimeUnit::kNanoseconds;
  if (name == "usec" || name == "microseconds" || name == "us") return TimeUnit::kMicroseconds;
  if (name == "msec" || name == "milliseconds" || name == "ms") return TimeUnit::kMilliseconds;
  if (name == "sec" || name == "seconds" || name == "s") return TimeUnit::kSeconds;
  return std::nullopt;
}

namespace {

// `value` (ns, an integer or a decimal) divided by 10^`digits`, exactly: the decimal point moved.
std::string ShiftDecimalPoint(const std::string& value, int digits) {
  if (value.empty()) return value;
  std::string sign, whole = value, fraction;
  if (whole[0] == '-') {
    sign = "-";
    whole = whole.substr(1);
  }
  if (const size_t dot = whole.find('.'); dot != std::string::npos) {
    fraction = whole.substr(dot + 1);
    whole = whole.substr(0, dot);
  }
  if (whole.empty() || whole.find_first_not_of("0123456789") != std::string::npos ||
      fraction.find_first_not_of("0123456789") != std::string::npos) {
    return value;  // not a number: left as it is
  }
  if (whole.size() <= static_cast<size_t>(digits)) whole.insert(0, digits + 1 - whole.size(), '0');
  const std::string moved = whole.substr(whole.size() - digits) + fraction;
  return sign + whole.substr(0, whole.size() - digits) + "." + moved;
}

}  // namespace

Table WithTimeUnit(Table table, TimeUnit unit) {
  if (unit == TimeUnit::kNanoseconds) return table;
  const int digits = unit == TimeUnit::kMicroseconds ? 3 : unit == TimeUnit::kMilliseconds ? 6 : 9;
  const char* suffix = unit == TimeUnit::kMicroseconds ? "(us)" : unit == TimeUnit::kMilliseconds ? "(ms)" : "(s)";
  for (size_t c = 0; c < table.columns.size(); ++c) {
    Column& column = table.columns[c];
    const size_t at = column.name.rfind("(ns)");
    if (at == std::string::npos || at + 4 != column.name.size() || column.type == ColumnType::kText) continue;
    column.name = column.name.substr(0, at) + suffix;
    column.type = ColumnType::kDecimal;
    for (auto& row : table.rows) {
      if (c < row.size()) row[c] = ShiftDecimalPoint(row[c], digits);
    }
  }
  return table;
}

Table WithKernelNames(Table table, core::KernelNameStyle style) {
  if (style == core::KernelNameStyle::kMangled) return table;
  for (auto& row : table.rows) {
    for (size_t c = 0; c < row.size() && c < table.columns.size(); ++c) {
      if (table.columns[c].type == ColumnType::kText) row[c] = core::RenameKernelNamesIn(row[c], style);
    }
  }
  return table;
}

std::string RenderText(const Table& table, size_t max_rows) {
  const size_t shown = max_rows == 0 ? table.rows.size() : std::min(max_rows, table.rows.size());
  std::vector<std::vector<std::string>> cells(shown);
  std::vector<size_t> width(table.columns.size());
  std::vector<std::string> names;  // column names can be metric names from the trace
  for (size_t c = 0; c < table.columns.size(); ++c) {
    names.push_back(core::EscapeForTerminal(table.columns[c].name));
    width[c] = names.back().size();
  }
  for (size_t r = 0; r < shown; ++r) {
    for (size_t c = 0; c < table.columns.size() && c < table.rows[r].size(); ++c) {
      cells[r].push_back(FormatCell(table.rows[r][c], table.columns[c].type));
      width[c] = std::max(width[c], cells[r].back().size());
    }
  }
  std::string out =
      absl::StrCat(core::EscapeForTerminal(table.title), " (", core::EscapeForTerminal(table.name), "):\n\n");
  auto add_line = [&](const std::vector<std::string>& line, bool header) {
    std::string text;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const std::string& v = c < line.size() ? line[c] : std::string();
      const bool last = c + 1 == table.columns.size();
      const size_t pad = width[c] > v.size() ? width[c] - v.size() : 0;
      const bool left = table.columns[c].type == ColumnType::kText || header;
      if (c > 0) text += "  ";
      if (left) {
        text += v;
        if (!last) text.append(pad, ' ');
      } else {
        text.append(pad, ' ');
        text += v;
      }
    }
    absl::StrAppend(&out, text, "\n");
  };
  std::vector<std::string> header, rule;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    header.push_back(names[c]);
    rule.push_back(std::string(width[c], '-'));
  }
  add_line(header, true);
  add_line(rule, true);
  for (const auto& line : cells) add_line(line, false);
  if (table.rows.empty()) absl::StrAppend(&out, "(no rows)\n");
  if (shown < table.rows.size()) absl::StrAppend(&out, "... ", table.rows.size() - shown, " more rows\n");
  return out;
}

std::string RenderCsv(const Table& table) {
  auto quote = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char ch : v) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + "\"";
  };
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) absl::StrAppend(&out, c ? "," : "", quote(table.columns[c].name));
  out += "\n";
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) absl::StrAppend(&out, c ? "," : "", quote(row[c]));
    out += "\n";
  }
  return out;
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  core::AppendJsonString(s, core::JsonEscaping::kTerminalSafe, &out);
  return out;
}

core::Json TableJson(const Table& table) {
  core::Json rows = core::Json::array();
  for (const std::vector<std::string>& row : table.rows) {
    core::Json& out = rows.emplace_back(core::Json::object());
    for (size_t c = 0; c < table.columns.size() && c < row.size(); ++c) {
      const bool numeric = table.columns[c].type != ColumnType::kText;
      out[table.columns[c].name] = numeric ? core::JsonNumberFromText(row[c]) : core::Json(row[c]);
    }
  }
  return core::Json{{"report", table.name}, {"title", table.title}, {"rows", std::move(rows)}};
}

std::string RenderJson(const Table& table) { return core::DumpJson(TableJson(table), core::JsonEscaping::kTerminalSafe); }

}  // namespace cuscope::analysis
