#include "lib/report/html_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lib/report/page/page_text.h"

namespace cuscope::report {

std::string HtmlEscape(std::string_view text) {
  return absl::StrReplaceAll(absl::string_view(text.data(), text.size()),
                             {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

std::string RenderHtmlPage(std::string_view data_json, std::string_view title) {
  const auto text = [](std::string_view s) { return absl::string_view(s.data(), s.size()); };
  std::string html;
  html.reserve(data_json.size() + page::kStyle.size() + page::kErrorHandler.size() + page::kBody.size() +
               page::kScript.size() + 1024);
  // Each file starts on the line after its opening tag.
  absl::StrAppend(&html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", "<title>",
                  HtmlEscape(title), "</title>\n<style>\n", text(page::kStyle), "</style>\n<script>\n",
                  text(page::kErrorHandler), "</script>\n</head>\n<body>\n", text(page::kBody));
  // '<' only occurs inside JSON strings, where \u003c means the same character.
  absl::StrAppend(&html, "<script type=\"application/json\" id=\"cuscope-data\">",
                  absl::StrReplaceAll(text(data_json), {{"<", "\\u003c"}}), "</script>\n<script>\n",
                  text(page::kScript), "</script>\n</body>\n</html>\n");
  return html;
}

std::string RenderHtmlReport(const analysis::Timeline& timeline, const analysis::Analysis& analysis,
                             const std::string& trace_path, const ReportDataOptions& options) {
  return RenderHtmlPage(BuildReportData(timeline, analysis, trace_path, options),
                        absl::StrCat("cuscope report: ", trace_path));
}

}  // namespace cuscope::report
