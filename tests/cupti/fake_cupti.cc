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

void FakeCupti::FailAfter(const std::string& call, int successes) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_after_[call] = successes;
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

int FakeCupti::FirstIndexOf(const std::string& call) const {
  const auto calls = Calls();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i] == call) return static_cast<int>(i);
  }
  return -1;
}

int FakeCupti::LastIndexOf(const std::string& call) const {
  const auto calls = Calls();
  for (int i = static_cast<int>(calls.size()) - 1; i >= 0; --i) {
    if (calls[i] == call) return i;
  }
  return -1;
}

void FakeCupti::NoteCall(const char* name) {
  if (!detached_.load()) return;
  if (calls_while_detached_.fetch_add(1) == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    first_call_while_detached_ = name;
  }
}

std::string FakeCupti::first_call_while_detached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_call_while_detached_;
}

absl::Status FakeCupti::Called(const std::string& call) {
  NoteCall(call.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(call);
  if (auto it = fail_after_.find(call); it != fail_after_.end()) {
    if (it->second == 0) {
      failing_.insert(call);
      fail_after_.erase(it);
    } else {
      --it->second;
    }
  }
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

absl::Status FakeCupti::EnableDomain(CUpti_SubscriberHandle, CUpti_CallbackDomain domain, bool enable) {
  return Called(absl::StrCat("EnableDomain:", static_cast<int>(domain), ":", enable ? 1 : 0));
}

absl::Status FakeCupti::Finalize() {
  if (auto st = Called("Finalize"); !st.ok()) return st;
  detached_.store(true);
  if (const int kernels = kernels_at_finalize_.load(); kernels > 0) (void)DeliverKernels(kernels, clock_.load());
  std::lock_guard<std::mutex> lock(mu_);
  api_callback_ = nullptr;
  api_userdata_ = nullptr;
  requested_ = nullptr;
  completed_ = nullptr;
  return absl::OkStatus();
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
  detached_.store(false);  // an attach begins with this call
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
  if (completed != nullptr) {
    for (const auto& h : held) completed(nullptr, 0, h.buffer, 0, h.valid);
  }
  return absl::OkStatus();
}

void FakeCupti::SetFlushPeriod(uint32_t) { (void)Called("SetFlushPeriod"); }

absl::Status FakeCupti::EnableLatencyTimestamps(bool enable) {
  return Called(enable ? "EnableLatencyTimestamps:1" : "EnableLatencyTimestamps:0");
}

bool FakeCupti::NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  NoteCall("NextRecord");
  uint8_t* next = *record == nullptr ? buffer : reinterpret_cast<uint8_t*>(*record) + kRecordSlot;
  if (next + kRecordSlot > buffer + valid) return false;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return true;
}

std::string FakeCupti::CallbackName(v1::ApiDomain domain, uint32_t cbid) {
  NoteCall("CallbackName");
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
  for (uint32_t i = 0; i < devices_; ++i) {
    v1::Device& d = info.devices.emplace_back();
    d.set_id(i);
    d.set_name("Fake GPU");
  }
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
  // Finalized since the buffer was requested: CUPTI forgot the callbacks, and the buffer stays
  // with it (never handed back).
  if (completed == nullptr) return false;
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

void FakeCupti::CallKernelLaunch(uint32_t correlation, const char* symbol) {
  // Named variables, not a structured binding: a lambda below captures them (clang 14).
  const auto api = ApiCallback();
  const CUpti_CallbackFunc callback = api.first;
  void* const userdata = api.second;
  if (callback == nullptr) return;
  cuLaunchKernel_params params{};
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = 128;
  params.blockDimY = params.blockDimZ = 1;
  CUpti_CallbackData data;
  std::memset(&data, 0, sizeof(data));
  data.correlationId = correlation;
  data.symbolName = symbol;
  data.context = reinterpret_cast<CUcontext>(uintptr_t{0x10});
  const auto call = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                        const void* call_params) {
    data.callbackSite = site;
    data.functionParams = call_params;
    callback(userdata, domain, cbid, &data);
  };
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, nullptr);
  call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &params);
  call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &params);
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, nullptr);
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

