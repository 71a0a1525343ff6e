// The entry `cuscope attach` calls inside a process it has loaded libcuscope.so into
// (lib/attach/injector.h): the session starts late, from the settings the command wrote.
#ifndef CUSCOPE_LIB_INJECT_ATTACH_ENTRY_H_
#define CUSCOPE_LIB_INJECT_ATTACH_ENTRY_H_

#include "cuscope/export.h"

extern "C" {

// `settings_path`: a file of CUSCOPE_* lines (NAME=VALUE) in the user's 0700 control directory.
// Returns at once (0; 1 when no thread could be made): a thread of cuscope's starts the session, so
// the program's thread that ran this call goes back to its work, and writes the outcome to
// `settings_path` + ".result": "ok PATH" or the one line that says why not. A session already
// active is not replaced.
CUSCOPE_EXPORT int cuscope_attach(const char* settings_path);

}  // extern "C"

#endif  // CUSCOPE_LIB_INJECT_ATTACH_ENTRY_H_
