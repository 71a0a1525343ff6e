// CUPTI's attachment to the process as a state machine: a duty cycle that detaches CUPTI between
// its windows, and what may stop it. Its states, what moves it, and nothing else.
//
// Why detach: once CUPTI has recorded in a process, switching the kinds off leaves the program's
// launches dearer until CUPTI is finalized (on an H100, tiny PyTorch kernels: a 1% duty cycle
// attached throughout +3.5 us a kernel, +29-38%; the same detaching between windows +0.5 to +0.6 us,
// within the plain run's spread; docs/measurements.md). Detaching is CUPTI's "dynamic detach": a
// forced flush, then unsubscribe and cuptiFinalize at the exit of one of the program's runtime
// calls (elsewhere a thread still inside CUPTI may crash). It took 1.7-2.0 ms of that call;
// attaching again (buffer callbacks, subscriber, the session's callbacks) 8.8-10.6 ms of the
// collector's thread.
//
//   from \ event  Arm       Take       GiveUp     Finalized  Attach     Attached   Fail      Pin       End
//   kAttached     kArmed    -          -          -          -          -          -         kPinned   kEnded
//   kArmed        -         kDetaching kAttached  -          -          -          -         kPinned   kEnded
//   kDetaching    -         -          -          kDetached  -          -          kFailed   -         -
//   kDetached     -         -          -          -          kAttaching -          -         -         kEnded
//   kAttaching    -         -          -          -          -          kAttached  kFailed   -         -
//   kPinned       -         -          -          -          -          -          -         -         kEnded
//   kFailed       -         -          -          -          -          -          -         -         kEnded
//   kEnded        -         -          -          -          -          -          -         -         -
//
// Arm: a window closed and its records were flushed; the runtime's call callbacks are on for the
// detach. Take: a program thread's call exit owns the detach (one owner: the move is a
// compare-and-swap). GiveUp: no call came in time (a program idle in its own code): CUPTI stays,
// the next window needs no attach. Finalized / Fail from kDetaching: the finalize returned or
// failed. Attach / Attached / Fail from kAttaching: the next window's attach. Either failure turns
// profiling off (the session's one `cuscope:` line): CUPTI is then in a state the session did not
// choose, and the program must run on untouched. Pin: something the
// session needs would not survive a detach (GPU counters, kernel metrics and the top-down, a
// cudaProfilerStart/Stop or NVTX capture range, an NVTX step range, request scopes, a trace window
// or capture): the session stays attached for good. Pin is refused while detaching, detached or
// attaching: the caller attaches first. End: the session's end; a detached session has nothing to flush, and
// a detach in flight (kDetaching) finishes before the end moves on.
//
// "-": the event changes nothing. Pure: tested with the table (tests/cupti/attachment_states_test.cc).
#ifndef CUSCOPE_LIB_CUPTI_ATTACHMENT_STATES_H_
#define CUSCOPE_LIB_CUPTI_ATTACHMENT_STATES_H_

#include <optional>

namespace cuscope::cupti {

enum class AttachmentState {
  kAttached,   // subscribed: the duty cycle switches the kinds
  kArmed,      // recording off and flushed, waiting for a program call's exit to detach at
  kDetaching,  // a program thread is finalizing CUPTI inside its call's exit callback
  kDetached,   // CUPTI finalized: no CUPTI call may be made (any would attach it again)
  kAttaching,  // the collector registers its buffer callbacks and subscribes again
  kPinned,     // attached for good: something needs CUPTI between windows
  kFailed,     // a finalize or an attach failed: the session records nothing more
  kEnded,      // the session ended
};

enum class AttachmentEvent { kArm, kTake, kGiveUp, kFinalized, kAttach, kAttached, kFail, kPin, kEnd };

// The state `event` moves `from` to; nullopt when it changes nothing.
std::optional<AttachmentState> NextAttachmentState(AttachmentState from, AttachmentEvent event);

// Whether cuscope may call CUPTI in `state`: not from the arming to the attach (once armed, a
// program call's exit may finalize CUPTI at any moment; detached, a call would attach CUPTI again
// outside the duty cycle's schedule and bring its cost back).
bool MayCallCupti(AttachmentState state);

const char* AttachmentStateName(AttachmentState state);
const char* AttachmentEventName(AttachmentEvent event);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_ATTACHMENT_STATES_H_
