#include "lib/report/page/page_text.h"

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/report/html_report.h"

namespace cuscope::report {
namespace {

// A file of lib/report/page/ as it is in the source tree (CUSCOPE_REPORT_PAGE_DIR, set by CMake).
std::string PageFile(const std::string& name) {
  std::ifstream in(std::string(CUSCOPE_REPORT_PAGE_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The build embeds each file byte for byte: report.js is several literals long, so its pieces must
// join without a byte lost or added, and non-ASCII characters (the toolbar's arrows) survive.
TEST(PageTextTest, EmbedsTheFilesExactly) {
  EXPECT_EQ(page::kStyle, PageFile("style.css"));
  EXPECT_EQ(page::kErrorHandler, PageFile("error_handler.js"));
  EXPECT_EQ(page::kBody, PageFile("body.html"));
  EXPECT_EQ(page::kScript, PageFile("report.js"));
  EXPECT_GT(page::kScript.size(), 16000u);
}

// Each file sits in its element, in the order the page needs: the error handler before the body,
// the data before the script that reads it.
TEST(PageTextTest, PageIsAssembledFromTheFiles) {
  const std::string html = RenderHtmlPage("{}", "t");
  const auto at = [&](std::string_view part) { return html.find(std::string(part)); };
  ASSERT_NE(at(page::kStyle), std::string::npos);
  ASSERT_NE(at(page::kScript), std::string::npos);
  EXPECT_TRUE(absl::StrContains(html, std::string("<style>\n") + std::string(page::kStyle) + "</style>"));
  EXPECT_LT(at(page::kErrorHandler), at("<body>"));
  EXPECT_LT(at("<body>"), at(page::kBody));
  EXPECT_LT(at(page::kBody), at("id=\"cuscope-data\""));
  EXPECT_LT(at("id=\"cuscope-data\""), at(page::kScript));
  EXPECT_TRUE(absl::EndsWith(html, std::string(page::kScript) + "</script>\n</body>\n</html>\n"));
}

}  // namespace
}  // namespace cuscope::report
