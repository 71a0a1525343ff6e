// The collector as the control socket sees it: requests of `cuscope capture` and `status`
// answered with the active session (activity_collector.h), and what a status names.
#ifndef CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_
#define CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_

#include <functional>
#include <string>

#include "cuscope/v1/control.pb.h"
#include "lib/settings/config.h"

namespace cuscope::cupti {

// The control server's handler: a status, or a capture started (its file created) or refused.
v1::ControlReply AnswerControlRequest(const v1::ControlRequest& request);

// What a detach request (`cuscope detach`) runs, on a thread of its own: the session's stop and
// its summary line (lib/inject sets it). Without one, detach is refused.
void SetDetachHandler(std::function<void()> stop);

// "trace", "monitor", "flight".
const char* ModeName(settings::CollectionMode mode);

// This process's command line, arguments separated by spaces, at most 4 KiB of it.
std::string ProcessCommandLine();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_COLLECTOR_CONTROL_H_
