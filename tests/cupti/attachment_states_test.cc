// CUPTI's attachment as a state machine (attachment_states.h), checked against its table, and the
// paths a detaching duty cycle takes through it.
#include "lib/cupti/attachment_states.h"

#include <iterator>
#include <optional>

#include "gtest/gtest.h"

namespace cuscope::cupti {
namespace attachment_states_test {

using S = AttachmentState;
using E = AttachmentEvent;

constexpr S kStates[] = {S::kAttached, S::kArmed,  S::kDetaching, S::kDetached,
                         S::kAttaching, S::kPinned, S::kFailed,    S::kEnded};
constexpr E kEvents[] = {E::kArm,    E::kTake, E::kGiveUp, E::kFinalized, E::kAttach,
                         E::kAttached, E::kFail, E::kPin,    E::kEnd};

// The table as attachment_states.h draws it: rows are states, columns the events in kEvents' order.
std::optional<S> Expected(S from, E event) {
  const std::optional<S> none;
  struct Row {
    S from;
    std::optional<S> to[9];
  };
  const Row table[] = {
      {S::kAttached, {S::kArmed, none, none, none, none, none, none, S::kPinned, S::kEnded}},
      {S::kArmed, {none, S::kDetaching, S::kAttached, none, none, none, none, S::kPinned, S::kEnded}},
      {S::kDetaching, {none, none, none, S::kDetached, none, none, S::kFailed, none, none}},
      {S::kDetached, {none, none, none, none, S::kAttaching, none, none, none, S::kEnded}},
      {S::kAttaching, {none, none, none, none, none, S::kAttached, S::kFailed, none, none}},
      {S::kPinned, {none, none, none, none, none, none, none, none, S::kEnded}},
      {S::kFailed, {none, none, none, none, none, none, none, none, S::kEnded}},
      {S::kEnded, {none, none, none, none, none, none, none, none, none}},
  };
  for (const Row& row : table) {
    if (row.from != from) continue;
    for (size_t i = 0; i < std::size(kEvents); ++i) {
      if (kEvents[i] == event) return row.to[i];
    }
  }
  ADD_FAILURE() << "no row for " << AttachmentStateName(from);
  return none;
}

TEST(AttachmentStatesTest, EveryMoveIsTheTables) {
  for (S from : kStates) {
    for (E event : kEvents) {
      EXPECT_EQ(NextAttachmentState(from, event), Expected(from, event))
          << AttachmentStateName(from) << " + " << AttachmentEventName(event);
    }
  }
}

// cuscope calls CUPTI only where no finalize can be under way and CUPTI is not detached.
TEST(AttachmentStatesTest, CuptiMayBeCalledOnlyWhileAttachedOrPinned) {
  for (S s : kStates) {
    EXPECT_EQ(MayCallCupti(s), s == S::kAttached || s == S::kPinned) << AttachmentStateName(s);
  }
}

// Steps a state through events; each returns whether it moved.
class Walk {
 public:
  bool operator()(E event) {
    const std::optional<S> next = NextAttachmentState(state_, event);
    if (next) state_ = *next;
    return next.has_value();
  }
  S state() const { return state_; }