// ---- The profiling API -------------------------------------------------------------------------

namespace {

constexpr char kFakeChip[] = "FAKE100";
// Bytes of a counter-availability, counter-data or configuration image: any will do, nothing
// reads them but the fake.
constexpr size_t kImageBytes = 64;

template <typename T>
T* Token(uintptr_t object) {
  return reinterpret_cast<T*>(object);
}

template <typename T>
uintptr_t Id(T* object) {
  return reinterpret_cast<uintptr_t>(object);
}

}  // namespace

uintptr_t FakeCupti::NewObject() { return next_object_ += 0x10; }

size_t FakeCupti::RangeProfilersEnabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return range_enabled_.size();
}

size_t FakeCupti::RangeProfilersStarted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return range_started_.size();
}

size_t FakeCupti::PmSamplersEnabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pm_enabled_.size();
}

size_t FakeCupti::PmSamplersStarted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pm_started_.size();
}

size_t FakeCupti::ProfilerHostsAlive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hosts_.size();
}

absl::Status FakeCupti::ProfilerInitialize(CUpti_Profiler_Initialize_Params*) { return Called("ProfilerInitialize"); }

absl::StatusOr<uint32_t> FakeCupti::DeviceId(CUcontext) {
  if (auto st = Called("DeviceId"); !st.ok()) return st;
  return 0u;
}

absl::Status FakeCupti::DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
  if (auto st = Called("DeviceSupported"); !st.ok()) return st;
  p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->architecture = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->sli = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->vGpu = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->confidentialCompute = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->cmp = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->wsl = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  return absl::OkStatus();
}

absl::Status FakeCupti::ChipName(CUpti_Device_GetChipName_Params* p) {
  if (auto st = Called("ChipName"); !st.ok()) return st;
  p->pChipName = kFakeChip;
  return absl::OkStatus();
}

absl::Status FakeCupti::ProfilerCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  if (auto st = Called("ProfilerCounterAvailability"); !st.ok()) return st;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = kImageBytes;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
  }
  return absl::OkStatus();
}

absl::Status FakeCupti::RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  if (auto st = Called("RangeProfilerEnable"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  const uintptr_t object = NewObject();
  range_enabled_.insert(object);
  p->pRangeProfilerObject = Token<CUpti_RangeProfiler_Object>(object);
  return absl::OkStatus();
}

void FakeCupti::RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  (void)Called("RangeProfilerDisable");
  std::lock_guard<std::mutex> lock(mu_);
  range_enabled_.erase(Id(p->pRangeProfilerObject));
  range_started_.erase(Id(p->pRangeProfilerObject));
}

absl::Status FakeCupti::RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (auto st = Called("RangeProfilerGetCounterDataSize"); !st.ok()) return st;
  p->counterDataSize = kImageBytes;
  return absl::OkStatus();
}

absl::Status FakeCupti::RangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) {
  return Called("RangeProfilerCounterDataImageInitialize");
}

absl::Status FakeCupti::RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params*) {
  return Called("RangeProfilerSetConfig");
}

absl::Status FakeCupti::RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  if (auto st = Called("RangeProfilerStart"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  range_started_.insert(Id(p->pRangeProfilerObject));
  return absl::OkStatus();
}

absl::Status FakeCupti::RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  if (auto st = Called("RangeProfilerStop"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  range_started_.erase(Id(p->pRangeProfilerObject));
  p->isAllPassSubmitted = 1;
  return absl::OkStatus();
}

absl::Status FakeCupti::RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params*) {
  return Called("RangeProfilerDecodeData");
}

absl::Status FakeCupti::RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (auto st = Called("RangeProfilerGetCounterDataInfo"); !st.ok()) return st;
  p->numTotalRanges = 1;  // the profiled launch's
  return absl::OkStatus();
}

