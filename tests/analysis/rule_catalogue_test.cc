// docs/rules.md catalogues every rule: each rule id the code raises (`rule_id = "..."` in lib/)
// has its section there, and every section names a rule the code raises.
#include <dirent.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cuscope::analysis {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void CollectRuleIds(const std::string& dir, std::set<std::string>* ids) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    if (e->d_type == DT_DIR) {
      CollectRuleIds(path, ids);
    } else if (absl::EndsWith(name, ".cc")) {
      const std::string text = Read(path);
      static const std::regex kRuleId("rule_id = \"([a-z_.]+)\"");
      for (std::sregex_iterator it(text.begin(), text.end(), kRuleId), end; it != end; ++it) ids->insert((*it)[1]);
    }
  }
  ::closedir(d);
}

TEST(RuleCatalogueTest, EveryRuleTheCodeRaisesIsCatalogued) {
  std::set<std::string> raised;
  CollectRuleIds(std::string(CUSCOPE_SOURCE_DIR) + "/lib", &raised);
  ASSERT_GE(raised.size(), 15u);
  const std::string catalogue = Read(std::string(CUSCOPE_SOURCE_DIR) + "/docs/rules.md");
  std::set<std::string> sections;
  static const std::regex kSection("\n## ([a-z_.]+)\n");
  for (std::sregex_iterator it(catalogue.begin(), catalogue.end(), kSection), end; it != end; ++it) {
    sections.insert((*it)[1]);
  }
  for (const std::string& id : raised) EXPECT_TRUE(sections.count(id)) << id << " is not in docs/rules.md";
  for (const std::string& id : sections) EXPECT_TRUE(raised.count(id)) << id << " is catalogued but never raised";
}

}  // namespace
}  // namespace cuscope::analysis
