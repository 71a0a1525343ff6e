#include "tests/cupti/fake_cupti.h"

#include <cstring>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "absl/strings/str_cat.h"

namespace cuscope::cupti::testing {

void FakeCupti::Fail(const std::string& call) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_.insert(call);
}

std::vector<std::string> FakeCupti::Calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void FakeCupti::ClearCalls() {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.clear();
}

size_t FakeCupti::Count(const std::string& call) const {
  size_t n = 0;
  for (const auto& c : Calls()) n += c == call;
  return n;
}

int FakeCupti::LastIndexOf(const std::string& call) const {
  const auto calls = Calls();
  for (int i = static_cast<int>(calls.size()) - 1; i >= 0; --i) {
    if (calls[i] == call) return i;
  }
  return -1;
}

absl::Status FakeCupti::Called(const std::string& call) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(call);
  if (failing_.count(call) > 0) return absl::InternalError(absl::StrCat(call, " failed (fake)"));
  return absl::OkStatus();
}

absl::Status FakeCupti::Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) {
  if (auto st = Called("Subscribe"); !st.ok()) return absl::ResourceExhaustedError(st.message());
  std::lock_guard<std::mutex> lock(mu_);
  api_callback_ = callback;
  api_userdata_ = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber_token_);
  return absl::OkStatus();
}

void FakeCupti::Unsubscribe(CUpti_SubscriberHandle) {
  (void)Called("Unsubscribe");
  std::lock_guard<std::mutex> lock(mu_);
  api_callback_ = nullptr;
}

void FakeCupti::DisableCallback(CUpti_SubscriberHandle, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  (void)Called(absl::StrCat("DisableCallback:", static_cast<int>(domain), ":", cbid));
}

absl::Status FakeCupti::EnableCallback(CUpti_SubscriberHandle, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return Called(absl::StrCat("EnableCallback:", static_cast<int>(domain), ":", cbid));
}

absl::Status FakeCupti::EnableActivity(CUpti_ActivityKind kind) {
  return Called(absl::StrCat("EnableActivity:", static_cast<int>(kind)));
}

void FakeCupti::DisableActivity(CUpti_ActivityKind kind) {
  (void)Called(absl::StrCat("DisableActivity:", static_cast<int>(kind)));
}

absl::Status FakeCupti::EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) {
  return Called(absl::StrCat("EnableApiRecords:", domain == v1::API_DOMAIN_DRIVER ? "driver" : "runtime", ":", cbid,
                             ":", enable ? 1 : 0));
}

absl::Status FakeCupti::RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) {
  if (auto st = Called("RegisterBufferCallbacks"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  requested_ = requested;
  completed_ = completed;
  return absl::OkStatus();
}

absl::Status FakeCupti::FlushAll(bool forced) {
  if (auto st = Called(forced ? "FlushAll:forced" : "FlushAll"); !st.ok()) return st;
  if (!forced) return absl::OkStatus();
  std::vector<HeldBuffer> held;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_);
    completed = completed_;
  }
  for (const auto& h : held) completed(nullptr, 0, h.buffer, 0, h.valid);
  return absl::OkStatus();
}

void FakeCupti::SetFlushPeriod(uint32_t) { (void)Called("SetFlushPeriod"); }

absl::Status FakeCupti::EnableLatencyTimestamps(bool enable) {
  return Called(enable ? "EnableLatencyTimestamps:1" : "EnableLatencyTimestamps:0");
}

bool FakeCupti::NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = *record == nullptr ? buffer : reinterpret_cast<uint8_t*>(*record) + kRecordSlot;
  if (next + kRecordSlot > buffer + valid) return false;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return true;
}

std::string FakeCupti::CallbackName(v1::ApiDomain domain, uint32_t cbid) {
  // A few real names, so that lean collection has calls to choose (and to leave out).
  if (domain == v1::API_DOMAIN_RUNTIME) {
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020) return "cudaStreamSynchronize_v3020";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020) return "cudaGetDevice_v3020";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020) return "cudaStreamWaitEvent_v3020";
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) return "cudaMemcpy_v3020";
  } else if (domain == v1::API_DOMAIN_DRIVER) {
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) return "cuLaunchKernel";
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize) return "cuStreamSynchronize";
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2) return "cuMemcpyHtoD_v2";
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute) return "cuDeviceGetAttribute";
  }
  return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "cuFake" : "cudaFake", cbid);
}

absl::StatusOr<SystemInfo> FakeCupti::QuerySystem() {
  SystemInfo info;
  info.driver_version = 13000;
  info.cupti_version = 130001;
  v1::Device& d = info.devices.emplace_back();
  d.set_id(0);
  d.set_name("Fake GPU");
  return info;
}

bool FakeCupti::FillKernels(int kernels, uint64_t first_start, HeldBuffer* out) {
  static_assert(sizeof(CUpti_ActivityKernel10) <= kRecordSlot);
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requested = requested_;
  }
  if (requested == nullptr) return false;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  requested(&buffer, &size, &max_records);
  if (buffer == nullptr || size < static_cast<size_t>(kernels) * kRecordSlot) return false;
  static const char kName[] = "_Z10fakeKernelPf";
  for (int i = 0; i < kernels; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = first_start + 2000ull * i;
    k.end = k.start + 1000;
    k.correlationId = static_cast<uint32_t>(i + 1);
    k.streamId = 7;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    k.name = kName;
    std::memcpy(buffer + static_cast<size_t>(i) * kRecordSlot, &k, sizeof(k));
  }
  *out = {buffer, static_cast<size_t>(kernels) * kRecordSlot};
  return true;
}

