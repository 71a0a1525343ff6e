// The report page's own text, compiled in from the files next to this header (CMake turns each
// into a generated source with page/embed_text.cmake; edit the files, not the generated sources).
// html_report.cc assembles the page from them; each holds its file's bytes exactly.
#ifndef CUSCOPE_LIB_REPORT_PAGE_PAGE_TEXT_H_
#define CUSCOPE_LIB_REPORT_PAGE_PAGE_TEXT_H_

#include <string_view>

namespace cuscope::report::page {

// style.css: the page's style. System fonts only: the report must render offline, anywhere.
extern const std::string_view kStyle;
// error_handler.js: runs before anything else, in <head>, so that even a syntax error in the main
// script is recorded and shown in #script-errors.
extern const std::string_view kErrorHandler;
// body.html: the page's sections, empty until the main script fills them.
extern const std::string_view kBody;
// report.js: the page itself; reads the embedded JSON document (report_data.h) and builds every
// section.
extern const std::string_view kScript;

}  // namespace cuscope::report::page

#endif  // CUSCOPE_LIB_REPORT_PAGE_PAGE_TEXT_H_
