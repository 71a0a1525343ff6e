#include "lib/core/terminal_text.h"

#include "lib/core/utf8.h"

namespace cuscope::core {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string* out, const char* prefix, unsigned char c) {
  out->append(prefix);
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 15]);
}

std::string Escape(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) {
        AppendHexByte(&out, "\\x", c);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      AppendHexByte(&out, "\\x", c);
      ++i;
    } else if (n == 2 && IsC1Control(s, i)) {
      // U+0080..U+009F: C1 controls (U+009B is CSI on terminals that take 8-bit controls).
      AppendHexByte(&out, "\\u00", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string EscapeForTerminal(std::string_view s) { return Escape(s, false); }

std::string EscapeTextForTerminal(std::string_view text) { return Escape(text, true); }

std::string ShownValue(std::string_view value, size_t at_most) {
  if (value.size() <= at_most) return std::string(value);
  std::string out(Utf8Prefix(value, at_most));
  out.append("... (").append(std::to_string(value.size())).append(" characters)");
  return out;
}

std::string LineForTerminal(std::string_view message) {
  std::string line = EscapeForTerminal(message);
  if (line.size() > kMaxLineBytes) line = ShownValue(line, kMaxLineBytes);
  return line;
}

}  // namespace cuscope::core
