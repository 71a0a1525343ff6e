#include "lib/core/output_name.h"

#include <optional>
#include <set>
#include <string>

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

TEST(OutputNameTest, AHostNameWithAPathIsRefused) {
  OutputNameContext c = Ctx();
  c.host = "../../etc/cron.d/x";
  auto n = ExpandOutputName("run_%h", c);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(std::string(n.status().message()).find("host name"), std::string::npos) << n.status();
  EXPECT_TRUE(ExpandOutputName("run_%p", c).ok());  // only a pattern that uses %h is refused
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

// A %q{VAR} value is part of one file name: it may not lead out of the directory or into another.
TEST(OutputNameTest, AVariableValueWithAPathOrControlCharactersIsRefused) {
  for (const std::string& value : {std::string("../x"), std::string("a/b"), std::string(".."), std::string("/etc/x"),
                                   std::string("x\x1b[2J"), std::string("x\ny"), std::string("x\0y", 3)}) {
    OutputNameContext c = Ctx();
    c.getenv = [value](const std::string& n) -> std::optional<std::string> {
      if (n == "EVIL") return value;
      return std::nullopt;
    };
    auto n = ExpandOutputName("run_%q{EVIL}", c);
    ASSERT_FALSE(n.ok()) << *n;
    EXPECT_NE(std::string(n.status().message()).find("environment variable EVIL"), std::string::npos)
        << n.status();
    EXPECT_EQ(std::string(n.status().message()).find('\x1b'), std::string::npos) << n.status();
  }
  // Dots that do not make "..", and names of one part, are fine.
  OutputNameContext c = Ctx();
  c.getenv = [](const std::string&) -> std::optional<std::string> { return std::string("node-1.rank_3"); };
  EXPECT_EQ(*ExpandOutputName("run_%q{X}", c), "run_node-1.rank_3.cuscope");
}

// %r: the rank as the launcher says (process::LaunchPlace).
TEST(OutputNameTest, PercentRNamesAFileByRank) {
  OutputNameContext ctx;
  ctx.pid = 4242;
  ctx.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "RANK") return "3";
    return std::nullopt;
  };
  auto name = ExpandOutputName("rank_%r", ctx);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "rank_3.cuscope");
  ctx.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  name = ExpandOutputName("rank_%r", ctx);
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "rank_p4242.cuscope") << "outside a launcher: the process id";
}

}  // namespace
}  // namespace cuscope::core
