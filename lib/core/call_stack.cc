#include "lib/core/call_stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
#include <unwind.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "lib/core/elf_build_id.h"

namespace cuscope::core {
namespace {

struct Walk {
  uintptr_t* out;
  size_t max;
  size_t skip;
  size_t count = 0;
};

_Unwind_Reason_Code OnFrame(struct _Unwind_Context* context, void* arg) {
  Walk& w = *static_cast<Walk*>(arg);
  const uintptr_t ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  if (w.skip > 0) {
    --w.skip;
    return _URC_NO_REASON;
  }
  if (w.count >= w.max) return _URC_END_OF_STACK;
  w.out[w.count++] = ip;
  return _URC_NO_REASON;
}

}  // namespace

size_t CaptureCallStack(uintptr_t* out, size_t max, size_t skip) {
  if (out == nullptr || max == 0) return 0;
  Walk w{out, max, skip + 1};  // and this function's own frame
  _Unwind_Backtrace(OnFrame, &w);
  return w.count;
}

namespace {

// The executable's path. The dynamic linker names the executable by the program's argv[0]
// ("python" from a virtual environment, whatever a process title changer wrote), not its file.
const std::string& ExecutablePath() {
  static const std::string path = [] {
    char buffer[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
  }();
  return path;
}

// Build ids by module base, read once per module: reading walks the loaded objects under the
// dynamic linker's lock. Bounded; an object unloaded and another loaded at its base could keep the
// first one's id, which only makes a line unresolvable (the files' ids differ), never wrong.
std::string BuildIdOfModule(uintptr_t base, uintptr_t address) {
  static std::mutex mu;
  static std::unordered_map<uintptr_t, std::string> by_base;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = by_base.find(base); it != by_base.end()) return it->second;
  }
  std::string id = BuildIdOfLoadedObjectAt(address);
  std::lock_guard<std::mutex> lock(mu);
  if (by_base.size() >= 4096) by_base.clear();
  by_base.emplace(base, id);
  return id;
}

}  // namespace

ResolvedFrame ResolveReturnAddress(uintptr_t return_address) {
  ResolvedFrame f;
  // The call instruction ends at the return address: one byte before it lies inside the call,
  // which matters when the call is a function's last instruction (a noreturn callee).
  const uintptr_t call = return_address > 0 ? return_address - 1 : 0;
  Dl_info info{};
  if (call == 0 || ::dladdr(reinterpret_cast<void*>(call), &info) == 0) {
    f.module_offset = call;
    return f;
  }
  const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  if (info.dli_fname != nullptr) f.module = info.dli_fname;
  if (info.dli_fname != nullptr && info.dli_fname == program_invocation_name && !ExecutablePath().empty()) {
    f.module = ExecutablePath();  // the executable itself, named by its argv[0]
  }
  f.module_offset = call - base;
  f.build_id = BuildIdOfModule(reinterpret_cast<uintptr_t>(info.dli_fbase), call);
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    f.function = info.dli_sname;
    f.function_offset = call - reinterpret_cast<uintptr_t>(info.dli_saddr);
  }
  return f;
}

}  // namespace cuscope::core
