// The one table of CUSCOPE_* settings: every name is read, every name is documented, an unknown
// one's error lists them all.
#include "lib/settings/config_settings.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "lib/settings/config.h"

namespace cuscope::settings {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ConfigSettingsTest, EachNameOnceAndFoundByItsName) {
  std::set<std::string> seen;
  for (const Setting& s : Settings()) {
    EXPECT_TRUE(seen.insert(s.name).second) << s.name << " twice";
    EXPECT_EQ(std::string(s.name).rfind("CUSCOPE_", 0), 0u) << s.name;
    EXPECT_EQ(FindSetting(s.name), &s);
  }
  EXPECT_GE(seen.size(), 40u);
  EXPECT_EQ(FindSetting("CUSCOPE_BOGUS"), nullptr);
  EXPECT_EQ(FindSetting("CUSCOPE_OUTPU"), nullptr);
}

TEST(ConfigSettingsTest, AnUnknownSettingsErrorListsEveryKnownOne) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_BOGUS", "1"}});
  ASSERT_FALSE(c.ok());
  const std::string message(c.status().message());
  EXPECT_NE(message.find("unknown setting CUSCOPE_BOGUS"), std::string::npos) << message;
  for (const std::string& name : SettingNames()) EXPECT_NE(message.find(name), std::string::npos) << name;
}

TEST(ConfigSettingsTest, EverySettingIsNamedInTheCollectingGuide) {
  const std::string guide = Read(std::string(CUSCOPE_SOURCE_DIR) + "/docs/collecting.md");
  ASSERT_FALSE(guide.empty());
  for (const std::string& name : SettingNames()) {
    EXPECT_NE(guide.find("`" + name + "`"), std::string::npos) << name << " is not in docs/collecting.md";
  }
}

}  // namespace
}  // namespace cuscope::settings