 private:
  S state_ = S::kAttached;
};

// Window after window: detached between them, attached again for each, and the end while detached.
TEST(AttachmentStatesTest, ADutyCycleDetachesBetweenWindowsUntilTheEnd) {
  Walk walk;
  for (int window = 0; window < 3; ++window) {
    EXPECT_TRUE(walk(E::kArm));
    EXPECT_TRUE(walk(E::kTake));
    EXPECT_FALSE(walk(E::kTake));  // a second thread's call exit finds it taken
    EXPECT_EQ(walk.state(), S::kDetaching);
    EXPECT_TRUE(walk(E::kFinalized));
    EXPECT_FALSE(MayCallCupti(walk.state()));  // the clock, names, flushes: none from CUPTI now
    EXPECT_TRUE(walk(E::kAttach));
    EXPECT_TRUE(walk(E::kAttached));
    EXPECT_TRUE(MayCallCupti(walk.state()));
  }
  EXPECT_TRUE(walk(E::kArm));
  EXPECT_TRUE(walk(E::kTake));
  EXPECT_FALSE(walk(E::kEnd));  // the end waits for the finalize under way
  EXPECT_TRUE(walk(E::kFinalized));
  EXPECT_TRUE(walk(E::kEnd));
  EXPECT_EQ(walk.state(), S::kEnded);
  EXPECT_FALSE(walk(E::kAttach));  // a window's attach racing the end attaches nothing
}

// A program that makes no runtime call for a while: the detach is given up, CUPTI stays, and the
// next window needs no attach (it would change nothing).
TEST(AttachmentStatesTest, ADetachNoCallTookIsGivenUpAndCuptiStays) {
  Walk walk;
  EXPECT_TRUE(walk(E::kArm));
  EXPECT_TRUE(walk(E::kGiveUp));
  EXPECT_EQ(walk.state(), S::kAttached);
  EXPECT_TRUE(MayCallCupti(walk.state()));
  EXPECT_FALSE(walk(E::kAttach));
  EXPECT_FALSE(walk(E::kTake));  // a call exit after the give-up finds nothing to take
}

// What a detach would lose (GPU counters, a capture, a profiler range) pins the session while
// attached; while detached the caller must attach first.
TEST(AttachmentStatesTest, APinHoldsCuptiForGoodAndWaitsForAnAttach) {
  Walk walk;
  EXPECT_TRUE(walk(E::kArm));
  EXPECT_TRUE(walk(E::kTake));
  EXPECT_FALSE(walk(E::kPin));  // detaching: refused
  EXPECT_TRUE(walk(E::kFinalized));
  EXPECT_FALSE(walk(E::kPin));  // detached: refused, attach first
  EXPECT_TRUE(walk(E::kAttach));
  EXPECT_FALSE(walk(E::kPin));  // attaching: refused until it is done
  EXPECT_TRUE(walk(E::kAttached));
  EXPECT_TRUE(walk(E::kPin));
  EXPECT_FALSE(walk(E::kArm));  // pinned: never detached again
  EXPECT_TRUE(MayCallCupti(walk.state()));
  EXPECT_TRUE(walk(E::kEnd));

  Walk armed;
  EXPECT_TRUE(armed(E::kArm));
  EXPECT_TRUE(armed(E::kPin));  // armed, not yet taken: the pin disarms it
  EXPECT_FALSE(armed(E::kTake));
  EXPECT_EQ(armed.state(), S::kPinned);
}

// A failed finalize or attach leaves the session recording nothing, with no CUPTI call made again.
TEST(AttachmentStatesTest, AFailedFinalizeOrAttachEndsRecordingForGood) {
  Walk finalize;
  EXPECT_TRUE(finalize(E::kArm));
  EXPECT_TRUE(finalize(E::kTake));
  EXPECT_TRUE(finalize(E::kFail));
  EXPECT_EQ(finalize.state(), S::kFailed);
  EXPECT_FALSE(MayCallCupti(finalize.state()));
  EXPECT_FALSE(finalize(E::kAttach));
  EXPECT_FALSE(finalize(E::kArm));

  Walk attach;
  for (E e : {E::kArm, E::kTake, E::kFinalized, E::kAttach}) EXPECT_TRUE(attach(e));
  EXPECT_TRUE(attach(E::kFail));
  EXPECT_EQ(attach.state(), S::kFailed);
  EXPECT_FALSE(MayCallCupti(attach.state()));
  EXPECT_TRUE(attach(E::kEnd));
}

TEST(AttachmentStatesTest, EveryStateAndEventHasAName) {
  for (S s : kStates) EXPECT_STRNE(AttachmentStateName(s), "unknown");
  for (E e : kEvents) EXPECT_STRNE(AttachmentEventName(e), "unknown");
}

}  // namespace attachment_states_test
}  // namespace cuscope::cupti
