#include "lib/cupti/cupti_attachment.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cuscope::cupti {
namespace {

using S = AttachmentState;
using E = AttachmentEvent;
// The runtime's calls only, as measured (docs/measurements.md): with the driver's on too the
// finalize would mostly run in a driver call's exit nested inside a runtime call, not measured.
constexpr CUpti_CallbackDomain kCallDomain = CUPTI_CB_DOMAIN_RUNTIME_API;
// A failed attach's closing of the gate: the calls in flight are a clock read or a switch.
constexpr std::chrono::milliseconds kGateCloseOnFailure{1000};

}  // namespace

CuptiAttachment::CuptiAttachment(CuptiApi& cupti, CUpti_SubscriberHandle* subscriber, Hooks hooks, CuptiGate* gate)
    : cupti_(cupti), subscriber_(subscriber), hooks_(std::move(hooks)), gate_(gate) {}

bool CuptiAttachment::Move(S from, E event) {
  const std::optional<S> to = NextAttachmentState(from, event);
  if (!to) return false;
  S expected = from;
  return state_.compare_exchange_strong(expected, *to, std::memory_order_acq_rel);
}

AttachmentState CuptiAttachment::Detach(std::chrono::milliseconds wait) {
  if (state() != S::kAttached) return state();
  // What CUPTI holds reaches the writer before CUPTI lets go of it; a flush that fails leaves CUPTI
  // attached (the records may still be there).
  if (!cupti_.FlushAll(/*forced=*/true).ok()) return state();
  // The writer's walk of those buffers calls CUPTI, and so may the session's other threads: both
  // done before the arming, or the detach waits for the next window.
  if ((hooks_.drain && !hooks_.drain()) || (gate_ != nullptr && !gate_->Close(wait))) {
    std::lock_guard<std::mutex> lock(mu_);
    ++figures_.given_up;
    return state();
  }
  // The call callbacks go on before the detach is armed: once armed, a call's exit may finalize
  // CUPTI at any moment, and no CUPTI call of this thread may follow it.
  const bool callbacks_on = cupti_.EnableDomain(*subscriber_, kCallDomain, true).ok();
  if (callbacks_on && Move(S::kAttached, E::kArm)) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto settled = [this] { return state() != S::kArmed && state() != S::kDetaching; };
    settled_.wait_for(lock, wait, settled);
    if (Move(S::kArmed, E::kGiveUp)) {
      ++figures_.given_up;
    } else {
      settled_.wait(lock, settled);  // taken as the wait ended: the finalize returns soon
    }
  }
  const S after = state();
  if (after == S::kAttached || after == S::kPinned) {
    // CUPTI stays: its call callbacks as they were before the detach.
    (void)cupti_.EnableDomain(*subscriber_, kCallDomain, false);
    if (hooks_.enable_callbacks) (void)hooks_.enable_callbacks(*subscriber_);
    if (gate_ != nullptr) gate_->Open();
  } else if (after == S::kDetached) {
    *subscriber_ = nullptr;  // here, not on the program's thread: the session reads it here
  }
  return after;
}

bool CuptiAttachment::AtCallExit(CUpti_CallbackDomain domain) {
  if (domain != kCallDomain) return false;
  if (state_.load(std::memory_order_relaxed) != S::kArmed) return false;
  if (!Move(S::kArmed, E::kTake)) return false;  // another thread's call took it, or a pin
  cupti_.Unsubscribe(*subscriber_);
  const bool finalized = cupti_.Finalize().ok();
  std::lock_guard<std::mutex> lock(mu_);
  if (finalized) ++figures_.detaches;
  (void)Move(S::kDetaching, finalized ? E::kFinalized : E::kFail);
  settled_.notify_all();
  return true;
}

absl::Status CuptiAttachment::Attach() {
  if (!Move(S::kDetached, E::kAttach)) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUPTI is not detached (", AttachmentStateName(state()), "): nothing to attach"));
  }
  absl::Status st = cupti_.RegisterBufferCallbacks(hooks_.buffer_requested, hooks_.buffer_completed);
  if (st.ok()) st = cupti_.Subscribe(hooks_.callback, hooks_.userdata, subscriber_);
  // CUPTI is attached from here: the session's set-up calls it through the gate.
  if (st.ok() && gate_ != nullptr) gate_->Open();
  if (st.ok() && hooks_.set_up) {
    st = hooks_.set_up(*subscriber_);
    if (!st.ok()) {
      // Failed half-way: no callback or call of the session's may reach CUPTI once it is gone.
      if (gate_ != nullptr) (void)gate_->Close(kGateCloseOnFailure);
      cupti_.Unsubscribe(*subscriber_);
      *subscriber_ = nullptr;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (st.ok()) ++figures_.attaches;
  (void)Move(S::kAttaching, st.ok() ? E::kAttached : E::kFail);
  settled_.notify_all();
  return st;
}

bool CuptiAttachment::Pin() {
  while (true) {
    const S s = state();
    if (s == S::kPinned) return true;
    if (s != S::kAttached && s != S::kArmed) return false;
    if (Move(s, E::kPin)) {
      std::lock_guard<std::mutex> lock(mu_);
      settled_.notify_all();  // an armed detach's wait ends now
      return true;
    }
  }
}

bool CuptiAttachment::End() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    settled_.wait(lock, [this] { return state() != S::kDetaching && state() != S::kAttaching; });
    const S s = state();
    if (s == S::kEnded) return false;
    if (Move(s, E::kEnd)) {
      settled_.notify_all();  // an armed detach's wait ends now
      const bool attached = s == S::kAttached || s == S::kArmed || s == S::kPinned;
      // The end flushes and unsubscribes with the session's calls.
      if (attached && gate_ != nullptr) gate_->Open();
      return attached;
    }
  }
}

CuptiAttachment::Figures CuptiAttachment::figures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return figures_;
}

}  // namespace cuscope::cupti
