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

// A value as an error line quotes it: whole up to `at_most` bytes, else its first `at_most` bytes
// (at a character's end) and "... (N characters)", so that one line stays one readable line
// whatever a setting or an argument holds. Not escaped: the line is escaped where it is printed.
std::string ShownValue(std::string_view value, size_t at_most = 100);

// One `cuscope:` line as it goes to a terminal from inside a program: escaped, and at most
// kMaxLineBytes long (a message quoting a path or a name the program made is cut, not dropped).
inline constexpr size_t kMaxLineBytes = 2000;
std::string LineForTerminal(std::string_view message);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TERMINAL_TEXT_H_
