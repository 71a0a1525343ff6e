#include "lib/core/output_name.h"

#include <set>

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

OutputNameContext Ctx(std::set<std::string> existing = {}) {
  OutputNameContext c;
  c.pid = 4242;
  c.host = "node7";
  c.getenv = [](const std::string& n) -> std::optional<std::string> {
    if (n == "RANK") return std::string("3");
    return std::nullopt;
  };
  c.exists = [existing](const std::string& p) { return existing.count(p) > 0; };
  return c;
}

TEST(OutputNameTest, ExpandsProcessHostAndEnvironment) {
  auto n = ExpandOutputName("run_%h_%p_rank%q{RANK}", Ctx());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, "run_node7_4242_rank3.cuscope");
}

TEST(OutputNameTest, KeepsAnExistingExtensionAndEscapesPercent) {
  EXPECT_EQ(*ExpandOutputName("a%%b.cuscope", Ctx()), "a%b.cuscope");
}

TEST(OutputNameTest, SequenceNumberSkipsExistingFiles) {
  EXPECT_EQ(*ExpandOutputName("report%n", Ctx()), "report1.cuscope");
  EXPECT_EQ(*ExpandOutputName("report%n", Ctx({"report1.cuscope", "report2.cuscope"})), "report3.cuscope");
}

TEST(OutputNameTest, ErrorsNameTheProblem) {
  auto unset = ExpandOutputName("x%q{NOPE}", Ctx());
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(std::string(unset.status().message()).find("NOPE"), std::string::npos);
  EXPECT_FALSE(ExpandOutputName("x%z", Ctx()).ok());
  EXPECT_FALSE(ExpandOutputName("x%", Ctx()).ok());
  EXPECT_FALSE(ExpandOutputName("x%q", Ctx()).ok());
}

}  // namespace
}  // namespace cuscope::core
