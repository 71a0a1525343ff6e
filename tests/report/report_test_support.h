// What the report component's tests share: temporary paths, reading a written file back, and the
// JSON document a report page embeds, parsed for assertions.
#ifndef CUSCOPE_TESTS_REPORT_REPORT_TEST_SUPPORT_H_
#define CUSCOPE_TESTS_REPORT_REPORT_TEST_SUPPORT_H_

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace cuscope::testing {

// This process's own folder under $TEST_TMPDIR (or /tmp), made once: process ids are reused on a busy
// machine, so a name made from the id alone may find what an earlier process of that id left.
inline const std::string& ProcessTempDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base ? base : "/tmp", "/cuscope_report_test_XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "cannot make a temporary folder: " << pattern;
    return pattern;
  }();
  return dir;
}

// A path no other test of this process uses, in that folder, with nothing there yet.
inline std::string TempPath(const std::string& stem, const std::string& extension) {
  static std::atomic<int> counter{0};
  return absl::StrCat(ProcessTempDir(), "/", stem, "_", counter++, extension);
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A JSON object, parsed (a failure is a test failure, and an empty object).
inline google::protobuf::Struct ParseJsonObject(const std::string& json) {
  google::protobuf::Struct data;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &data);
  EXPECT_TRUE(status.ok()) << status;
  return data;
}

// The JSON document a report page embeds, parsed.
inline google::protobuf::Struct EmbeddedData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"cuscope-data\">";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  if (begin == std::string::npos) return {};
  const size_t end = page.find("</script>", begin);
  return ParseJsonObject(page.substr(begin + open.size(), end - begin - open.size()));
}

// A member of an object (a missing one is a test failure, and null).
inline const google::protobuf::Value& At(const google::protobuf::Struct& s, const std::string& key) {
  static const google::protobuf::Value kNull;
  auto it = s.fields().find(key);
  EXPECT_NE(it, s.fields().end()) << key;
  return it == s.fields().end() ? kNull : it->second;
}

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_REPORT_REPORT_TEST_SUPPORT_H_
