// `cuscope completion bash|zsh`: shell completion scripts generated from the commands' declared
// options (command_catalog.h): the commands after `cuscope`, a command's options after it, file
// names for the rest.
#ifndef CUSCOPE_LIB_CLI_COMPLETION_H_
#define CUSCOPE_LIB_CLI_COMPLETION_H_

#include <string>
#include <vector>

#include "lib/cli/command_catalog.h"

namespace cuscope::cli {

// A script for bash's programmable completion (its function: _cuscope).
std::string BashCompletionScript(const std::vector<CommandDescription>& commands);
// A script for zsh's completion system (#compdef cuscope).
std::string ZshCompletionScript(const std::vector<CommandDescription>& commands);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_COMPLETION_H_
