// The CUSCOPE_* settings as one table: each name with how its value sets a Config.
//
// ParseConfigFromEnvironment (config.h) reads every CUSCOPE_* variable through this table, and an
// unknown one's error lists the table's names; the checks of settings against each other stay
// there. A new setting is one entry here, its field in Config, and its line in docs/collecting.md.
#ifndef CUSCOPE_LIB_SETTINGS_CONFIG_SETTINGS_H_
#define CUSCOPE_LIB_SETTINGS_CONFIG_SETTINGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "lib/settings/config.h"

namespace cuscope::settings {

struct Setting {
  const char* name;
  // Sets `c` from the variable's value, or says what is wrong with it (naming the variable).
  absl::Status (*apply)(const std::string& name, const std::string& value, Config& c);
};

// Every setting, in the order the documentation lists them.
const std::vector<Setting>& Settings();
// The setting of that name; null for a name no setting has.
const Setting* FindSetting(std::string_view name);
// The settings' names, in the table's order.
std::vector<std::string> SettingNames();

}  // namespace cuscope::settings

#endif  // CUSCOPE_LIB_SETTINGS_CONFIG_SETTINGS_H_
