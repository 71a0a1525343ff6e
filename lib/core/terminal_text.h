// Text from a trace (kernel, API, NVTX and thread names, the command line, the host name, metric
// names) is the program's: a hostile or broken trace can carry escape sequences that would rewrite
// the terminal of whoever reads `cuscope analyze`, `dump` or `stats`. Everything printed for a
// person goes through these; JSON and files keep the strings whole (JSON escaping covers them).
#ifndef CUSCOPE_LIB_CORE_TERMINAL_TEXT_H_
#define CUSCOPE_LIB_CORE_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace cuscope::core {

// `s` with every byte a terminal could act on made visible: C0 controls (tab and newline too), DEL
// and bytes that are not UTF-8 as \xHH, C1 controls (U+0080..U+009F) as \u00HH. Printable UTF-8
// is left alone, so names in any script read as they are. For one name or one value.
std::string EscapeForTerminal(std::string_view s);

// The same for a whole rendered text, whose line breaks are kept: only '\n' passes.
std::string EscapeTextForTerminal(std::string_view text);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TERMINAL_TEXT_H_
