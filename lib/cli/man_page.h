// `cuscope man`: the manual page cuscope(1) in troff (man macros), generated from the commands'
// declarations and help (command_catalog.h); the build writes it to share/man/man1/cuscope.1.
#ifndef CUSCOPE_LIB_CLI_MAN_PAGE_H_
#define CUSCOPE_LIB_CLI_MAN_PAGE_H_

#include <string>
#include <vector>

#include "lib/cli/command_catalog.h"

namespace cuscope::cli {

std::string ManPage(const std::vector<CommandDescription>& commands);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_MAN_PAGE_H_
