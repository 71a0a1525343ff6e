#include "lib/cli/source_lines.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lib/analysis/launch_sites.h"
#include "lib/core/terminal_text.h"
#include "lib/symbolize/native_source_lines.h"

namespace cuscope::cli {

void AddSourceLines(core::Trace& trace) { AddSourceLines(trace.dict); }

void AddSourceLines(core::Dictionary& dict) {
  if (const char* off = std::getenv("CUSCOPE_SOURCE_LINES"); off != nullptr && std::strcmp(off, "0") == 0) return;
  if (dict.frame_count() == 0) return;
  const symbolize::SourceLineSummary summary = symbolize::AddNativeSourceLines(
      dict, [](std::string_view module) { return analysis::IsCudaLibrary(module); });
  for (const std::string& note : symbolize::SourceLineNotes(summary)) {
    std::fprintf(stderr, "%s\n", core::EscapeForTerminal(note).c_str());
  }
}

}  // namespace cuscope::cli
