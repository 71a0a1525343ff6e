// The rank set's text (for people) and JSON (report.proto's Report, for pipelines).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/report_proto.h"
#include "lib/core/terminal_text.h"
#include "lib/ranks/rank_set.h"

namespace cuscope::ranks {

std::string RenderRankSetText(const RankSetReport& report, size_t top_rows) {
  const auto esc = [](std::string_view text) { return core::EscapeForTerminal(text); };
  std::string out = absl::StrFormat("cuscope analyze: %u rank traces", report.ranks.size());
  if (!report.ranks.empty()) {
    const RankIdentity& first = report.ranks.front().id;
    if (!first.job_id.empty()) absl::StrAppend(&out, ", job ", esc(first.job_id));
    if (!first.launcher.empty()) absl::StrAppend(&out, " (", esc(first.launcher), ")");
  }
  absl::StrAppendFormat(&out, "; %u collectives matched on every rank", report.matched_instances);
  if (!report.step_name.empty()) {
    absl::StrAppend(&out, ", ", report.matched_steps, " '", esc(report.step_name), "' steps on every rank");
  }
  out += "\n";
  for (const std::string& w : report.warnings) absl::StrAppend(&out, "warning: ", esc(w), "\n");
  out += "\n";
  bool serious = false;
  for (const analysis::Finding& f : report.findings) serious |= f.severity >= analysis::Severity::kWarning;
  if (!serious) absl::StrAppend(&out, "Nothing wrong found across the ranks: no rule raised a warning or an error.\n\n");
  if (!report.findings.empty()) {
    absl::StrAppend(&out, "Findings across the ranks (most severe and most costly first):\n\n");
    int rank = 0;
    for (const analysis::Finding& f : report.findings) out += analysis::RenderFindingText(f, ++rank);
  }
  for (const analysis::Table& t : report.tables) absl::StrAppend(&out, analysis::RenderText(t, top_rows), "\n");
  return out;
}

std::string RenderRankSetJson(const RankSetReport& report) {
  v1::Report r;
  r.set_format_version(2);
  r.set_trace_path(absl::StrCat(report.ranks.size(), " rank traces"));
  for (const analysis::Finding& f : report.findings) *r.add_findings() = analysis::ToProto(f);
  for (const analysis::Table& t : report.tables) *r.add_tables() = analysis::ToProto(t);
  for (const std::string& w : report.warnings) r.add_warnings(w);
  return analysis::ReportJson(r);
}

}  // namespace cuscope::ranks
