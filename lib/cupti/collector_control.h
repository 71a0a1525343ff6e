// The collector as the control socket sees it: requests of `cuscope capture` and `status`
// answered with the active session (activity_collector.h), and what a status names.
#ifndef CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_
#define CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_

#include <string>

#include "cuscope/v1/control.pb.h"
#include "lib/core/config.h"

namespace cuscope::cupti {

// The control server's handler: a status, or a capture started (its file created) or refused.
v1::ControlReply AnswerControlRequest(const v1::ControlRequest& request);

// "trace", "monitor", "flight".
const char* ModeName(core::CollectionMode mode);

// This process's command line, arguments separated by spaces, at most 4 KiB of it.
std::string ProcessCommandLine();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_
