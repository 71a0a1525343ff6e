// The parts of the report page's JSON document that come from an analysis as it is: the findings
// and the summary tables. One trace's page (report_data.h) and a rank set's page
// (rank_set_page.h) write them alike, so the page draws both with the same code.
#ifndef CUSCOPE_LIB_REPORT_ANALYSIS_JSON_H_
#define CUSCOPE_LIB_REPORT_ANALYSIS_JSON_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/analysis/finding.h"
#include "lib/analysis/table.h"
#include "lib/report/json_writer.h"

namespace cuscope::report {

// "findings": [{rule_id, severity, headline, recoverable_ns, recommendation, numbers [{key, value,
// unit}], offenders [{kind, name, display?, count, time_ns}], spans [{start, end, label}]}], in the
// order given (ranked). Span times are nanoseconds from `origin_ns`; `with_spans` false writes every
// finding's spans empty (a page without a timeline to show them on). Kernel names in headlines are
// shortened, as the text outputs do.
void WriteFindingsJson(const std::vector<analysis::Finding>& findings, uint64_t origin_ns, bool with_spans,
                       JsonWriter* w);

// "tables": [{name, title, columns [{name, type}], total_rows, rows [[cell, ..]]}], each with at
// most `max_rows` rows; kernel names in cells shortened.
void WriteTablesJson(const std::vector<analysis::Table>& tables, size_t max_rows, JsonWriter* w);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_ANALYSIS_JSON_H_
