// The timeline window's state machine, checked against its table (window_states.h), and the
// commands' names.
#include "lib/cupti/window_states.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/cupti/trigger_commands.h"

namespace cuscope::cupti {
namespace window_states_test {

constexpr WindowState kStates[] = {WindowState::kWaiting, WindowState::kOpen, WindowState::kClosed,
                                   WindowState::kStopped, WindowState::kEnded};
constexpr WindowEvent kEvents[] = {WindowEvent::kOpen, WindowEvent::kClose, WindowEvent::kEnd, WindowEvent::kStop};

// The table as window_states.h draws it: rows are states, columns Open, Close, End, Stop.
std::optional<WindowState> Expected(WindowState from, WindowEvent event) {
  using S = WindowState;
  const std::optional<S> none;
  struct Row {
    S from;
    std::optional<S> open, close, end, stop;
  };
  const Row table[] = {
      {S::kWaiting, S::kOpen, none, S::kEnded, S::kStopped},
      {S::kOpen, none, S::kClosed, S::kEnded, S::kStopped},
      {S::kClosed, S::kOpen, none, S::kEnded, S::kStopped},
      {S::kStopped, none, none, S::kEnded, none},
      {S::kEnded, none, none, none, none},
  };
  for (const Row& row : table) {
    if (row.from != from) continue;
    switch (event) {
      case WindowEvent::kOpen:
        return row.open;
      case WindowEvent::kClose:
        return row.close;
      case WindowEvent::kEnd:
        return row.end;
      case WindowEvent::kStop:
        return row.stop;
    }
  }
  ADD_FAILURE() << "no row for " << WindowStateName(from);
  return none;
}

TEST(WindowStatesTest, EveryMoveIsTheTables) {
  for (WindowState from : kStates) {
    for (WindowEvent event : kEvents) {
      EXPECT_EQ(NextWindowState(from, event), Expected(from, event))
          << WindowStateName(from) << " + " << WindowEventName(event);
    }
  }
}

// What a program does with cudaProfilerStart/Stop around its steps, and then ends.
TEST(WindowStatesTest, AProfilerGatedProgramOpensAndClosesUntilTheEnd) {
  WindowState s = WindowState::kWaiting;
  const auto step = [&s](WindowEvent e) {
    std::optional<WindowState> next = NextWindowState(s, e);
    if (next) s = *next;
    return next.has_value();
  };
  EXPECT_FALSE(step(WindowEvent::kClose));  // a stop before any start: nothing
  EXPECT_TRUE(step(WindowEvent::kOpen));
  EXPECT_FALSE(step(WindowEvent::kOpen));  // a second start: one window, one edge
  EXPECT_TRUE(step(WindowEvent::kClose));
  EXPECT_TRUE(step(WindowEvent::kOpen));   // the next step's start opens another
  EXPECT_TRUE(step(WindowEvent::kEnd));
  EXPECT_EQ(s, WindowState::kEnded);
  EXPECT_FALSE(step(WindowEvent::kOpen));  // a start racing the session's end opens nothing
}

// After a failed write nothing opens again (the trace can hold nothing more), and the end still
// comes.
TEST(WindowStatesTest, AFailedWriteLeavesOnlyTheEnd) {
  EXPECT_EQ(NextWindowState(WindowState::kOpen, WindowEvent::kStop), WindowState::kStopped);
  EXPECT_EQ(NextWindowState(WindowState::kStopped, WindowEvent::kOpen), std::nullopt);
  EXPECT_EQ(NextWindowState(WindowState::kStopped, WindowEvent::kClose), std::nullopt);
  EXPECT_EQ(NextWindowState(WindowState::kStopped, WindowEvent::kEnd), WindowState::kEnded);
}

TEST(WindowStatesTest, NamesAreDistinct) {
  std::vector<std::string> names;
  for (WindowState s : kStates) names.push_back(WindowStateName(s));
  for (WindowEvent e : kEvents) names.push_back(WindowEventName(e));
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_NE(names[i], "unknown");
    for (size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  }
}

TEST(TriggerCommandsTest, EachCommandAndSourceHasItsOwnName) {
  const std::vector<TriggerCommand> commands = {OpenWindow{},       CloseWindow{}, EndSession{}, StopRecording{},
                                                OpenTraceWindow{},  CloseTraceWindow{}, Snapshot{}, Capture{}};
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(TriggerCommandName(c));
  EXPECT_EQ(names, (std::vector<std::string>{"OpenWindow", "CloseWindow", "EndSession", "StopRecording",
                                             "OpenTraceWindow", "CloseTraceWindow", "Snapshot", "Capture"}));
  std::vector<std::string> sources;
  for (int i = 0; i <= static_cast<int>(kLastTriggerSource); ++i) {
    sources.push_back(TriggerSourceName(static_cast<TriggerSource>(i)));
    EXPECT_NE(sources.back(), "unknown");
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    for (size_t j = i + 1; j < sources.size(); ++j) EXPECT_NE(sources[i], sources[j]);
  }
}

}  // namespace window_states_test
}  // namespace cuscope::cupti
