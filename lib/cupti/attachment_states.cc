#include "lib/cupti/attachment_states.h"

namespace cuscope::cupti {

std::optional<AttachmentState> NextAttachmentState(AttachmentState from, AttachmentEvent event) {
  using S = AttachmentState;
  using E = AttachmentEvent;
  switch (from) {
    case S::kAttached:
      if (event == E::kArm) return S::kArmed;
      if (event == E::kPin) return S::kPinned;
      if (event == E::kEnd) return S::kEnded;
      return std::nullopt;
    case S::kArmed:
      if (event == E::kTake) return S::kDetaching;
      if (event == E::kGiveUp) return S::kAttached;
      if (event == E::kPin) return S::kPinned;
      if (event == E::kEnd) return S::kEnded;
      return std::nullopt;
    case S::kDetaching:
      // The finalize is under way on a program thread: only its outcome moves the state.
      if (event == E::kFinalized) return S::kDetached;
      if (event == E::kFail) return S::kFailed;
      return std::nullopt;
    case S::kDetached:
      if (event == E::kAttach) return S::kAttaching;
      if (event == E::kEnd) return S::kEnded;
      return std::nullopt;
    case S::kAttaching:
      if (event == E::kAttached) return S::kAttached;
      if (event == E::kFail) return S::kFailed;
      return std::nullopt;
    case S::kPinned:
    case S::kFailed:
      if (event == E::kEnd) return S::kEnded;
      return std::nullopt;
    case S::kEnded:
      return std::nullopt;
  }
  return std::nullopt;
}

bool MayCallCupti(AttachmentState state) {
  switch (state) {
    case AttachmentState::kAttached:
    case AttachmentState::kPinned:
      return true;
    case AttachmentState::kArmed:  // a program call's exit may finalize CUPTI at any moment
    case AttachmentState::kDetaching:  // only the detaching thread, which owns the finalize
    case AttachmentState::kDetached:
    case AttachmentState::kAttaching:  // only the attaching thread
    case AttachmentState::kFailed:
    case AttachmentState::kEnded:
      return false;
  }
  return false;
}

const char* AttachmentStateName(AttachmentState state) {
  switch (state) {
    case AttachmentState::kAttached:
      return "attached";
    case AttachmentState::kArmed:
      return "armed";
    case AttachmentState::kDetaching:
      return "detaching";
    case AttachmentState::kDetached:
      return "detached";
    case AttachmentState::kAttaching:
      return "attaching";
    case AttachmentState::kPinned:
      return "pinned";
    case AttachmentState::kFailed:
      return "failed";
    case AttachmentState::kEnded:
      return "ended";
  }
  return "unknown";
}

const char* AttachmentEventName(AttachmentEvent event) {
  switch (event) {
    case AttachmentEvent::kArm:
      return "Arm";
    case AttachmentEvent::kTake:
      return "Take";
    case AttachmentEvent::kGiveUp:
      return "GiveUp";
    case AttachmentEvent::kFinalized:
      return "Finalized";
    case AttachmentEvent::kAttach:
      return "Attach";
    case AttachmentEvent::kAttached:
      return "Attached";
    case AttachmentEvent::kFail:
      return "Fail";
    case AttachmentEvent::kPin:
      return "Pin";
    case AttachmentEvent::kEnd:
      return "End";
  }
  return "unknown";
}

}  // namespace cuscope::cupti
