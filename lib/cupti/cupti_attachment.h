// Detaching CUPTI from the process between a duty cycle's windows, and attaching it again for the
// next: the moves of attachment_states.h made with CUPTI, on the threads CUPTI allows.
//
// The detach (the collector's thread, recording already off): a forced flush, then the runtime's
// call callbacks on, and a wait of at most `wait` for a program thread's runtime call to reach its
// exit callback, which calls AtCallExit: it unsubscribes and finalizes CUPTI right there, as
// CUPTI's guide asks (elsewhere, a thread still inside CUPTI may crash). The runtime's calls only,
// as measured: a program that makes driver calls alone never detaches (each detach is given up).
// One call takes it (a compare-and-swap); a call that comes after the wait gave up finds nothing
// to take. Given up (the program made no call in time), CUPTI stays: the runtime's domain goes off
// again and the session's standing callbacks on (`enable_callbacks`), as before the detach.
//
// The attach (the collector's thread, before the next window): the buffer callbacks, the
// subscriber and what the session set up once (`set_up`: thread id type, flush period, standing
// callbacks), all of which CUPTI forgot. From the arming to the end of the attach MayCallCupti()
// is false: any other CUPTI call (a timestamp, a flush, a callback's name) could meet a finalize
// under way, or attach CUPTI again outside the schedule.
//
// The session's own calls (cupti_gate.h): with a gate, the detach closes it before arming, after
// `drain` says the writer walked every buffer the forced flush handed over (a buffer's walk calls
// CUPTI too), and the attach opens it again once CUPTI is set up. A detach given up or pinned
// opens it again; a failed finalize or attach leaves it closed (nothing of the session's may call
// CUPTI then). The session's callback on the program's threads must, while MayCallCupti() is
// false, do nothing but AtCallExit: what it would call otherwise is refused by the gate anyway.
//
// Detach, Attach and End are called from one thread at a time (the collector's; the session's end
// after that thread stopped).
//
// Pin() keeps CUPTI for good (something the session needs would not survive a detach); refused
// while detaching, detached or attaching: attach first. A failed finalize or attach leaves the
// state kFailed, and the session must turn profiling off (its one `cuscope:` line): CUPTI is then
// in a state it did not choose.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_ATTACHMENT_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_ATTACHMENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include <cupti.h>

#include "absl/status/status.h"
#include "lib/cupti/attachment_states.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/cupti_gate.h"

namespace cuscope::cupti {

class CuptiAttachment {
 public:
  struct Hooks {
    // The session's callback and its userdata, subscribed again at each attach.
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    CUpti_BuffersCallbackRequestFunc buffer_requested = nullptr;
    CUpti_BuffersCallbackCompleteFunc buffer_completed = nullptr;
    // What the session set up once after subscribing, set up again at each attach.
    std::function<absl::Status(CUpti_SubscriberHandle)> set_up;
    // The callbacks the session keeps on between windows, on again after a detach given up.
    std::function<absl::Status(CUpti_SubscriberHandle)> enable_callbacks;
    // Waits until the writer walked every buffer handed over so far; false when it did not in
    // time (the detach is left for the next window). Null: nothing to wait for.
    std::function<bool()> drain;
  };
  // How often CUPTI was detached, a detach given up, CUPTI attached again: the session's figures.
  struct Figures {
    uint64_t detaches = 0;
    uint64_t given_up = 0;  // no program call within the wait, or the writer or the gate not ready
    uint64_t attaches = 0;
  };

  // `subscriber`: the session's, subscribed and set up; this object replaces it at each attach.
  // `cupti` is the CuptiApi underneath the gate; `gate` may be null (nothing else calls CUPTI).
  CuptiAttachment(CuptiApi& cupti, CUpti_SubscriberHandle* subscriber, Hooks hooks, CuptiGate* gate = nullptr);

  // The collector's thread, recording off. Returns the state after: kDetached, kAttached (given
  // up, or the writer or a call in flight through the gate not done in time), kPinned (pinned
  // meanwhile, or pinned before), kFailed, or kEnded.
  AttachmentState Detach(std::chrono::milliseconds wait);
  // The session's callback, at a call's exit: true when this runtime call carried the detach
  // (CUPTI is gone: the callback must not call CUPTI again before it returns).
  bool AtCallExit(CUpti_CallbackDomain domain);
  // The collector's thread, while detached. On failure the state is kFailed, and nothing of the
  // session stays subscribed.
  absl::Status Attach();
  // Any thread: true when CUPTI now stays attached for good.
  bool Pin();
  // The session's end: waits for a detach under way; true when CUPTI is attached (the end must
  // flush and unsubscribe), false when detached (nothing of CUPTI's is left to end).
  bool End();

  AttachmentState state() const { return state_.load(std::memory_order_acquire); }
  bool MayCallCupti() const { return cupti::MayCallCupti(state()); }
  Figures figures() const;

 private:
  // One move of the table by compare-and-swap from `from`; false when the state was not `from` or
  // the table has no such move.
  // Every move a waiter (Detach, End) waits for is made or followed by a notify under mu_.
  bool Move(AttachmentState from, AttachmentEvent event);

  CuptiApi& cupti_;
  CUpti_SubscriberHandle* const subscriber_;
  const Hooks hooks_;
  CuptiGate* const gate_;
  std::atomic<AttachmentState> state_{AttachmentState::kAttached};
  mutable std::mutex mu_;
  std::condition_variable settled_;  // the state left kArmed, kDetaching or kAttaching
  Figures figures_;                  // mu_
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_ATTACHMENT_H_
