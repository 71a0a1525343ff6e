#include "lib/report/json_writer.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace cuscope::report {
namespace {

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
  // Integral values an IEEE double holds exactly are integers; past 2^53, the double's own form.
  EXPECT_EQ(JsonNumber(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(std::stod(JsonNumber(9007199254740992.0 * 4)), 9007199254740992.0 * 4);
}

TEST(JsonWriterTest, CommasAndNesting) {
  JsonWriter w;
  w.BeginObject().Field("a", uint64_t{1}).Key("b").BeginArray().Int(-1).String("x").BeginObject().EndObject();
  w.BeginArray().EndArray().EndArray().Field("c", true).Key("d").Null().Field("e", 2.5).EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[-1,"x",{},[]],"c":true,"d":null,"e":2.5})");
}

TEST(JsonWriterTest, SixtyFourBitIntegersAreExactNumbers) {
  JsonWriter w;
  w.BeginObject().Field("max", std::numeric_limits<uint64_t>::max()).Field("min", std::numeric_limits<int64_t>::min());
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"max":18446744073709551615,"min":-9223372036854775808})");
}

TEST(JsonWriterTest, ScriptSafeStringsAndNestedValues) {
  JsonWriter w;
  w.BeginArray().String("</script>").Value(core::Json{{"k", "a\xff"}}).EndArray();
  EXPECT_EQ(w.str(), R"(["\u003c/script\u003e",{"k":"a\ufffd"}])");
}

}  // namespace
}  // namespace cuscope::report
