// What a trigger asks of a session, as data: one type per request, whichever source it came from.
//
// Every way to open or close a window, take a snapshot or run a capture's top-down is a source of
// these commands, and one place runs them (CaptureController::Submit / Post / RunNow), checking
// each against one state machine (window_states.h):
//
//   source                                  command
//   the session's start                     OpenWindow{kSession}
//   --delay / --duration (control thread)   OpenWindow{kDelay} / CloseWindow{kDuration}
//   cudaProfilerStart / Stop                OpenWindow{kProfilerApi} / CloseWindow{kProfilerApi}
//   -c nvtx: the watched range's edges      OpenWindow{kNvtxRange} / CloseWindow{kNvtxRange}
//   the session's end                       EndSession
//   a write that failed                     StopRecording
//   MarkStep over the threshold             Snapshot{kStepThreshold}
//   a slow NVTX step range (detector)       Snapshot{kStepRange}
//   a slow request scope                    Snapshot{kSlowRequest}
//   an idle GPU (detector)                  Snapshot{kIdleGpu}
//   the control socket (`cuscope capture`)  Capture / Snapshot{kControlSocket}
//   the C and C++ API                       OpenTraceWindow / CloseTraceWindow / Snapshot{kApi}
//
// Pure data: nothing here calls CUPTI or touches a session.
#ifndef CUSCOPE_LIB_CUPTI_TRIGGER_COMMANDS_H_
#define CUSCOPE_LIB_CUPTI_TRIGGER_COMMANDS_H_

#include <cstdint>
#include <string>
#include <variant>

namespace cuscope::cupti {

enum class TriggerSource {
  kSession,        // the session's first moment
  kDelay,          // --delay ran out
  kDuration,       // --duration ran out
  kProfilerApi,    // cudaProfilerStart / cudaProfilerStop (and the driver's twins)
  kNvtxRange,      // -c nvtx: the watched NVTX range began or ended
  kSessionEnd,     // the program ends, or the session is stopped
  kWriteFailed,    // the trace could not be written
  kStepThreshold,  // MarkStep: a step longer than the flight threshold
  kStepRange,      // flight mode: an NVTX step range longer than the threshold
  kSlowRequest,    // flight mode: a request scope longer than the threshold
  kIdleGpu,        // flight mode: a GPU idle over the share of its window
  kControlSocket,  // `cuscope capture` / `cuscope snapshot` from outside
  kApi,            // the program, through the C or C++ API
};
// The last source: a new one goes before it is named here, so the names' test covers it.
constexpr TriggerSource kLastTriggerSource = TriggerSource::kApi;

// How each source names itself in the lines the session says.
const char* TriggerSourceName(TriggerSource source);

// A capture's top-down (monitor mode): after its window, kernel metrics on the next
// `launches_each` launches of its `kernels` hottest kernels, waited for at most `wait_seconds`.
struct CaptureTopDown {
  uint32_t kernels = 0;  // 0: a timeline window only
  uint64_t launches_each = 3;
  double wait_seconds = 10;
};

// The session's timeline window opens (activity is recorded); `reason` is the window edge's text in
// the trace.
struct OpenWindow {
  TriggerSource source = TriggerSource::kSession;
  std::string reason;
};
// The open timeline window closes; a top-down chooses its hot kernels a moment later.
struct CloseWindow {
  TriggerSource source = TriggerSource::kSession;
  std::string reason;
};
// The session ends: the open window closes and chooses nothing; nothing opens again.
struct EndSession {};
// Writing failed: recording stops for good, and the GPU counters with it.
struct StopRecording {};
// Monitor mode: every record also goes to the trace for `seconds` (0: until CloseTraceWindow).
struct OpenTraceWindow {
  double seconds = 0;
};
struct CloseTraceWindow {};
// Flight mode: the ring's last seconds, and `after_seconds` more, to `path` (empty: named by the
// session's output, numbered). `why` ends the line that says it was written.
struct Snapshot {
  TriggerSource source = TriggerSource::kApi;
  std::string path;
  double after_seconds = 0;
  bool force_overwrite = false;
  std::string why;
};
// Monitor and flight modes: the next `seconds` of records to `path`; in monitor mode, with
// `top_down.kernels`, the window's hottest kernels are then profiled.
struct Capture {
  TriggerSource source = TriggerSource::kControlSocket;
  std::string path;
  double seconds = 0;
  bool force_overwrite = false;
  CaptureTopDown top_down;
  std::string why;
};

using TriggerCommand = std::variant<OpenWindow, CloseWindow, EndSession, StopRecording, OpenTraceWindow,
                                    CloseTraceWindow, Snapshot, Capture>;

// The command's name as the state machine's table and the lines name it ("OpenWindow", ...).
const char* TriggerCommandName(const TriggerCommand& command);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TRIGGER_COMMANDS_H_
