// Well-formed UTF-8, as the escapers that print or embed strings from a trace see it: one place
// decides which bytes are a character and which are a C1 control.
#ifndef CUSCOPE_LIB_CORE_UTF8_H_
#define CUSCOPE_LIB_CORE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cuscope::core {

// The length of the well-formed UTF-8 sequence at s[i] (1 for ASCII, 2 to 4 otherwise), or 0: a
// stray continuation byte, a truncated or overlong sequence, a surrogate, above U+10FFFF.
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
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

// Whether the two-byte sequence at s[i] (Utf8SequenceLength 2) is a C1 control, U+0080..U+009F.
inline bool IsC1Control(std::string_view s, size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
}

// The longest prefix of `s` of at most `max_bytes` that does not end inside a multi-byte sequence
// (for cutting a name to a size: the cut never makes a well-formed string ill-formed).
inline std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  // Step back over continuation bytes to the start of the sequence the cut falls in.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80 && max_bytes - end < 3) --end;
  return s.substr(0, end);
}

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_UTF8_H_
