// Lean collection's runtime and driver calls, timed by callbacks instead of CUPTI's API records.
//
// CUPTI's API records cost per call of the program, not per call recorded: with the RUNTIME or
// DRIVER kind on, CUPTI intercepts every call even when the per-call choice
// (cuptiActivityEnableRuntimeApi) keeps a few, and its SYNCHRONIZATION kind intercepts them the
// same way. Callbacks cost only for the calls they are enabled on. Measured on the H100 (PyTorch,
// 40,000 tiny kernels a repetition, 7 interleaved runs, a bare collector; µs added a kernel):
// kernel records alone +2.10, with API records of the lean calls and the lean kinds +4.81
// (torch.profiler +5.47); in a second run kernel records alone +1.64, with callbacks on every lean
// call +3.16, on every lean call but the launches +1.02 (torch.profiler +8.05)
// (runs/overhead_matrix_h100_dec5_callbacks.txt). So lean collection enables no API kind: these
// callbacks write the records CUPTI's lean selection would have written.
//
// What is recorded is what that selection recorded: every call core::CollectedWhenLean keeps, of
// both APIs, with CUPTI's correlation id, clock and system thread id; a driver call the runtime
// makes inside a recorded runtime call shares that call's correlation id and is left out. The
// synchronization records of CUPTI's SYNCHRONIZATION kind (stream, device and event
// synchronization, a stream's wait for an event: core::SyncRecordTypeOf) are written from the same
// calls, unless that kind is on.
//
// Only calls made while the capture records are kept (a window closed: nothing). The session turns
// the callbacks on and off with the activity kinds (ActivitySelection::SetTimedCallSwitch), so a
// closed window costs the program's calls nothing; a session that holds its kinds holds them too.
#ifndef CUSCOPE_LIB_CUPTI_CALL_TIMER_H_
#define CUSCOPE_LIB_CUPTI_CALL_TIMER_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <cupti.h>

#include "lib/core/records.h"
#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti {

class CallTimer {
 public:
  // Called on the program's thread at a timed call's exit: the call (null for a call recorded only
  // as a synchronization, cudaStreamWaitEvent), and its synchronization record (or null).
  using Sink = std::function<void(const core::ApiActivity* call, const core::SyncRecord* sync)>;

  // `sync_records`: also write the synchronization records (false when the SYNCHRONIZATION kind
  // writes them).
  CallTimer(CuptiApi& cupti, Sink sink, bool sync_records);

  // The callbacks to enable on the session's subscriber.
  const std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>& callbacks() const { return callbacks_; }
  bool Uses(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const;

  // Every runtime and driver callback of the subscriber (others' too: they are ignored).
  // `recording`: whether the capture records now; a call is kept when it records at the call's exit.
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data, bool recording);

 private:
  struct CallInfo {
    bool timed = false;
    bool api_record = false;  // false: a synchronization record alone
    v1::SyncType sync = v1::SYNC_TYPE_UNKNOWN;
    bool per_thread = false;
  };
  const CallInfo* Find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const;
  void Exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallInfo& info, const CUpti_CallbackData& data,
            uint64_t start, uint64_t end);

  CuptiApi& cupti_;
  const Sink sink_;
  std::vector<CallInfo> runtime_;
  std::vector<CallInfo> driver_;
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> callbacks_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CALL_TIMER_H_
