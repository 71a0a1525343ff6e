#include "lib/cupti/launch_stacks.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "lib/process/call_stack.h"
#include "lib/cupti/launch_callbacks.h"

namespace cuscope::cupti {
namespace {

// Set between a runtime launch's entry and exit on this thread: the driver launch inside it is the
// same launch, its stack already taken (or not picked).
thread_local bool t_in_runtime_launch = false;

}  // namespace

LaunchStackCollector::LaunchStackCollector(settings::StackSampling sampling, TracePipeline& pipeline, CuptiApi& cupti)
    : sampler_(sampling), pipeline_(pipeline), cupti_(cupti) {}

std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> LaunchStackCollector::Callbacks() {
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> out;
  for (CUpti_CallbackId id : kRuntimeLaunches) out.emplace_back(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (CUpti_CallbackId id : kDriverLaunches) out.emplace_back(CUPTI_CB_DOMAIN_DRIVER_API, id);
  out.emplace_back(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  out.emplace_back(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  return out;
}

bool LaunchStackCollector::IsDriverLaunch(CUpti_CallbackId cbid) { return IsDriverLaunchCallback(cbid); }

void LaunchStackCollector::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const CUpti_CallbackData& info, bool recording) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API && IsRuntimeLaunchCallback(cbid);
  if (runtime) {
    t_in_runtime_launch = info.callbackSite == CUPTI_API_ENTER;
    if (!t_in_runtime_launch) return;
  } else if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !IsDriverLaunch(cbid) ||
             info.callbackSite != CUPTI_API_ENTER || t_in_runtime_launch) {
    return;
  }
  if (!recording || off_.load(std::memory_order_relaxed) || !sampler_.Take(info.symbolName)) return;
  uintptr_t pcs[process::kMaxCallStackFrames];
  // This function's and the subscriber's frames are dropped by the writer with CUPTI's own.
  const size_t n = process::CaptureCallStack(pcs, process::kMaxCallStackFrames, 0);
  if (n == 0) return;
  std::vector<process::PythonFrame> python;
  TakePythonFrames(python);
  pipeline_.QueueLaunchStack(info.correlationId, pcs, n, std::move(python));
  taken_.fetch_add(1, std::memory_order_relaxed);
}

void LaunchStackCollector::TakePythonFrames(std::vector<process::PythonFrame>& frames) const {
  if (!python_.has_value()) return;
  // Read into this thread's scratch, then one allocation of the stack's size (none for a thread
  // that runs no Python), not one per doubling.
  thread_local std::vector<process::PythonFrame> scratch;
  scratch.clear();
  if (python_->Capture(scratch) > 0) frames.assign(scratch.begin(), scratch.end());
}

void LaunchStackCollector::OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData& data) {
  if (off_.load(std::memory_order_relaxed) || data.resourceDescriptor == nullptr) return;
  const auto& graph = *static_cast<const CUpti_GraphData*>(data.resourceDescriptor);
  if (graph.nodeType != CU_GRAPH_NODE_TYPE_KERNEL) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    const uint64_t node = cupti_.GraphNodeId(graph.node);
    if (node == 0) return;
    uintptr_t pcs[process::kMaxCallStackFrames];
    const size_t n = process::CaptureCallStack(pcs, process::kMaxCallStackFrames, 0);
    if (n > 0) {
      std::vector<process::PythonFrame> python;
      TakePythonFrames(python);
      pipeline_.QueueGraphNodeStack(node, pcs, n, std::move(python), cupti_.Timestamp(),
                                    static_cast<uint64_t>(::syscall(SYS_gettid)));
    }
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    const uint64_t node = cupti_.GraphNodeId(graph.node);
    const uint64_t original = cupti_.GraphNodeId(graph.originalNode);
    if (node != 0 && original != 0 && node != original) pipeline_.QueueGraphNodeClone(node, original);
  }
}

}  // namespace cuscope::cupti
