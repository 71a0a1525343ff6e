// A protobuf message as the project's JSON (lib/core/json.h): protobuf's JSON mapping with the
// proto field names and every field printed, except that 64-bit integers are JSON numbers (the
// mapping writes them as strings, for JavaScript's doubles; every other reader, protobuf's own
// JSON parsers included, takes the number, and the number is what people compare and sum).
#ifndef CUSCOPE_LIB_CORE_PROTO_JSON_H_
#define CUSCOPE_LIB_CORE_PROTO_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "lib/core/json.h"

namespace cuscope::core {

absl::StatusOr<Json> ProtoToJson(const google::protobuf::Message& message);

// ProtoToJson's text, indented by two spaces, in the kTerminalSafe style (printed by commands), or
// {"error": "..."} when the message cannot be written.
std::string ProtoToJsonText(const google::protobuf::Message& message);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_PROTO_JSON_H_