bool FakeCupti::DeliverKernels(int kernels, uint64_t first_start) {
  HeldBuffer b{};
  if (!FillKernels(kernels, first_start, &b)) return false;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completed = completed_;
  }
  completed(nullptr, 0, b.buffer, 0, b.valid);
  return true;
}

bool FakeCupti::DeliverRange(const char* name, uint64_t id, uint64_t start, uint64_t end) {
  static_assert(sizeof(CUpti_ActivityMarker2) <= kRecordSlot);
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requested = requested_;
    completed = completed_;
  }
  if (requested == nullptr || completed == nullptr) return false;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  requested(&buffer, &size, &max_records);
  if (buffer == nullptr || size < 2 * kRecordSlot) return false;
  for (int i = 0; i < 2; ++i) {
    CUpti_ActivityMarker2 m;
    std::memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = i == 0 ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
    m.timestamp = i == 0 ? start : end;
    m.id = static_cast<uint32_t>(id);
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 1;
    m.objectId.pt.threadId = 1;
    m.name = i == 0 ? name : nullptr;
    std::memcpy(buffer + static_cast<size_t>(i) * kRecordSlot, &m, sizeof(m));
  }
  completed(nullptr, 0, buffer, 0, 2 * kRecordSlot);
  return true;
}

bool FakeCupti::HoldKernelsUntilForcedFlush(int kernels, uint64_t first_start) {
  HeldBuffer b{};
  if (!FillKernels(kernels, first_start, &b)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  held_.push_back(b);
  return true;
}

std::pair<CUpti_CallbackFunc, void*> FakeCupti::ApiCallback() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {api_callback_, api_userdata_};
}

void FakeCupti::CallGate(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site) {
  const auto [callback, userdata] = ApiCallback();
  if (callback == nullptr) return;
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  data.callbackSite = site;
  callback(userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
}

void FakeCupti::CallNvtx(CUpti_CallbackId cbid, const void* params, const void* returned) {
  const auto [callback, userdata] = ApiCallback();
  if (callback == nullptr) return;
  CUpti_NvtxData data{};
  data.functionName = "nvtx";
  data.functionParams = params;
  data.functionReturnValue = returned;
  callback(userdata, CUPTI_CB_DOMAIN_NVTX, cbid, &data);
}

void FakeCupti::CallLaunch(uint32_t correlation, const char* symbol, bool driver_only) {
  // Named variables, not a structured binding: a lambda below captures them (clang 14, which
  // builds the sanitized suite, cannot capture a binding).
  const auto api = ApiCallback();
  const CUpti_CallbackFunc callback = api.first;
  void* const userdata = api.second;
  if (callback == nullptr) return;
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  data.correlationId = correlation;
  data.symbolName = symbol;
  const auto call = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site) {
    data.callbackSite = site;
    callback(userdata, domain, cbid, &data);
  };
  if (!driver_only) call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER);
  call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER);
  call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT);
  if (!driver_only) call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT);
}

void FakeCupti::ApiCallbackForTest(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  const auto [callback, userdata] = ApiCallback();
  if (callback != nullptr) callback(userdata, domain, cbid, data);
}

void FakeCupti::CallApi(uint32_t correlation, const Call& call, uint64_t ns, const Call* inner) {
  // Named variables, not a structured binding: a lambda below captures them (clang 14, which
  // builds the sanitized suite, cannot capture a binding).
  const auto api = ApiCallback();
  const CUpti_CallbackFunc callback = api.first;
  void* const userdata = api.second;
  if (callback == nullptr) return;
  const auto site = [&](const Call& c, CUpti_ApiCallbackSite where) {
    CUpti_CallbackData data;
    std::memset(&data, 0, sizeof(data));
    data.correlationId = correlation;
    data.callbackSite = where;
    data.functionParams = c.params;
    data.functionReturnValue = where == CUPTI_API_EXIT ? const_cast<int*>(&c.returned) : nullptr;
    data.context = reinterpret_cast<CUcontext>(uintptr_t{0x10});
    callback(userdata, c.domain, c.cbid, &data);
  };
  site(call, CUPTI_API_ENTER);
  if (inner != nullptr) {
    site(*inner, CUPTI_API_ENTER);
    site(*inner, CUPTI_API_EXIT);
  }
  AdvanceClock(ns);
  site(call, CUPTI_API_EXIT);
}

void FakeCupti::CallGraphNodeCreated(uint64_t node) {
  const auto [callback, userdata] = ApiCallback();
  if (callback == nullptr) return;
  CUpti_GraphData graph{};
  graph.node = reinterpret_cast<CUgraphNode>(node);
  graph.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  CUpti_ResourceData data{};
  data.resourceDescriptor = &graph;
  callback(userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &data);
}

void FakeCupti::CallGraphNodeCloned(uint64_t node, uint64_t original) {
  const auto [callback, userdata] = ApiCallback();
  if (callback == nullptr) return;
  CUpti_GraphData graph{};
  graph.node = reinterpret_cast<CUgraphNode>(node);
  graph.originalNode = reinterpret_cast<CUgraphNode>(original);
  graph.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  CUpti_ResourceData data{};
  data.resourceDescriptor = &graph;
  callback(userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &data);
}

void FakeCupti::CallGraphInstantiation(bool starting) {
  const auto [callback, userdata] = ApiCallback();
  if (callback == nullptr) return;
  CUpti_ResourceData data{};
  callback(userdata, CUPTI_CB_DOMAIN_RESOURCE,
           starting ? CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING : CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &data);
}

void FakeCupti::CallProfilerStart() { CallGate(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, CUPTI_API_EXIT); }
void FakeCupti::CallProfilerStop() { CallGate(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, CUPTI_API_ENTER); }

}  // namespace cuscope::cupti::testing
