// The escaping styles of the project's JSON writer (lib/core/json.h, nlohmann-json underneath),
// and a JSON string literal alone in one of them.
//
// Strings come from the trace (kernel names, NVTX ranges, command lines), so any byte may occur.
// A sequence of bytes that is not well-formed UTF-8 (overlong forms, surrogates and code points
// above U+10FFFF included) is written as \ufffd, one per maximal invalid sequence (Unicode's
// recommended practice): every consumer (JSON.parse, protobuf's JSON parser, jq, the trace viewers)
// accepts the result. Valid UTF-8 is copied as is, apart from the escapes each style below lists.
#ifndef CUSCOPE_LIB_CORE_JSON_STRING_H_
#define CUSCOPE_LIB_CORE_JSON_STRING_H_

#include <string>
#include <string_view>

namespace cuscope::core {

enum class JsonEscaping {
  // What JSON requires and nothing more: '"' and '\' with a backslash, \b, \f, \n, \r and \t as
  // such, the other control characters below U+0020 as \u00XX. For large files read by programs
  // (the Chrome JSON export).
  kMinimal,
  // Safe inside an HTML <script> element and readable: \b, \f, \n, \r and \t as such, the other control
  // characters and DEL as \u00XX, '<', '>' and '&' as \u003c, \u003e and \u0026 (so "</script>" and
  // "<!--" never appear), U+2028 and U+2029 as escapes (they end a line in older JavaScript
  // parsers). For the report's documents.
  kScriptSafe,
  // Safe to print on a terminal and readable: \b, \f, \n, \r and \t as such, the other control characters,
  // DEL and the C1 controls (U+0080..U+009F) as \u00XX, so the printed JSON cannot drive the
  // terminal; the strings it decodes to are the same. For tables printed as JSON.
  kTerminalSafe,
};

// Appends `s` as a JSON string literal, quotes included, to `out`.
void AppendJsonString(std::string_view s, JsonEscaping escaping, std::string* out);

// `s` as a JSON string literal in the kScriptSafe style.
std::string JsonString(std::string_view s);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_JSON_STRING_H_
