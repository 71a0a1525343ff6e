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

TEST(TableRenderTest, JsonQuoteEscapesControlCharacters) {
  EXPECT_EQ(JsonQuote("a\tb\x01"), "\"a\\tb\\u0001\"");
  // A C1 control (U+0085 in UTF-8) is escaped too.
  EXPECT_EQ(JsonQuote("x\xc2\x85y"), "\"x\\u0085y\"");
}

}  // namespace
}  // namespace cuscope::analysis
