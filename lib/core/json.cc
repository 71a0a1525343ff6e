#include "lib/core/json.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/numbers.h"

namespace cuscope::core {
namespace {

void AppendUnicodeEscape(uint32_t code, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char digits[] = {'\\', 'u', kHex[(code >> 12) & 15], kHex[(code >> 8) & 15], kHex[(code >> 4) & 15],
                         kHex[code & 15]};
  out->append(digits, sizeof digits);
}

// nlohmann writes strings with what JSON requires escaped (quotes, backslashes, control characters)
// and other UTF-8 as is. A style's further escapes are all of characters that occur in the text only
// inside strings (never in JSON's own syntax), so they are applied to the whole text in one pass.
void AppendStyled(std::string_view text, JsonEscaping escaping, std::string* out) {
  const bool script_safe = escaping == JsonEscaping::kScriptSafe;
  const bool terminal_safe = escaping == JsonEscaping::kTerminalSafe;
  out->reserve(out->size() + text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const auto next = [&](size_t k) -> unsigned char {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
    };
    if (c == 0xef && next(1) == 0xbf && next(2) == 0xbd) {  // U+FFFD: an escape that stands out
      out->append("\\ufffd");
      i += 2;
    } else if (c == 0x7f && escaping != JsonEscaping::kMinimal) {
      AppendUnicodeEscape(c, out);
    } else if (script_safe && (c == '<' || c == '>' || c == '&')) {
      AppendUnicodeEscape(c, out);  // never close or comment out the <script> element
    } else if (script_safe && c == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9)) {
      AppendUnicodeEscape(next(2) == 0xa8 ? 0x2028 : 0x2029, out);  // line ends to older JavaScript
      i += 2;
    } else if (terminal_safe && c == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {
      AppendUnicodeEscape(next(1), out);  // C1 controls drive terminals
      i += 1;
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
}

}  // namespace

void AppendJson(const Json& value, JsonEscaping escaping, std::string* out, int indent) {
  const std::string text = value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  AppendStyled(text, escaping, out);
}

std::string DumpJson(const Json& value, JsonEscaping escaping, int indent) {
  std::string out;
  AppendJson(value, escaping, &out, indent);
  return out;
}

Json JsonNumberValue(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return static_cast<int64_t>(v);
  return v;
}

Json JsonNumberFromText(std::string_view text) {
  if (text.empty()) return nullptr;
  const absl::string_view t(text.data(), text.size());
  if (int64_t i = 0; absl::SimpleAtoi(t, &i)) return i;
  if (uint64_t u = 0; absl::SimpleAtoi(t, &u)) return u;
  // Only a number's characters: SimpleAtod also reads "inf", "nan" and hexadecimal forms.
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) return std::string(text);
  }
  if (double d = 0; absl::SimpleAtod(t, &d)) return JsonNumberValue(d);
  return std::string(text);
}

}  // namespace cuscope::core
