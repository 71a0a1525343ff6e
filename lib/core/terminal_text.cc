#include "lib/core/terminal_text.h"

#include <cstdint>

namespace cuscope::core {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string* out, const char* prefix, unsigned char c) {
  out->append(prefix);
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 15]);
}

// The length of the well-formed UTF-8 sequence at s[i] (2 to 4 bytes, lead byte >= 0x80), or 0:
// a stray continuation byte, a truncated or overlong sequence, a surrogate, above U+10FFFF.
size_t Utf8Length(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp, min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, cp = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, cp = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
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
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      AppendHexByte(&out, "\\x", c);
      ++i;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
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

}  // namespace cuscope::core
