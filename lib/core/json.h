// The project's one JSON writer: documents are nlohmann::ordered_json values (members keep the
// order they were added in), written by DumpJson in one of the escaping styles of json_string.h.
//
// Every JSON the project writes goes through here: the report's documents, `diff` and the tuning
// log, the tables printed as JSON (`stats`, `analyze`'s tables), `analyze --format json` and
// `status --format json` (protobuf messages, see ProtoToJson) and the Chrome trace-event export.
// Numbers are typed: integers as JSON integers (64-bit ones included), other numbers in the
// shortest form that reads back exactly, NaN and infinities as null.
#ifndef CUSCOPE_LIB_CORE_JSON_H_
#define CUSCOPE_LIB_CORE_JSON_H_

#include <string>
#include <string_view>

#include "lib/core/json_string.h"
#include "nlohmann/json.hpp"

namespace cuscope::core {

using Json = nlohmann::ordered_json;

// `value` as JSON text on one line (indent < 0) or indented by `indent` spaces. Bytes of strings
// that are not valid UTF-8 are written as U+FFFD (as \ufffd), one per maximal invalid sequence.
std::string DumpJson(const Json& value, JsonEscaping escaping, int indent = -1);

// Appends `value` as DumpJson writes it.
void AppendJson(const Json& value, JsonEscaping escaping, std::string* out, int indent = -1);

// A number as a JSON value: an integral value below 2^53 in magnitude as an integer (so that a
// count kept in a double is written 3, not 3.0), NaN and infinities as null, else the double.
Json JsonNumberValue(double v);

// A cell of a numeric table column (written as digits, a sign, a point or an exponent) as a typed
// JSON number: an integer where it is one (64-bit values exact), else a double; empty as null.
// A cell that is not a number stays a string.
Json JsonNumberFromText(std::string_view text);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_JSON_H_
