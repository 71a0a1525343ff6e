#include "lib/cupti/window_states.h"

namespace cuscope::cupti {

std::optional<WindowState> NextWindowState(WindowState from, WindowEvent event) {
  // Nothing leaves kEnded; after a failed write only the end moves the window.
  if (from == WindowState::kEnded) return std::nullopt;
  switch (event) {
    case WindowEvent::kOpen:
      if (from == WindowState::kWaiting || from == WindowState::kClosed) return WindowState::kOpen;
      return std::nullopt;
    case WindowEvent::kClose:
      if (from == WindowState::kOpen) return WindowState::kClosed;
      return std::nullopt;
    case WindowEvent::kEnd:
      return WindowState::kEnded;
    case WindowEvent::kStop:
      if (from == WindowState::kStopped) return std::nullopt;
      return WindowState::kStopped;
  }
  return std::nullopt;
}

const char* WindowStateName(WindowState state) {
  switch (state) {
    case WindowState::kWaiting:
      return "waiting";
    case WindowState::kOpen:
      return "open";
    case WindowState::kClosed:
      return "closed";
    case WindowState::kStopped:
      return "stopped";
    case WindowState::kEnded:
      return "ended";
  }
  return "unknown";
}

const char* WindowEventName(WindowEvent event) {
  switch (event) {
    case WindowEvent::kOpen:
      return "Open";
    case WindowEvent::kClose:
      return "Close";
    case WindowEvent::kEnd:
      return "End";
    case WindowEvent::kStop:
      return "Stop";
  }
  return "unknown";
}

}  // namespace cuscope::cupti
