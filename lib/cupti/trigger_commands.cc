#include "lib/cupti/trigger_commands.h"


namespace cuscope::cupti {

const char* TriggerSourceName(TriggerSource source) {
  switch (source) {
    case TriggerSource::kSession:
      return "session";
    case TriggerSource::kDelay:
      return "delay";
    case TriggerSource::kDuration:
      return "duration";
    case TriggerSource::kProfilerApi:
      return "cudaProfilerApi";
    case TriggerSource::kNvtxRange:
      return "NVTX range";
    case TriggerSource::kSessionEnd:
      return "end";
    case TriggerSource::kWriteFailed:
      return "write failed";
    case TriggerSource::kStepThreshold:
      return "step threshold";
    case TriggerSource::kStepRange:
      return "NVTX step range";
    case TriggerSource::kSlowRequest:
      return "slow request";
    case TriggerSource::kIdleGpu:
      return "idle GPU";
    case TriggerSource::kControlSocket:
      return "control socket";
    case TriggerSource::kApi:
      return "API";
  }
  return "unknown";
}

namespace {

// One overload per command: a command added to the variant without a name does not compile.
struct CommandNamer {
  const char* operator()(const OpenWindow&) const { return "OpenWindow"; }
  const char* operator()(const CloseWindow&) const { return "CloseWindow"; }
  const char* operator()(const EndSession&) const { return "EndSession"; }
  const char* operator()(const StopRecording&) const { return "StopRecording"; }
  const char* operator()(const OpenTraceWindow&) const { return "OpenTraceWindow"; }
  const char* operator()(const CloseTraceWindow&) const { return "CloseTraceWindow"; }
  const char* operator()(const Snapshot&) const { return "Snapshot"; }
  const char* operator()(const Capture&) const { return "Capture"; }
};

}  // namespace

const char* TriggerCommandName(const TriggerCommand& command) { return std::visit(CommandNamer{}, command); }

}  // namespace cuscope::cupti
