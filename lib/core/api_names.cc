#include "lib/core/api_names.h"

#include <array>

namespace cuscope::core {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// `name` without a trailing _v<digits> of at least `min_digits` digits.
std::string_view WithoutVersion(std::string_view name, size_t min_digits) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 + min_digits > name.size()) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

// `cudaStreamSynchronize_ptsz` -> `cudaStreamSynchronize`, `cuMemAlloc_v2` -> `cuMemAlloc`: for
// classifying a call, the per-thread default-stream variants and an API's versions are one call.
std::string_view BaseName(std::string_view cupti_name) {
  std::string_view name = WithoutVersion(cupti_name, 1);
  for (std::string_view suffix : {std::string_view("_ptsz"), std::string_view("_ptds")}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name.remove_suffix(suffix.size());
    }
  }
  return name;
}

}  // namespace

std::string_view ApiCategoryName(ApiCategory category) {
  switch (category) {
    case ApiCategory::kSync: return "sync";
    case ApiCategory::kCopy: return "copy";
    case ApiCategory::kAlloc: return "alloc";
    case ApiCategory::kSetup: return "setup";
    case ApiCategory::kLaunch: return "launch";
    case ApiCategory::kOther: return "other";
  }
  return "other";
}

std::string_view DisplayApiName(std::string_view cupti_name) { return WithoutVersion(cupti_name, 4); }

ApiTraits ClassifyApi(std::string_view cupti_name) {
  const std::string_view name = BaseName(cupti_name);
  ApiTraits t;
  struct SyncName {
    std::string_view name;
    SyncKind kind;
  };
  static constexpr std::array<SyncName, 7> kSyncs = {{
      {"cudaStreamSynchronize", SyncKind::kStream},
      {"cuStreamSynchronize", SyncKind::kStream},
      {"cudaDeviceSynchronize", SyncKind::kDevice},
      {"cudaThreadSynchronize", SyncKind::kDevice},
      {"cuCtxSynchronize", SyncKind::kDevice},
      {"cudaEventSynchronize", SyncKind::kEvent},
      {"cuEventSynchronize", SyncKind::kEvent},
  }};
  for (const SyncName& s : kSyncs) {
    if (name == s.name) {
      t.category = ApiCategory::kSync;
      t.sync = s.kind;
      return t;
    }
  }
  if (StartsWith(name, "cudaMemcpy") || StartsWith(name, "cuMemcpy") || StartsWith(name, "cudaMemset") ||
      StartsWith(name, "cuMemset")) {
    t.category = ApiCategory::kCopy;
    // Symbol copies and peer copies follow the same rule: no "Async", no return before completion.
    t.synchronous_transfer = !Contains(name, "Async");
    return t;
  }
  if (StartsWith(name, "cudaMalloc") || StartsWith(name, "cudaFree") || StartsWith(name, "cudaHostAlloc") ||
      StartsWith(name, "cudaHostRegister") || StartsWith(name, "cudaHostUnregister") ||
      StartsWith(name, "cuMemAlloc") || StartsWith(name, "cuMemFree") || StartsWith(name, "cuMemHostAlloc") ||
      StartsWith(name, "cuMemHostRegister") || StartsWith(name, "cuMemHostUnregister") ||
      StartsWith(name, "cuMemCreate") || StartsWith(name, "cuMemRelease")) {
    t.category = ApiCategory::kAlloc;
    // Stream-ordered allocation (cudaMallocAsync/cudaFreeAsync) does not wait for the device;
    // cudaFree, pinned host allocation and registration do.
    t.implicit_sync = !Contains(name, "Async") && name != "cudaMalloc" && name != "cuMemAlloc";
    return t;
  }
  if (StartsWith(name, "cudaStreamBeginCapture") || StartsWith(name, "cuStreamBeginCapture")) {
    t.category = ApiCategory::kSetup;
    t.capture_begin = true;
    return t;
  }
  if (StartsWith(name, "cudaStreamEndCapture") || StartsWith(name, "cuStreamEndCapture")) {
    t.category = ApiCategory::kSetup;
    t.capture_end = true;
    return t;
  }
  const bool graph_call = StartsWith(name, "cudaGraph") || StartsWith(name, "cuGraph");
  if ((graph_call && name != "cudaGraphLaunch" && name != "cuGraphLaunch") || StartsWith(name, "cuModule") ||
      StartsWith(name, "cuLibrary") || StartsWith(name, "cudaLibrary") || StartsWith(name, "cuLink") ||
      StartsWith(name, "cuCtxCreate") || StartsWith(name, "cuDevicePrimaryCtxRetain")) {
    t.category = ApiCategory::kSetup;
    return t;
  }
  // CUDA 13's `<<<>>>` goes through __cudaLaunchKernel (CUPTI has recorded it as cudaLaunchKernel so
  // far; either name is a launch).
  if (StartsWith(name, "cudaLaunch") || StartsWith(name, "cuLaunch") || StartsWith(name, "__cudaLaunch") ||
      name == "cudaGraphLaunch" || name == "cuGraphLaunch") {
    t.category = ApiCategory::kLaunch;
    t.graph_launch = Contains(name, "Graph");
    return t;
  }
  return t;
}

bool CollectedWhenLean(std::string_view cupti_name) {
  return ClassifyApi(cupti_name).category != ApiCategory::kOther;
}

v1::SyncType SyncRecordTypeOf(std::string_view cupti_name) {
  const std::string_view name = BaseName(cupti_name);
  if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent") return v1::SYNC_TYPE_STREAM_WAIT_EVENT;
  switch (ClassifyApi(cupti_name).sync) {
    case SyncKind::kStream: return v1::SYNC_TYPE_STREAM_SYNCHRONIZE;
    case SyncKind::kDevice: return v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE;
    case SyncKind::kEvent: return v1::SYNC_TYPE_EVENT_SYNCHRONIZE;
    case SyncKind::kNone: break;
  }
  return v1::SYNC_TYPE_UNKNOWN;
}

bool PerThreadStreamCall(std::string_view cupti_name) {
  return Contains(cupti_name, "_ptsz") || Contains(cupti_name, "_ptds");
}

const char* HostCauseName(HostCause cause) {
  switch (cause) {
    case HostCause::kSync: return "sync";
    case HostCause::kCopy: return "copy";
    case HostCause::kAlloc: return "alloc";
    case HostCause::kSetup: return "setup";
    case HostCause::kLaunch: return "launch";
    case HostCause::kOutsideCuda: return "outside_cuda";
  }
  return "outside_cuda";
}

HostCause HostCauseOf(ApiCategory category) {
  switch (category) {
    case ApiCategory::kSync: return HostCause::kSync;
    case ApiCategory::kCopy: return HostCause::kCopy;
    case ApiCategory::kAlloc: return HostCause::kAlloc;
    case ApiCategory::kSetup: return HostCause::kSetup;
    case ApiCategory::kLaunch: return HostCause::kLaunch;
    case ApiCategory::kOther: break;
  }
  return HostCause::kOutsideCuda;
}

ApiCategory CallCategories::Of(uint64_t thread, const ApiTraits& traits) {
  if (traits.capture_begin) capturing_.insert(thread);
  if (traits.capture_end) capturing_.erase(thread);
  if (traits.category == ApiCategory::kLaunch && !capturing_.empty() && capturing_.contains(thread)) {
    return ApiCategory::kSetup;
  }
  return traits.category;
}

}  // namespace cuscope::core
