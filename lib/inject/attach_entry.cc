#include "lib/inject/attach_entry.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/settings/config.h"
#include "lib/cupti/activity_collector.h"
#include "lib/inject/process_hooks.h"

namespace cuscope::inject {
namespace {

// The settings, or nullopt when the file cannot be read (never a session of defaults instead).
std::optional<std::vector<std::pair<std::string, std::string>>> ReadSettings(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> settings;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos && eq > 0) settings.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return settings;
}

// Written whole, then renamed, so the command never reads half a line.
void WriteOutcome(const std::string& settings_path, const std::string& outcome) {
  const std::string done = settings_path + ".result";
  const std::string partial = done + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << outcome << "\n";
  }
  (void)std::rename(partial.c_str(), done.c_str());
}

void* StartAttachedSession(void* argument) {
  const std::unique_ptr<std::string> path(static_cast<std::string*>(argument));
  std::string outcome;
  const auto settings = ReadSettings(*path);
  if (!settings.has_value()) {
    WriteOutcome(*path, absl::StrCat("cannot read the settings ", *path));
    return nullptr;
  }
  auto config = settings::ParseConfigFromEnvironment(*settings);
  if (!config.ok()) {
    outcome = std::string(config.status().message());
  } else if (cupti::CollectorActive()) {
    outcome = "a cuscope session is already active in this process";
  } else if (absl::Status st = StartWithConfig(*config, "attach"); !st.ok()) {
    outcome = std::string(st.message());
  } else if (absl::Status receives = cupti::CheckCollectorReceivesRecords(1.0); !receives.ok()) {
    // Another CUPTI client was there first: its records stay its own, and no empty trace is left.
    const std::string trace = cupti::CollectorOutputPath();
    (void)StopAndReport(/*quiet=*/true);
    if (!trace.empty()) (void)::unlink(trace.c_str());
    outcome = std::string(receives.message());
  } else {
    outcome = absl::StrCat("ok ", cupti::CollectorOutputPath());
  }
  WriteOutcome(*path, outcome);
  return nullptr;
}

}  // namespace
}  // namespace cuscope::inject

extern "C" int cuscope_attach(const char* settings_path) {
  if (settings_path == nullptr) return 1;
  auto* path = new std::string(settings_path);
  pthread_t thread;
  if (::pthread_create(&thread, nullptr, cuscope::inject::StartAttachedSession, path) != 0) {
    delete path;
    return 1;
  }
  ::pthread_detach(thread);
  return 0;
}
