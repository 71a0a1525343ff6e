// The session's timeline window as a state machine: its states, what moves it, and nothing else.
//
// One table decides every move; CaptureController makes each move with a compare-and-swap (the
// moves come from the program's threads inside CUPTI's callbacks and from the control thread, and
// no lock of ours may be held while calling into CUPTI), then does what the move means: the kinds
// on or off, the window's edge queued for the trace.
//
//   from \ event   Open      Close     End       Stop
//   kWaiting       kOpen     -         kEnded    kStopped
//   kOpen          -         kClosed   kEnded    kStopped
//   kClosed        kOpen     -         kEnded    kStopped
//   kStopped       -         -         kEnded    -
//   kEnded         -         -         -         -
//
// "-": the event changes nothing (a second cudaProfilerStart, a window's end after the session's).
// Pure: tested with the table itself (tests/cupti/window_states_test.cc).
#ifndef CUSCOPE_LIB_CUPTI_WINDOW_STATES_H_
#define CUSCOPE_LIB_CUPTI_WINDOW_STATES_H_

#include <optional>

namespace cuscope::cupti {

enum class WindowState {
  kWaiting,  // no window yet (a delay, or waiting for cudaProfilerStart or the NVTX range)
  kOpen,     // activity is being recorded
  kClosed,   // a window closed; cudaProfilerStart or the NVTX range may open another
  kStopped,  // writing failed: nothing is recorded again
  kEnded,    // the session ended
};

enum class WindowEvent {
  kOpen,   // OpenWindow: the session's start, --delay, cudaProfilerStart, the NVTX range's start
  kClose,  // CloseWindow: --duration, cudaProfilerStop, the NVTX range's end
  kEnd,    // EndSession
  kStop,   // StopRecording
};

// The state `event` moves `from` to; nullopt when it changes nothing.
std::optional<WindowState> NextWindowState(WindowState from, WindowEvent event);

const char* WindowStateName(WindowState state);
const char* WindowEventName(WindowEvent event);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_WINDOW_STATES_H_
