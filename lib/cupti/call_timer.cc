#include "lib/cupti/call_timer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "lib/core/api_names.h"

namespace cuscope::cupti {
namespace {

// The timed calls in progress on this thread, outermost first. A call the runtime makes inside a
// timed call carries its correlation id and is not recorded; a timed call inside one with another
// id (none is known) is recorded on its own. A call whose exit was never seen (the session stopped
// inside it) stays below the later ones, harmless, until the stack is full and starts again.
struct CallFrame {
  uint64_t correlation_id = 0;
  CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID;
  CUpti_CallbackId cbid = 0;
  uint64_t start = 0;
  bool inner = false;  // shares an outer call's id: not recorded
};
struct CallStack {
  static constexpr int kDepth = 8;
  CallFrame frames[kDepth];
  int depth = 0;
};
thread_local CallStack t_calls;

struct ThisThread {
  uint32_t pid = static_cast<uint32_t>(::getpid());  // a forked child records nothing
  uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
};
const ThisThread& CurrentThread() {
  thread_local const ThisThread thread;
  return thread;
}

}  // namespace

CallTimer::CallTimer(CuptiApi& cupti, Sink sink, bool sync_records)
    : cupti_(cupti),
      sink_(std::move(sink)),
      runtime_(CUPTI_RUNTIME_TRACE_CBID_SIZE),
      driver_(CUPTI_DRIVER_TRACE_CBID_SIZE) {
  for (const v1::ApiDomain api : {v1::API_DOMAIN_RUNTIME, v1::API_DOMAIN_DRIVER}) {
    std::vector<CallInfo>& calls = api == v1::API_DOMAIN_RUNTIME ? runtime_ : driver_;
    const CUpti_CallbackDomain domain =
        api == v1::API_DOMAIN_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    for (uint32_t cbid = 1; cbid < calls.size(); ++cbid) {
      const std::string name = cupti.CallbackName(api, cbid);
      CallInfo& info = calls[cbid];
      info.api_record = core::CollectedWhenLean(name);
      if (sync_records) info.sync = core::SyncRecordTypeOf(name);
      info.timed = info.api_record || info.sync != v1::SYNC_TYPE_UNKNOWN;
      info.per_thread = core::PerThreadStreamCall(name);
      if (info.timed) callbacks_.emplace_back(domain, cbid);
    }
  }
}

const CallTimer::CallInfo* CallTimer::Find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
  const std::vector<CallInfo>* calls = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? &runtime_
                                       : domain == CUPTI_CB_DOMAIN_DRIVER_API ? &driver_
                                                                              : nullptr;
  if (calls == nullptr || cbid >= calls->size() || !(*calls)[cbid].timed) return nullptr;
  return &(*calls)[cbid];
}

bool CallTimer::Uses(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const { return Find(domain, cbid) != nullptr; }

void CallTimer::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data,
                           bool recording) {
  const CallInfo* info = Find(domain, cbid);
  if (info == nullptr) return;
  CallStack& calls = t_calls;
  if (data.callbackSite == CUPTI_API_ENTER) {
    if (calls.depth == CallStack::kDepth) calls.depth = 0;
    bool inner = false;
    for (int i = 0; i < calls.depth; ++i) inner = inner || calls.frames[i].correlation_id == data.correlationId;
    calls.frames[calls.depth++] = CallFrame{data.correlationId, domain, cbid, inner ? 0 : cupti_.Timestamp(), inner};
    return;
  }
  // The newest frame of this call; frames above it are calls whose exit was never seen.
  int i = calls.depth - 1;
  while (i >= 0 && (calls.frames[i].correlation_id != data.correlationId || calls.frames[i].domain != domain ||
                    calls.frames[i].cbid != cbid)) {
    --i;
  }
  if (i < 0) return;  // entered before the callbacks were on
  const CallFrame frame = calls.frames[i];
  calls.depth = i;
  if (recording && !frame.inner) Exit(domain, cbid, *info, data, frame.start, cupti_.Timestamp());
}

void CallTimer::Exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallInfo& info,
                     const CUpti_CallbackData& data, uint64_t start, uint64_t end) {
  core::ApiActivity call;
  call.start = start;
  call.end = end;
  call.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? v1::API_DOMAIN_RUNTIME : v1::API_DOMAIN_DRIVER;
  call.callback_id = cbid;
  call.pid = CurrentThread().pid;
  call.tid = CurrentThread().tid;
  call.correlation_id = data.correlationId;
  // cudaError_t and CUresult alike: an int-sized enum.
  if (data.functionReturnValue != nullptr) {
    call.return_code = static_cast<uint32_t>(*static_cast<const int*>(data.functionReturnValue));
  }
  if (info.sync == v1::SYNC_TYPE_UNKNOWN) {
    sink_(&call, nullptr);
    return;
  }
  core::SyncRecord sync;
  sync.start = start;
  sync.end = end;
  sync.type = info.sync;
  sync.context = cupti_.ContextId(data.context);
  sync.correlation_id = data.correlationId;
  if ((info.sync == v1::SYNC_TYPE_STREAM_SYNCHRONIZE || info.sync == v1::SYNC_TYPE_STREAM_WAIT_EVENT) &&
      data.functionParams != nullptr) {
    // The stream is the first parameter of each of these calls (cudaStreamSynchronize,
    // cuStreamSynchronize, cudaStreamWaitEvent, cuStreamWaitEvent and their _ptsz twins), so the
    // first field of its generated parameter struct.
    const CUstream stream = *static_cast<const CUstream*>(data.functionParams);
    sync.stream = cupti_.StreamId(data.context, stream, info.per_thread);
  }
  sink_(info.api_record ? &call : nullptr, &sync);
}

}  // namespace cuscope::cupti
