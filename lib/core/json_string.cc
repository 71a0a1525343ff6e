#include "lib/core/json_string.h"

#include "lib/core/json.h"

namespace cuscope::core {
namespace {

// Whether the JSON writer would copy `s` as it is: printable ASCII with nothing JSON or the style
// escapes. Most names are (kernel names, API names, paths), and copying them directly keeps the
// Chrome export's millions of strings as fast as a hand-written escaper (nlohmann's dump of a
// string value takes twice as long).
bool WrittenAsIs(std::string_view s, JsonEscaping escaping) {
  const bool script_safe = escaping == JsonEscaping::kScriptSafe;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
    if (script_safe && (c == '<' || c == '>' || c == '&')) return false;
  }
  return true;
}

}  // namespace

void AppendJsonString(std::string_view s, JsonEscaping escaping, std::string* out) {
  if (WrittenAsIs(s, escaping)) {
    out->reserve(out->size() + s.size() + 2);
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  AppendJson(Json(std::string(s)), escaping, out);
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, JsonEscaping::kScriptSafe, &out);
  return out;
}

}  // namespace cuscope::core
