#include "lib/core/proto_json.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace cuscope::core {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

void TypeIntegers(const Descriptor* type, Json* object);

// One value of `field` (an element, for a repeated field).
void TypeValue(const FieldDescriptor* field, Json* value) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64:
      if (int64_t v = 0; value->is_string() && absl::SimpleAtoi(value->get_ref<const std::string&>(), &v)) *value = v;
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      if (uint64_t v = 0; value->is_string() && absl::SimpleAtoi(value->get_ref<const std::string&>(), &v)) *value = v;
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      // The well-known types have JSON forms of their own (a Value is any JSON value).
      if (field->message_type()->file()->package() != "google.protobuf") TypeIntegers(field->message_type(), value);
      break;
    default:
      break;
  }
}

void TypeIntegers(const Descriptor* type, Json* object) {
  if (!object->is_object()) return;
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    const auto it = object->find(field->name());
    if (it == object->end()) continue;
    if (field->is_map()) {
      const FieldDescriptor* value_field = field->message_type()->map_value();
      for (auto& entry : it->items()) TypeValue(value_field, &entry.value());
    } else if (field->is_repeated()) {
      for (Json& element : *it) TypeValue(field, &element);
    } else {
      TypeValue(field, &*it);
    }
  }
}

}  // namespace

absl::StatusOr<Json> ProtoToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  if (const auto status = google::protobuf::util::MessageToJsonString(message, &text, options); !status.ok()) {
    return absl::InternalError(absl::StrCat("cannot write ", message.GetTypeName(), " as JSON: ",
                                            std::string(status.message())));
  }
  Json json = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InternalError(absl::StrCat(message.GetTypeName(), "'s JSON did not read back"));
  TypeIntegers(message.GetDescriptor(), &json);
  return json;
}

std::string ProtoToJsonText(const google::protobuf::Message& message) {
  absl::StatusOr<Json> json = ProtoToJson(message);
  if (!json.ok()) json = Json{{"error", std::string(json.status().message())}};
  return DumpJson(*json, JsonEscaping::kTerminalSafe, /*indent=*/2);
}

}  // namespace cuscope::core
