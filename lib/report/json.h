// A small JSON writer for the report component: the data embedded in the HTML report, the output
// of `cuscope diff --format json` and the lines of the tuning log.
//
// Its strings are escaped by json_string.h in the kScriptSafe style: safe to embed in an HTML
// <script> element, and bytes that are not valid UTF-8 (kernel names come from the file) written
// as U+FFFD, so that every consumer (JSON.parse, protobuf's JSON parser, jq) accepts the result.
#ifndef CUSCOPE_LIB_REPORT_JSON_H_
#define CUSCOPE_LIB_REPORT_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/json_string.h"

namespace cuscope::report {

// A finite double in the shortest form that reads back exactly; NaN and infinities as null.
std::string JsonNumber(double v);

// Appends to a string; the caller keeps the structure well formed (Begin/End in pairs, Key before
// each member of an object). Commas are inserted automatically.
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
  // Already formatted JSON (a nested document).
  JsonWriter& Raw(std::string_view json);

  // Key(k) followed by the value.
  JsonWriter& Field(std::string_view k, std::string_view v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const char* v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const std::string& v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, double v) { return Key(k).Number(v); }
  JsonWriter& Field(std::string_view k, uint64_t v) { return Key(k).Uint(v); }
  JsonWriter& Field(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, bool v) { return Key(k).Bool(v); }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Separate();
  std::string out_;
  // Per open container: whether it already has an element (for the comma).
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_JSON_H_
