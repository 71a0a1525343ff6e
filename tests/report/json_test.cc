#include "lib/report/json.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace cuscope::report {
namespace {

TEST(JsonStringTest, EscapesWhatJsonAndHtmlNeed) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(JsonString(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  // Never a literal '<', '>' or '&': the text can neither end a <script> element nor open a comment.
  EXPECT_EQ(JsonString("</script><!--&"), "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
  EXPECT_EQ(JsonString("\xe2\x80\xa8|\xe2\x80\xa9"), "\"\\u2028|\\u2029\"");
}

TEST(JsonStringTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonString("µs · ×"), "\"µs · ×\"");
  EXPECT_EQ(JsonString("\xf0\x9f\x9a\x80"), "\"\xf0\x9f\x9a\x80\"");  // 4-byte sequence
  EXPECT_EQ(JsonString("a\xff"
                       "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(JsonString("\xc3"), "\"\\ufffd\"");                        // cut sequence
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
}

TEST(JsonNumberTest, ShortestExactForm) {
  EXPECT_EQ(JsonNumber(0), "0");
  EXPECT_EQ(JsonNumber(-12), "-12");
  EXPECT_EQ(JsonNumber(123456789012345), "123456789012345");
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(0.435), "0.435");
  EXPECT_EQ(std::stod(JsonNumber(1.0 / 3.0)), 1.0 / 3.0);
  EXPECT_EQ(std::stod(JsonNumber(6.02e23)), 6.02e23);
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonWriterTest, CommasAndNesting) {
  JsonWriter w;
  w.BeginObject().Field("a", uint64_t{1}).Key("b").BeginArray().Int(-1).String("x").BeginObject().EndObject();
  w.BeginArray().EndArray().EndArray().Field("c", true).Key("d").Null().Field("e", 2.5).EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[-1,"x",{},[]],"c":true,"d":null,"e":2.5})");
}

}  // namespace
}  // namespace cuscope::report
