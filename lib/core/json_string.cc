#include "lib/core/json_string.h"

#include <cstdint>

#include "lib/core/utf8.h"

namespace cuscope::core {
namespace {

void AppendUnicodeEscape(uint32_t code, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char digits[] = {'\\', 'u', kHex[(code >> 12) & 15], kHex[(code >> 8) & 15], kHex[(code >> 4) & 15],
                         kHex[code & 15]};
  out->append(digits, sizeof digits);
}

// The short escape a readable style writes for an ASCII byte, or nullptr when the byte is written
// as is (or is a control character, written as \u00XX).
const char* ReadableEscape(unsigned char c, JsonEscaping escaping) {
  if (escaping == JsonEscaping::kMinimal) return nullptr;
  switch (c) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  if (escaping != JsonEscaping::kScriptSafe) return nullptr;
  switch (c) {
    // Never let the text close or comment out the <script> element it is embedded in.
    case '<':
      return "\\u003c";
    case '>':
      return "\\u003e";
    case '&':
      return "\\u0026";
    default:
      return nullptr;
  }
}

bool IsLineSeparator(std::string_view s, size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xe2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
         (static_cast<unsigned char>(s[i + 2]) == 0xa8 || static_cast<unsigned char>(s[i + 2]) == 0xa9);
}

}  // namespace

void AppendJsonString(std::string_view s, JsonEscaping escaping, std::string* out) {
  const bool script_safe = escaping == JsonEscaping::kScriptSafe;
  const bool terminal_safe = escaping == JsonEscaping::kTerminalSafe;
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else if (const char* escape = ReadableEscape(c, escaping); escape != nullptr) {
        out->append(escape);
      } else if (c < 0x20 || (c == 0x7f && escaping != JsonEscaping::kMinimal)) {
        AppendUnicodeEscape(c, out);
      } else {
        out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (terminal_safe && n == 2 && IsC1Control(s, i)) {
      AppendUnicodeEscape(static_cast<unsigned char>(s[i + 1]), out);
      i += 2;
    } else if (script_safe && n == 3 && IsLineSeparator(s, i)) {
      AppendUnicodeEscape(static_cast<unsigned char>(s[i + 2]) == 0xa8 ? 0x2028 : 0x2029, out);
      i += 3;
    } else {
      out->append(s.data() + i, n);
      i += n;
    }
  }
  out->push_back('"');
}

std::string JsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(s, JsonEscaping::kScriptSafe, &out);
  return out;
}

}  // namespace cuscope::core
