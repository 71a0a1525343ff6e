// A builder for the report component's JSON documents: the data embedded in the HTML report, the
// output of `cuscope diff --format json` and the lines of the tuning log. It builds a
// core::Json value (nlohmann-json, lib/core/json.h) in the order of the calls and writes it in the
// kScriptSafe style: safe to embed in an HTML <script> element, and bytes that are not valid UTF-8
// (kernel names come from the file) written as U+FFFD, so that every consumer (JSON.parse,
// protobuf's JSON parser, jq) accepts the result.
#ifndef CUSCOPE_LIB_REPORT_JSON_WRITER_H_
#define CUSCOPE_LIB_REPORT_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/json.h"

namespace cuscope::report {

// A finite double in the shortest form that reads back exactly (an integral value below 2^53 as
// an integer); NaN and infinities as null.
std::string JsonNumber(double v);

// The caller keeps the structure well formed (Begin/End in pairs, Key before each member of an
// object).
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view v);
  JsonWriter& Number(double v);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // A value built elsewhere (a nested document).
  JsonWriter& Value(core::Json v);

  // Key(k) followed by the value.
  JsonWriter& Field(std::string_view k, std::string_view v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const char* v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const std::string& v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, double v) { return Key(k).Number(v); }
  JsonWriter& Field(std::string_view k, uint64_t v) { return Key(k).Uint(v); }
  JsonWriter& Field(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, bool v) { return Key(k).Bool(v); }

  // The document as JSON text (kScriptSafe).
  std::string str() const;
  std::string Take() const { return str(); }

 private:
  // Adds `v` where the document is: the root, the open array's next element or the open object's
  // member under the last Key. Returns the added value.
  core::Json& Add(core::Json v);

  core::Json root_;
  // The open containers, innermost last. Only the innermost one grows, so the pointers to the
  // ones around it stay valid.
  std::vector<core::Json*> open_;
  std::string key_;
};

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_JSON_WRITER_H_
