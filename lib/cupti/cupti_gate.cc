#include "lib/cupti/cupti_gate.h"

#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/core/records.h"

namespace cuscope::cupti {
namespace {

absl::Status Detached() {
  return absl::FailedPreconditionError("CUPTI is detached between the duty cycle's windows");
}

}  // namespace

bool CuptiGate::Enter() {
  // A look first: callers refused while closed then leave the count alone, so a close waiting for
  // it to reach 0 is not held up by them. Only an add that raced the close takes itself back.
  if ((word_.load(std::memory_order_acquire) & kClosed) == 0) {
    if ((word_.fetch_add(1, std::memory_order_acq_rel) & kClosed) == 0) return true;
    word_.fetch_sub(1, std::memory_order_release);
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void CuptiGate::Leave() { word_.fetch_sub(1, std::memory_order_release); }

bool CuptiGate::Close(std::chrono::milliseconds wait) {
  word_.fetch_or(kClosed, std::memory_order_acq_rel);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  // The calls in flight are short (a clock read, a callback's switch): a yield is enough between
  // looks; a refused call's own count comes and goes within a few instructions.
  while ((word_.load(std::memory_order_acquire) & ~kClosed) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      Open();
      return false;
    }
    std::this_thread::yield();
  }
  return true;
}

void CuptiGate::Open() { word_.fetch_and(~kClosed, std::memory_order_acq_rel); }

bool CuptiGate::is_open() const { return (word_.load(std::memory_order_acquire) & kClosed) == 0; }

template <typename Call, typename Refused>
auto GatedCuptiApi::Through(Call call, Refused refused) -> decltype(call()) {
  if (!gate_.Enter()) return refused();
  struct Leave {
    CuptiGate& gate;
    ~Leave() { gate.Leave(); }
  } leave{gate_};
  return call();
}

int64_t GatedCuptiApi::SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status GatedCuptiApi::Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) {
  return Through([&] { return inner_.Subscribe(callback, userdata, subscriber); }, Detached);
}
void GatedCuptiApi::Unsubscribe(CUpti_SubscriberHandle subscriber) {
  Through([&] { inner_.Unsubscribe(subscriber); }, [] {});
}
absl::Status GatedCuptiApi::EnableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId cbid) {
  return Through([&] { return inner_.EnableCallback(subscriber, domain, cbid); }, Detached);
}
void GatedCuptiApi::DisableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                    CUpti_CallbackId cbid) {
  Through([&] { inner_.DisableCallback(subscriber, domain, cbid); }, [] {});
}
absl::Status GatedCuptiApi::EnableDomain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool enable) {
  return Through([&] { return inner_.EnableDomain(subscriber, domain, enable); }, Detached);
}
absl::Status GatedCuptiApi::Finalize() {
  return Through([&] { return inner_.Finalize(); }, Detached);
}
absl::Status GatedCuptiApi::EnableActivity(CUpti_ActivityKind kind) {
  return Through([&] { return inner_.EnableActivity(kind); }, Detached);
}
void GatedCuptiApi::DisableActivity(CUpti_ActivityKind kind) {
  Through([&] { inner_.DisableActivity(kind); }, [] {});
}
absl::Status GatedCuptiApi::EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) {
  return Through([&] { return inner_.EnableApiRecords(domain, cbid, enable); }, Detached);
}
absl::Status GatedCuptiApi::RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  return Through([&] { return inner_.RegisterBufferCallbacks(requested, completed); }, Detached);
}
absl::Status GatedCuptiApi::FlushAll(bool forced) {
  return Through([&] { return inner_.FlushAll(forced); }, Detached);
}
void GatedCuptiApi::SetFlushPeriod(uint32_t period_ms) {
  Through([&] { inner_.SetFlushPeriod(period_ms); }, [] {});
}
void GatedCuptiApi::UseSystemThreadIds() {
  Through([&] { inner_.UseSystemThreadIds(); }, [] {});
}
absl::Status GatedCuptiApi::EnableLatencyTimestamps(bool enable) {
  return Through([&] { return inner_.EnableLatencyTimestamps(enable); }, Detached);
}
uint64_t GatedCuptiApi::DroppedRecords(CUcontext context, uint32_t stream_id) {
  return Through([&] { return inner_.DroppedRecords(context, stream_id); }, [] { return uint64_t{0}; });
}

uint64_t GatedCuptiApi::Timestamp() {
  return Through(
      [&] {
        const uint64_t now = inner_.Timestamp();
        clock_offset_ns_.store(static_cast<int64_t>(now) - SteadyNowNs(), std::memory_order_relaxed);
        return now;
      },
      [&] { return static_cast<uint64_t>(SteadyNowNs() + clock_offset_ns_.load(std::memory_order_relaxed)); });
}

uint32_t GatedCuptiApi::Version() {
  return Through(
      [&] {
        const uint32_t v = inner_.Version();
        version_.store(v, std::memory_order_relaxed);
        return v;
      },
      [&] { return version_.load(std::memory_order_relaxed); });
}

std::string GatedCuptiApi::CallbackName(v1::ApiDomain domain, uint32_t cbid) {
  const auto key = std::make_pair(static_cast<int>(domain), cbid);
  return Through(
      [&] {
        std::string name = inner_.CallbackName(domain, cbid);
        std::lock_guard<std::mutex> lock(names_mu_);
        names_.emplace(key, name);
        return name;
      },
      [&] {
        std::lock_guard<std::mutex> lock(names_mu_);
        if (auto it = names_.find(key); it != names_.end()) return it->second;
        return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "driver" : "runtime", "_cbid_", cbid);
      });
}

uint64_t GatedCuptiApi::GraphNodeId(CUgraphNode node) {
  return Through([&] { return inner_.GraphNodeId(node); }, [] { return uint64_t{0}; });
}
uint32_t GatedCuptiApi::ContextId(CUcontext context) {
  return Through([&] { return inner_.ContextId(context); }, [] { return uint32_t{0}; });
}
uint32_t GatedCuptiApi::StreamId(CUcontext context, CUstream stream, bool per_thread) {
  return Through([&] { return inner_.StreamId(context, stream, per_thread); }, [] { return core::kNoStream; });
}

}  // namespace cuscope::cupti
