// The commands of `cuscope`: the one list main.cc runs them from, and what each declares, which
// `cuscope completion` and `cuscope man` are generated from (completion.cc, man_page.cc).
#ifndef CUSCOPE_LIB_CLI_COMMAND_CATALOG_H_
#define CUSCOPE_LIB_CLI_COMMAND_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"

namespace cuscope::cli {

struct Command {
  const char* name;
  int (*run)(const Args& args);
  const char* summary;  // one line, as `cuscope --help` says it
};

// Every command, in the order `cuscope --help` lists them.
const std::vector<Command>& Commands();
// The command named `name`, or null.
const Command* FindCommand(std::string_view name);

// A command as its declarations and its help describe it.
struct CommandDescription {
  std::string name;
  std::string summary;
  std::string usage;  // what `cuscope NAME --help` prints
  std::vector<ArgumentParser::Declaration> options;
  bool takes_positional = false;  // files (traces, mostly) or a program to run
};

// Runs each command's --help with its output captured (the usage) and its parsers' declarations
// recorded. The commands read nothing and run nothing on --help.
std::vector<CommandDescription> DescribeCommands();

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_COMMAND_CATALOG_H_
