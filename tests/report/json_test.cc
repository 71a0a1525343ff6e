#include "lib/report/json.h"

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
}

TEST(JsonWriterTest, CommasAndNesting) {
  JsonWriter w;
  w.BeginObject().Field("a", uint64_t{1}).Key("b").BeginArray().Int(-1).String("x").BeginObject().EndObject();
  w.BeginArray().EndArray().EndArray().Field("c", true).Key("d").Null().Field("e", 2.5).EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[-1,"x",{},[]],"c":true,"d":null,"e":2.5})");
}

}  // namespace
}  // namespace cuscope::report
