// What the timeline collector asks of CUPTI and of the driver, behind one interface.
//
// The real implementation calls CUPTI and the driver; tests hand the collector a fake that
// records the calls, fails chosen ones and delivers fabricated activity buffers, so the
// collector's start, undo, writing, fork and stop paths run on a machine without a GPU.
//
// The Range Profiler (kernel metrics) and PM sampling (GPU counters over time) reach CUPTI through
// Profiler() (profiler_api.h), so the same object, real or fake, carries every CUPTI call of a
// session: with the fake, pausing the counters, profiling launches and resuming run on the CPU.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_API_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_API_H_

#include <cstdint>
#include <string>

#include <cupti.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/cupti/device_info.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::cupti {

class ProfilerApi;

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  // Subscribing fails (ResourceExhausted) when another CUPTI tool owns the process.
  virtual absl::Status Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) = 0;
  virtual void Unsubscribe(CUpti_SubscriberHandle subscriber) = 0;
  virtual absl::Status EnableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                      CUpti_CallbackId cbid) = 0;
  virtual void DisableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = 0;
  // Every callback of one domain on or off (cuptiEnableDomain): off undoes the ones enabled alone.
  virtual absl::Status EnableDomain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool enable) = 0;
  // Detaches CUPTI from the process (cuptiFinalize): subscriptions, callbacks, kinds, attributes and
  // the buffer callbacks are gone, and the next CUPTI call attaches it again. Safe only at the exit
  // of a runtime or driver call's callback, after a forced flush (cupti_attachment.h).
  virtual absl::Status Finalize() = 0;

  virtual absl::Status EnableActivity(CUpti_ActivityKind kind) = 0;
  virtual void DisableActivity(CUpti_ActivityKind kind) = 0;
  // Records of one runtime or driver call (lean collection), without enabling its whole API.
  virtual absl::Status EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) = 0;
  // CUPTI keeps one pair of buffer callbacks per process: registering again once they are
  // registered succeeds without calling CUPTI.
  virtual absl::Status RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                               CUpti_BuffersCallbackCompleteFunc completed) = 0;
  // `forced`: also the partly filled buffers, with records of work still running incomplete.
  virtual absl::Status FlushAll(bool forced) = 0;
  virtual void SetFlushPeriod(uint32_t period_ms) = 0;
  // Thread ids in records are the system's (gettid), as the host-side tools show them.
  virtual void UseSystemThreadIds() = 0;
  // Kernel records' queued and submitted timestamps (cuptiActivityEnableLatencyTimestamps),
  // process-wide.
  virtual absl::Status EnableLatencyTimestamps(bool enable) = 0;

  // The record after `*record` in a completed buffer (the first when *record is null); false at
  // the end of the valid bytes.
  virtual bool NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) = 0;
  // Records CUPTI dropped for want of a buffer, for one context and stream.
  virtual uint64_t DroppedRecords(CUcontext context, uint32_t stream_id) = 0;
  // CUPTI's clock (ns), the clock of every record's timestamps.
  virtual uint64_t Timestamp() = 0;
  virtual uint32_t Version() = 0;
  // A runtime or driver call's name ("cudaLaunchKernel"), or a stable placeholder naming the id.
  virtual std::string CallbackName(v1::ApiDomain domain, uint32_t cbid) = 0;

  // A CUDA graph node's id, as kernel records name the node that ran them (0 when CUPTI has none).
  virtual uint64_t GraphNodeId(CUgraphNode node) = 0;
  // The ids activity records give a context and a stream (cuptiGetContextId, cuptiGetStreamIdEx),
  // read inside a call's callback; core::kNoStream / 0 when CUPTI has none. `per_thread`: the
  // call's null stream is the thread's default stream (a "_ptsz" call).
  virtual uint32_t ContextId(CUcontext context) = 0;
  virtual uint32_t StreamId(CUcontext context, CUstream stream, bool per_thread) = 0;

  virtual bool DriverLoadable() = 0;
  virtual bool DriverHasContext() = 0;
  virtual absl::StatusOr<SystemInfo> QuerySystem() = 0;

  // The profiling API's calls (the Range Profiler, PM sampling, the host side).
  virtual ProfilerApi& Profiler() = 0;
};

// The process's CUPTI and driver. Never destroyed: CUPTI may call back late.
CuptiApi& RealCuptiApi();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_API_H_
