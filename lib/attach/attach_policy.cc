#include "lib/attach/attach_policy.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cuscope::attach {
namespace {

constexpr int kCapSysPtrace = 19;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::Status CheckAttachable(const ProcessFacts& f, const Caller& caller, bool require_cuda) {
  const std::string who = absl::StrCat("process ", f.pid, f.name.empty() ? "" : absl::StrCat(" (", f.name, ")"));
  if (f.uid != caller.uid) {
    // Even with CAP_SYS_PTRACE: the session inside the process reads its settings from, and
    // answers on, a control directory only the process's user may enter.
    return absl::PermissionDeniedError(absl::StrCat(
        who, " belongs to user ", f.uid, ": run cuscope attach as that user (root may: su that user -c 'cuscope "
        "attach ...'; tracing another user's process also needs CAP_SYS_PTRACE, which cuscope does not use)"));
  }
  if (caller.yama_scope.has_value() && !caller.cap_sys_ptrace) {
    if (*caller.yama_scope >= 3) {
      return absl::PermissionDeniedError(
          "kernel.yama.ptrace_scope is 3: no process may be attached to until reboot; cuscope cannot attach");
    }
    if (*caller.yama_scope == 2) {
      return absl::PermissionDeniedError(
          "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may attach (run cuscope attach as root)");
    }
    if (*caller.yama_scope == 1 && !caller.is_ancestor) {
      return absl::PermissionDeniedError(absl::StrCat(
          "kernel.yama.ptrace_scope is 1: only an ancestor of ", who,
          " (or a tracer it names with prctl(PR_SET_PTRACER)) may attach without CAP_SYS_PTRACE; run cuscope "
          "attach as root, or start it from the process's parent shell (an administrator may set the scope to 0, "
          "at a cost to every process's isolation)"));
    }
  }
  if (f.state == 'T' || f.state == 't') {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " is stopped (job control or a debugger): continue it first (kill -CONT ", f.pid, ")"));
  }
  if (f.tracer != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " is being traced by process ", f.tracer, " (a debugger, strace): a process has one tracer at a time"));
  }
  if (f.BaseOf("libc.so.6") == std::nullopt) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " has no C library mapped (statically linked?): there is no loader to load cuscope with"));
  }
  if (f.seccomp != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " runs under seccomp (mode ", f.seccomp,
        "): its filter may kill it for the calls loading a library makes; cuscope does not attach"));
  }
  if (!f.injection.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " started with another CUDA tool injected (CUDA_INJECTION64_PATH=", f.injection,
        "): CUPTI serves one tool per process"));
  }
  if (require_cuda && f.MappedFile("libcuda.so").empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " has not loaded the CUDA driver (libcuda.so): it never used CUDA, nothing to profile"));
  }
  return absl::OkStatus();
}

Caller CurrentCaller(pid_t pid) {
  Caller c;
  c.uid = static_cast<uint32_t>(::getuid());
  for (absl::string_view line : absl::StrSplit(ReadAll("/proc/self/status"), '\n')) {
    if (absl::ConsumePrefix(&line, "CapEff:")) {
      uint64_t caps = 0;
      if (absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &caps)) {
        c.cap_sys_ptrace = (caps >> kCapSysPtrace) & 1;
      }
    }
  }
  int scope = 0;
  const std::string yama = ReadAll("/proc/sys/kernel/yama/ptrace_scope");
  if (!yama.empty() && absl::SimpleAtoi(absl::StripAsciiWhitespace(yama), &scope)) c.yama_scope = scope;
  // Up the parent chain from `pid` to init.
  const pid_t self = ::getpid();
  pid_t at = pid;
  for (int depth = 0; depth < 64 && at > 1; ++depth) {
    pid_t parent = 0;
    for (absl::string_view line : absl::StrSplit(ReadAll(absl::StrCat("/proc/", at, "/status")), '\n')) {
      if (absl::ConsumePrefix(&line, "PPid:")) (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &parent);
    }
    if (parent == self) {
      c.is_ancestor = true;
      break;
    }
    at = parent;
  }
  return c;
}

}  // namespace cuscope::attach
