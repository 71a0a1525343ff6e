// Where the command finds libcuscope.so: CUSCOPE_LIBRARY if set, else ../lib next to the
// executable (the layout of both the build tree and an installation).
#ifndef CUSCOPE_LIB_CLI_LIBRARY_PATH_H_
#define CUSCOPE_LIB_CLI_LIBRARY_PATH_H_

#include <string>

namespace cuscope::cli {

std::string CollectorLibraryPath();

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_LIBRARY_PATH_H_
