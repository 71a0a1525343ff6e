// Call stacks of kernel launches (CUSCOPE_STACKS, --stacks): taken on the launching thread at the
// launch call's entry, for the launches the sampling picks, and queued for the writer, which
// resolves each return address once and interns frames and stacks into the trace
// (TracePipeline::QueueLaunchStack). A kernel launched through the runtime gets the runtime call's
// stack and correlation id (the one its kernel record carries); one launched through the driver
// directly (CuPy, JAX, Triton) the driver call's. In a Python program the launching thread's Python
// frames are read too (lib/process/python_stack.h), at the same moment, on the same thread.
#ifndef CUSCOPE_LIB_CUPTI_LAUNCH_STACKS_H_
#define CUSCOPE_LIB_CUPTI_LAUNCH_STACKS_H_

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "lib/process/python_stack.h"
#include "lib/settings/stack_sampling.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/trace_pipeline.h"

namespace cuscope::cupti {

class LaunchStackCollector {
 public:
  LaunchStackCollector(settings::StackSampling sampling, TracePipeline& pipeline, CuptiApi& cupti);

  // The callbacks to enable on the session's subscriber: the runtime's and the driver's launches.
  static std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> Callbacks();
  // Whether `cbid` of the driver domain is one of them.
  static bool IsDriverLaunch(CUpti_CallbackId cbid);

  // One callback of the session's subscriber; `recording` says whether a timeline window is open
  // (launches outside every window leave no kernel record to attach a stack to).
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info, bool recording);
  // A graph kernel node created (its stack is taken whatever the sampling: once per node, and
  // every replay of the graph is attributed through it) or cloned into an executable graph.
  void OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData& data);

  // In a Python process: each stack also takes the launching thread's Python frames, merged into
  // the native frames by the writer (where the interpreter's eval loop ran them).
  void ReadPythonFrames(const process::PythonStackReader& reader) { python_ = reader; }

  // No more stacks (their callbacks could not all be enabled).
  void TurnOff() { off_.store(true); }

  uint64_t taken() const { return taken_.load(std::memory_order_relaxed); }

 private:
  // The launching thread's Python frames, appended to `frames` (none outside Python).
  void TakePythonFrames(std::vector<process::PythonFrame>& frames) const;

  settings::LaunchSampler sampler_;
  std::optional<process::PythonStackReader> python_;
  TracePipeline& pipeline_;
  CuptiApi& cupti_;
  std::atomic<uint64_t> taken_{0};
  std::atomic<bool> off_{false};
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_LAUNCH_STACKS_H_
