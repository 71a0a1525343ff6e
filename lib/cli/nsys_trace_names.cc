#include "lib/cli/nsys_trace_names.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/settings/config.h"

namespace cuscope::cli {
namespace {

// An nsys trace name and what cuscope records of it: `kinds` empty when nothing (`why` says).
struct NsysName {
  const char* name;
  const char* kinds;
  const char* why;
};

// nsys's `-t cuda` traces the CUDA runtime and driver calls, the GPU work they start (kernels,
// copies, memsets), synchronization and memory allocation: the same things these kinds record.
constexpr NsysName kNsysNames[] = {
    {"cuda", "kernel,memcpy,memset,api,sync,memory", ""},
    {"nvtx", "nvtx", ""},
    {"osrt", "", "cuscope records no OS runtime calls"},
    {"cublas", "", "cuBLAS's kernels and CUDA calls are in the cuda kinds; no cuBLAS API ranges"},
    {"cublas-verbose", "", "cuBLAS's kernels and CUDA calls are in the cuda kinds; no cuBLAS API ranges"},
    {"cudnn", "", "cuDNN's kernels and CUDA calls are in the cuda kinds; no cuDNN API ranges"},
    {"cusparse", "", "cuSPARSE's kernels and CUDA calls are in the cuda kinds; no cuSPARSE API ranges"},
    {"cusparse-verbose", "", "cuSPARSE's kernels and CUDA calls are in the cuda kinds; no cuSPARSE API ranges"},
    {"mpi", "", "cuscope records no MPI calls; NCCL's kernels and NVTX ranges are in cuda and nvtx"},
    {"ucx", "", "cuscope records no UCX calls"},
    {"oshmem", "", "cuscope records no OpenSHMEM calls"},
    {"openacc", "", "cuscope records no OpenACC events"},
    {"openmp", "", "cuscope records no OpenMP events"},
    {"opengl", "", "cuscope records no graphics APIs"},
    {"opengl-annotations", "", "cuscope records no graphics APIs"},
    {"vulkan", "", "cuscope records no graphics APIs"},
    {"vulkan-annotations", "", "cuscope records no graphics APIs"},
    {"nvvideo", "", "cuscope records no video codec calls"},
    {"none", "", "nothing traced"},
};

const NsysName* FindNsysName(absl::string_view name) {
  for (const NsysName& n : kNsysNames) {
    if (name == n.name) return &n;
  }
  return nullptr;
}

bool IsCuscopeKind(absl::string_view name) {
  return name == "all" || std::find(std::begin(settings::kActivityKindNames), std::end(settings::kActivityKindNames),
                                    name) != std::end(settings::kActivityKindNames);
}

}  // namespace

absl::StatusOr<TraceKinds> TranslateTraceNames(absl::string_view list) {
  TraceKinds out;
  std::vector<std::string> kinds;
  const auto add = [&kinds](absl::string_view kind) {
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.emplace_back(kind);
  };
  bool any_nsys_name = false;
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    // A cuscope kind is cuscope's, whatever nsys calls it.
    const NsysName* nsys = IsCuscopeKind(name) ? nullptr : FindNsysName(name);
    if (nsys == nullptr) {
      add(name);
      continue;
    }
    any_nsys_name = true;
    const absl::string_view nsys_kinds = nsys->kinds;
    if (nsys_kinds.empty()) {
      out.mapped.push_back(absl::StrCat(nsys->name, ": not recorded (", nsys->why, ")"));
      continue;
    }
    out.mapped.push_back(absl::StrCat(nsys->name, ": ", nsys_kinds));
    for (absl::string_view kind : absl::StrSplit(nsys_kinds, ',')) add(kind);
  }
  if (!any_nsys_name) {
    out.kinds = std::string(list);
    return out;
  }
  if (kinds.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--trace ", list, " leaves nothing cuscope records (",
                                                   absl::StrJoin(out.mapped, "; "),
                                                   "); cuda and nvtx are the nsys names it takes"));
  }
  out.kinds = absl::StrJoin(kinds, ",");
  return out;
}

}  // namespace cuscope::cli
