// The analysis as the report.proto schema (v1::Report), and that report as JSON, for pipelines.
// report.proto has no messages of its own for the baseline, the counters over time and the
// top-down list: the report carries them as tables named "baseline", "gpu_utilization_over_time"
// and "top_down", next to "gpu_metrics".
#ifndef CUSCOPE_LIB_ANALYSIS_REPORT_PROTO_H_
#define CUSCOPE_LIB_ANALYSIS_REPORT_PROTO_H_

#include <string>
#include <vector>

#include "cuscope/v1/report.pb.h"
#include "lib/analysis/analysis.h"
#include "lib/analysis/table.h"

namespace cuscope::analysis {

v1::Report ToReport(const Analysis& analysis, const std::string& trace_path);
v1::Finding ToProto(const Finding& finding);
v1::Table ToProto(const Table& table);
// A report as indented JSON with the proto field names and every field printed, 64-bit integers
// as numbers (core::ProtoToJsonText).
std::string ReportJson(const v1::Report& report);
// ToReport as ReportJson writes it.
std::string RenderAnalysisJson(const Analysis& analysis, const std::string& trace_path);

// The baseline, GPU utilization over time and top-down sections as tables, for the outputs that
// carry them that way (the JSON, the HTML report).
std::vector<Table> SectionTables(const Analysis& analysis);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_REPORT_PROTO_H_
