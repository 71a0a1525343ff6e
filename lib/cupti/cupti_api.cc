#include "lib/cupti/cupti_api.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "lib/core/records.h"
#include "lib/cupti/cupti_status.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti {
namespace {

class RealCupti final : public CuptiApi {
 public:
  absl::Status Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) override {
    return CuptiStatus(cuptiSubscribe(subscriber, callback, userdata), "cuptiSubscribe");
  }
  void Unsubscribe(CUpti_SubscriberHandle subscriber) override { cuptiUnsubscribe(subscriber); }
  absl::Status EnableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid) override {
    return CuptiStatus(cuptiEnableCallback(1, subscriber, domain, cbid), "cuptiEnableCallback");
  }
  void DisableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override {
    cuptiEnableCallback(0, subscriber, domain, cbid);
  }
  absl::Status EnableDomain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool enable) override {
    return CuptiStatus(cuptiEnableDomain(enable ? 1 : 0, subscriber, domain), "cuptiEnableDomain");
  }
  absl::Status Finalize() override {
    absl::Status st = CuptiStatus(cuptiFinalize(), "cuptiFinalize");
    // CUPTI forgot the buffer callbacks: the next attach registers them again.
    std::lock_guard<std::mutex> lock(mu_);
    if (st.ok()) callbacks_registered_ = false;
    return st;
  }
  absl::Status EnableActivity(CUpti_ActivityKind kind) override {
    return CuptiStatus(cuptiActivityEnable(kind), "cuptiActivityEnable");
  }
  void DisableActivity(CUpti_ActivityKind kind) override { cuptiActivityDisable(kind); }
  absl::Status EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) override {
    const uint8_t on = enable ? 1 : 0;
    if (domain == v1::API_DOMAIN_DRIVER) {
      return CuptiStatus(cuptiActivityEnableDriverApi(cbid, on), "cuptiActivityEnableDriverApi");
    }
    return CuptiStatus(cuptiActivityEnableRuntimeApi(cbid, on), "cuptiActivityEnableRuntimeApi");
  }
  absl::Status RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                       CUpti_BuffersCallbackCompleteFunc completed) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (callbacks_registered_) return absl::OkStatus();
    absl::Status st =
        CuptiStatus(cuptiActivityRegisterCallbacks(requested, completed), "cuptiActivityRegisterCallbacks");
    callbacks_registered_ = st.ok();
    return st;
  }
  absl::Status FlushAll(bool forced) override {
    return CuptiStatus(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0), "cuptiActivityFlushAll");
  }
  void SetFlushPeriod(uint32_t period_ms) override { cuptiActivityFlushPeriod(period_ms); }
  void UseSystemThreadIds() override { cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); }
  absl::Status EnableLatencyTimestamps(bool enable) override {
    return CuptiStatus(cuptiActivityEnableLatencyTimestamps(enable ? 1 : 0), "cuptiActivityEnableLatencyTimestamps");
  }
  bool NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) override {
    return cuptiActivityGetNextRecord(buffer, valid, record) == CUPTI_SUCCESS;
  }
  uint64_t DroppedRecords(CUcontext context, uint32_t stream_id) override {
    size_t dropped = 0;
    return cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS ? dropped : 0;
  }
  uint64_t Timestamp() override {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  }
  uint32_t Version() override {
    uint32_t version = 0;
    cuptiGetVersion(&version);
    return version;
  }
  std::string CallbackName(v1::ApiDomain domain, uint32_t cbid) override {
    const char* name = nullptr;
    const CUpti_CallbackDomain d =
        domain == v1::API_DOMAIN_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cuptiGetCallbackName(d, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
      return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "driver" : "runtime", "_cbid_", cbid);
    }
    return name;
  }
  bool DriverLoadable() override { return cupti::DriverLoadable(); }
  bool DriverHasContext() override { return cupti::DriverHasContext(); }
  uint64_t GraphNodeId(CUgraphNode node) override {
    uint64_t id = 0;
    return cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS ? id : 0;
  }
  uint32_t ContextId(CUcontext context) override {
    uint32_t id = 0;
    return context != nullptr && cuptiGetContextId(context, &id) == CUPTI_SUCCESS ? id : 0;
  }
  uint32_t StreamId(CUcontext context, CUstream stream, bool per_thread) override {
    uint32_t id = 0;
    if (context == nullptr || cuptiGetStreamIdEx(context, stream, per_thread ? 1 : 0, &id) != CUPTI_SUCCESS) {
      return core::kNoStream;
    }
    return id;
  }
  absl::StatusOr<SystemInfo> QuerySystem() override { return cupti::QuerySystem(); }
  ProfilerApi& Profiler() override { return RealProfilerApi(); }

 private:
  std::mutex mu_;
  bool callbacks_registered_ = false;
};

}  // namespace

CuptiApi& RealCuptiApi() {
  static auto* api = new RealCupti();
  return *api;
}

}  // namespace cuscope::cupti
