// Whether `cuscope attach` may go into a process, and if not, the one line that says why. Pure:
// a function of the process's facts and of who is asking.
//
// Refused: a process that never loaded the CUDA driver (nothing to profile), one statically linked
// (no dynamic loader to load a library with), one under a seccomp mode (its filter may kill it for
// the calls a library load makes), one with another CUDA injection tool (Nsight Systems, Nsight
// Compute: CUDA_INJECTION64_PATH; CUPTI serves one tool), and one the caller
// may not trace: another user's process without CAP_SYS_PTRACE, or any process the kernel's Yama
// setting keeps from us (scope 1: only a process's ancestors, or a tracer it named with
// PR_SET_PTRACER, may trace it without CAP_SYS_PTRACE; 2: only with CAP_SYS_PTRACE; 3: no one).
// Nothing here is weakened to get in: the line names the setting and who may change it. cuscope
// itself inside (linked, preloaded, attached before) is not refused here: dormant, it is started
// again; with a session active, the command refuses (its control socket answers).
#ifndef CUSCOPE_LIB_ATTACH_ATTACH_POLICY_H_
#define CUSCOPE_LIB_ATTACH_ATTACH_POLICY_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "lib/attach/process_facts.h"

namespace cuscope::attach {

struct Caller {
  uint32_t uid = 0;
  bool cap_sys_ptrace = false;
  std::optional<int> yama_scope;  // /proc/sys/kernel/yama/ptrace_scope; nullopt without Yama
  bool is_ancestor = false;       // the caller is an ancestor of the process
};

// `require_cuda`: refuse a process without the CUDA driver mapped.
absl::Status CheckAttachable(const ProcessFacts& facts, const Caller& caller, bool require_cuda = true);

// The caller as the kernel sees it: real uid, CAP_SYS_PTRACE in the effective set, Yama's scope,
// and whether `pid` descends from this process.
Caller CurrentCaller(pid_t pid);

}  // namespace cuscope::attach

#endif  // CUSCOPE_LIB_ATTACH_ATTACH_POLICY_H_