absl::Status FakeCupti::PmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  if (auto st = Called("PmSamplingGetCounterAvailability"); !st.ok()) return st;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = kImageBytes;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
  }
  return absl::OkStatus();
}

absl::Status FakeCupti::PmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
  if (auto st = Called("PmSamplingEnable"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  const uintptr_t object = NewObject();
  pm_enabled_.insert(object);
  p->pPmSamplingObject = Token<CUpti_PmSampling_Object>(object);
  return absl::OkStatus();
}

void FakeCupti::PmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
  (void)Called("PmSamplingDisable");
  std::lock_guard<std::mutex> lock(mu_);
  pm_enabled_.erase(Id(p->pPmSamplingObject));
  pm_started_.erase(Id(p->pPmSamplingObject));
}

absl::Status FakeCupti::PmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params*) { return Called("PmSamplingSetConfig"); }

absl::Status FakeCupti::PmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  if (auto st = Called("PmSamplingGetCounterDataSize"); !st.ok()) return st;
  p->counterDataSize = kImageBytes;
  return absl::OkStatus();
}

absl::Status FakeCupti::PmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params*) {
  return Called("PmSamplingCounterDataImageInitialize");
}

absl::Status FakeCupti::PmSamplingStart(CUpti_PmSampling_Start_Params* p) {
  if (auto st = Called("PmSamplingStart"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  pm_started_.insert(Id(p->pPmSamplingObject));
  return absl::OkStatus();
}

absl::Status FakeCupti::PmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
  if (auto st = Called("PmSamplingStop"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  pm_started_.erase(Id(p->pPmSamplingObject));
  return absl::OkStatus();
}

absl::StatusOr<bool> FakeCupti::PmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
  if (auto st = Called("PmSamplingDecodeData"); !st.ok()) return st;
  p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  p->overflow = 0;
  return false;
}

absl::Status FakeCupti::PmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  if (auto st = Called("PmSamplingGetCounterDataInfo"); !st.ok()) return st;
  p->numTotalSamples = 0;
  p->numPopulatedSamples = 0;
  p->numCompletedSamples = 0;
  return absl::OkStatus();
}

absl::Status FakeCupti::PmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params*) {
  return Called("PmSamplingCounterDataGetSampleInfo");
}

absl::Status FakeCupti::ProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  if (auto st = Called("ProfilerHostInitialize"); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  const uintptr_t object = NewObject();
  hosts_.insert(object);
  p->pHostObject = Token<CUpti_Profiler_Host_Object>(object);
  return absl::OkStatus();
}

void FakeCupti::ProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  (void)Called("ProfilerHostDeinitialize");
  std::lock_guard<std::mutex> lock(mu_);
  hosts_.erase(Id(p->pHostObject));
}

absl::Status FakeCupti::ProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params*) {
  return Called("ProfilerHostConfigAddMetrics");
}

absl::Status FakeCupti::ProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (auto st = Called("ProfilerHostGetConfigImageSize"); !st.ok()) return st;
  p->configImageSize = kImageBytes;
  return absl::OkStatus();
}

absl::Status FakeCupti::ProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (auto st = Called("ProfilerHostGetConfigImage"); !st.ok()) return st;
  std::memset(p->pConfigImage, 0, p->configImageSize);
  return absl::OkStatus();
}

absl::Status FakeCupti::ProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (auto st = Called("ProfilerHostGetNumOfPasses"); !st.ok()) return st;
  p->numOfPasses = 1;
  return absl::OkStatus();
}

absl::Status FakeCupti::ProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (auto st = Called("ProfilerHostEvaluateToGpuValues"); !st.ok()) return st;
  for (size_t i = 0; i < p->numMetrics; ++i) p->pMetricValues[i] = static_cast<double>(i + 1);
  return absl::OkStatus();
}

}  // namespace cuscope::cupti::testing
