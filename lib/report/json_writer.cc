#include "lib/report/json_writer.h"

#include <utility>

namespace cuscope::report {

std::string JsonNumber(double v) { return core::DumpJson(core::JsonNumberValue(v), core::JsonEscaping::kScriptSafe); }

core::Json& JsonWriter::Add(core::Json v) {
  if (open_.empty()) {
    root_ = std::move(v);
    return root_;
  }
  core::Json& parent = *open_.back();
  if (parent.is_array()) {
    parent.push_back(std::move(v));
    return parent.back();
  }
  core::Json& member = parent[key_];
  member = std::move(v);
  return member;
}

JsonWriter& JsonWriter::BeginObject() {
  open_.push_back(&Add(core::Json::object()));
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  open_.push_back(&Add(core::Json::array()));
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  key_.assign(key);
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view v) {
  Add(std::string(v));
  return *this;
}

JsonWriter& JsonWriter::Number(double v) {
  Add(core::JsonNumberValue(v));
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  Add(v);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  Add(v);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  Add(v);
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Add(nullptr);
  return *this;
}

JsonWriter& JsonWriter::Value(core::Json v) {
  Add(std::move(v));
  return *this;
}

std::string JsonWriter::str() const { return core::DumpJson(root_, core::JsonEscaping::kScriptSafe); }

}  // namespace cuscope::report
