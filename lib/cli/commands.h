// The `cuscope` command's subcommands. Each takes the arguments after its name and returns the
// process exit code: 0 success, 1 a finding at or above --fail-on, 2 a usage or input error.
#ifndef CUSCOPE_LIB_CLI_COMMANDS_H_
#define CUSCOPE_LIB_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace cuscope::cli {

using Args = std::vector<std::string>;

int RunProfile(const Args& args);  // profile_command.cc
int RunDump(const Args& args);     // dump_command.cc
int RunInfo(const Args& args);     // info_command.cc
int RunAnalyze(const Args& args);  // analyze_command.cc
int RunStats(const Args& args);    // stats_command.cc
int RunMetrics(const Args& args);  // metrics_command.cc
int RunExport(const Args& args);   // export_command.cc
int RunReport(const Args& args);   // report_command.cc
int RunDiff(const Args& args);     // diff_command.cc
int RunLog(const Args& args);      // log_command.cc
int RunCapture(const Args& args);  // capture_command.cc
int RunAttach(const Args& args);   // attach_command.cc
int RunDetach(const Args& args);   // attach_command.cc
int RunStatus(const Args& args);   // status_command.cc
int RunPs(const Args& args);       // status_command.cc
int RunVersion(const Args& args);  // version_command.cc (arguments are ignored)
int RunCompletion(const Args& args);  // completion.cc
int RunMan(const Args& args);         // man_page.cc

// "cuscope X.Y.Z (trace format cuscope.v1)\n": what `cuscope version` prints, and `cuscope info` first.
std::string VersionLine();

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_COMMANDS_H_
