#include "lib/core/json_string.h"

#include "lib/core/json.h"

namespace cuscope::core {

void AppendJsonString(std::string_view s, JsonEscaping escaping, std::string* out) {
  AppendJson(Json(std::string(s)), escaping, out);
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, JsonEscaping::kScriptSafe, &out);
  return out;
}

}  // namespace cuscope::core
