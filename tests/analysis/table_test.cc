// The table renderers on tables built by hand: alignment and digit grouping in text, quoting in
// CSV, nulls in JSON, and the row limit.
#include "lib/analysis/table.h"

#include <string>

#include "gtest/gtest.h"

namespace cuscope::analysis {
namespace {

Table TwoRows() {
  Table t;
  t.name = "demo_sum";
  t.title = "Demo";
  t.columns = {{"Total (ns)", ColumnType::kInteger}, {"Avg", ColumnType::kDecimal}, {"Name", ColumnType::kText}};
  t.rows = {{"1234567", "1234.5", "alpha, \"beta\""}, {"7", "", "gamma"}};
  return t;
}

TEST(TableRenderTest, TextGroupsDigitsRightAlignsNumbersAndDashesEmptyCells) {
  const std::string text = RenderText(TwoRows());
  EXPECT_EQ(text.rfind("Demo (demo_sum):\n\n", 0), 0u) << text;
  EXPECT_NE(text.find("1,234,567  1,234.5  alpha, \"beta\"\n"), std::string::npos) << text;
  // "7" under "1,234,567", the empty average under "1,234.5".
  EXPECT_NE(text.find("        7        -  gamma\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("more rows"), std::string::npos) << text;
}

TEST(TableRenderTest, TextCountsTheRowsPastTheLimit) {
  const std::string text = RenderText(TwoRows(), 1);
  EXPECT_NE(text.find("alpha"), std::string::npos) << text;
  EXPECT_EQ(text.find("gamma"), std::string::npos) << text;
  EXPECT_NE(text.find("... 1 more rows\n"), std::string::npos) << text;
  Table empty = TwoRows();
  empty.rows.clear();
  EXPECT_NE(RenderText(empty).find("(no rows)\n"), std::string::npos);
}

TEST(TableRenderTest, CsvQuotesCellsWithCommasOrQuotes) {
  EXPECT_EQ(RenderCsv(TwoRows()), "Total (ns),Avg,Name\n1234567,1234.5,\"alpha, \"\"beta\"\"\"\n7,,gamma\n");
}

TEST(TableRenderTest, JsonWritesNumbersBareAndEmptyNumbersAsNull) {
  EXPECT_EQ(RenderJson(TwoRows()),
            "{\"report\":\"demo_sum\",\"title\":\"Demo\",\"rows\":["
            "{\"Total (ns)\":1234567,\"Avg\":1234.5,\"Name\":\"alpha, \\\"beta\\\"\"},"
            "{\"Total (ns)\":7,\"Avg\":null,\"Name\":\"gamma\"}]}");
}

TEST(TableTimeUnitTest, NanosecondColumnsMoveTheirDecimalPointAndOthersStay) {
  Table t;
  t.columns = {{"Total (ns)", ColumnType::kInteger}, {"Avg (ns)", ColumnType::kDecimal},
               {"Calls", ColumnType::kInteger}, {"Name (ns)", ColumnType::kText}};
  t.rows = {{"1234567", "12.5", "7", "k"}, {"5", "", "1", "m"}, {"-42", "0", "2", "n"}};
  const Table us = WithTimeUnit(t, TimeUnit::kMicroseconds);
  EXPECT_EQ(us.columns[0].name, "Total (us)");
  EXPECT_EQ(us.columns[0].type, ColumnType::kDecimal);
  EXPECT_EQ(us.columns[1].name, "Avg (us)");
  EXPECT_EQ(us.columns[2].name, "Calls");
  EXPECT_EQ(us.columns[3].name, "Name (ns)");  // a text column is not a time
  EXPECT_EQ(us.rows[0][0], "1234.567");
  EXPECT_EQ(us.rows[0][1], "0.0125");
  EXPECT_EQ(us.rows[1][0], "0.005");
  EXPECT_EQ(us.rows[1][1], "");  // empty stays empty
  EXPECT_EQ(us.rows[2][0], "-0.042");
  EXPECT_EQ(us.rows[0][2], "7");
  EXPECT_EQ(WithTimeUnit(t, TimeUnit::kSeconds).rows[0][0], "0.001234567");
  EXPECT_EQ(WithTimeUnit(t, TimeUnit::kMilliseconds).rows[0][0], "1.234567");
  EXPECT_EQ(WithTimeUnit(t, TimeUnit::kNanoseconds).rows[0][0], "1234567");
}

TEST(TableTimeUnitTest, NsysNamesOfTheUnits) {
  EXPECT_EQ(ParseTimeUnit("nsec"), TimeUnit::kNanoseconds);
  EXPECT_EQ(ParseTimeUnit("usec"), TimeUnit::kMicroseconds);
  EXPECT_EQ(ParseTimeUnit("microseconds"), TimeUnit::kMicroseconds);
  EXPECT_EQ(ParseTimeUnit("msec"), TimeUnit::kMilliseconds);
  EXPECT_EQ(ParseTimeUnit("seconds"), TimeUnit::kSeconds);
  EXPECT_EQ(ParseTimeUnit("sec"), TimeUnit::kSeconds);
  EXPECT_FALSE(ParseTimeUnit("minutes").has_value());
  EXPECT_FALSE(ParseTimeUnit("").has_value());
}

TEST(TableRenderTest, JsonQuoteEscapesControlCharacters) {
  EXPECT_EQ(JsonQuote("a\tb\x01"), "\"a\\tb\\u0001\"");
  // A C1 control (U+0085 in UTF-8) is escaped too.
  EXPECT_EQ(JsonQuote("x\xc2\x85y"), "\"x\\u0085y\"");
}

}  // namespace
}  // namespace cuscope::analysis
