#include "lib/report/analysis_json.h"

#include <algorithm>
#include <string>

#include "lib/core/kernel_names.h"

namespace cuscope::report {
namespace {

std::string ColumnTypeName(analysis::ColumnType t) {
  switch (t) {
    case analysis::ColumnType::kText:
      return "text";
    case analysis::ColumnType::kInteger:
      return "integer";
    case analysis::ColumnType::kPercent:
      return "percent";
    case analysis::ColumnType::kDecimal:
      return "decimal";
  }
  return "text";
}

}  // namespace

void WriteFindingsJson(const std::vector<analysis::Finding>& findings, uint64_t origin_ns, bool with_spans,
                       JsonWriter* w) {
  const auto relative = [origin_ns](uint64_t t) { return t > origin_ns ? t - origin_ns : 0; };
  w->Key("findings").BeginArray();
  for (const analysis::Finding& f : findings) {
    w->BeginObject().Field("rule_id", f.rule_id).Field("severity", analysis::SeverityName(f.severity));
    w->Field("headline", core::RenameKernelNamesIn(f.headline, core::KernelNameStyle::kBase));
    w->Field("recoverable_ns", f.recoverable_ns).Field("recommendation", f.recommendation);
    w->Key("numbers").BeginArray();
    for (const analysis::Number& n : f.numbers) {
      w->BeginObject().Field("key", n.key).Field("value", n.value).Field("unit", n.unit).EndObject();
    }
    w->EndArray().Key("offenders").BeginArray();
    for (const analysis::Offender& o : f.offenders) {
      w->BeginObject().Field("kind", o.kind).Field("name", o.name);
      if (o.kind == "kernel") w->Field("display", core::ShortKernelName(o.name));
      w->Field("count", o.count).Field("time_ns", o.time_ns).EndObject();
    }
    w->EndArray().Key("spans").BeginArray();
    for (const analysis::Span& sp : f.spans) {
      if (!with_spans) break;
      w->BeginObject().Field("start", relative(sp.begin)).Field("end", relative(std::max(sp.begin, sp.end)));
      w->Field("label", sp.label).EndObject();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

void WriteTablesJson(const std::vector<analysis::Table>& tables, size_t max_rows, JsonWriter* w) {
  w->Key("tables").BeginArray();
  for (const analysis::Table& t : tables) {
    w->BeginObject().Field("name", t.name).Field("title", t.title).Key("columns").BeginArray();
    for (const analysis::Column& c : t.columns) {
      w->BeginObject().Field("name", c.name).Field("type", ColumnTypeName(c.type)).EndObject();
    }
    w->EndArray().Field("total_rows", static_cast<uint64_t>(t.rows.size())).Key("rows").BeginArray();
    for (size_t r = 0; r < t.rows.size() && r < max_rows; ++r) {
      w->BeginArray();
      // The page is read by people: kernel names short, as in the timeline (the trace keeps them whole).
      for (const std::string& cell : t.rows[r]) w->String(core::RenameKernelNamesIn(cell, core::KernelNameStyle::kBase));
      w->EndArray();
    }
    w->EndArray().EndObject();
  }
  w->EndArray();
}

}  // namespace cuscope::report
