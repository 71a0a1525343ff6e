#include "lib/process/call_stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "lib/process/elf_build_id.h"

namespace cuscope::process {
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

// libunwind's unw_backtrace(buffer, size): the return addresses from its caller outwards.
using UnwBacktrace = int (*)(void**, int);

std::mutex g_libunwind_mu;                      // loading
std::atomic<UnwBacktrace> g_libunwind{nullptr};  // once loaded, for the process's life
std::atomic<unsigned long long> g_unloaded_at_load{0};
std::atomic<bool> g_use_libunwind{false};        // as last asked (UseLibunwind / UseLibgcc)

// How many objects the dynamic linker has unloaded in this process (dl_iterate_phdr's dlpi_subs,
// read from the first object and no further).
unsigned long long ObjectsUnloaded() {
  unsigned long long subs = 0;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t size, void* data) {
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
          *static_cast<unsigned long long*>(data) = info->dlpi_subs;
        }
        return 1;
      },
      &subs);
  return subs;
}

// libunwind's backtrace while it is asked for and may be used; nullptr once an object was unloaded
// after it was loaded (its caches, keyed by address, may describe code that is gone: its threads
// filled them since then, whatever was asked in between), and from then on.
UnwBacktrace UsableLibunwind() {
  if (!g_use_libunwind.load(std::memory_order_acquire)) return nullptr;
  if (ObjectsUnloaded() == g_unloaded_at_load.load(std::memory_order_relaxed)) return g_libunwind.load();
  g_use_libunwind.store(false);
  return nullptr;
}

// The directory of the object holding this code, with its slash; empty when unknown.
std::string DirectoryOfThisLibrary() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&ObjectsUnloaded), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

size_t CaptureCallStack(uintptr_t* out, size_t max, size_t skip) {
  if (out == nullptr || max == 0) return 0;
  if (UnwBacktrace backtrace = UsableLibunwind(); backtrace != nullptr) {
    // unw_backtrace starts at its caller, this function, as libgcc's walk does.
    void* frames[kMaxCallStackFrames + 8];
    const size_t first = std::min(skip + 1, std::size(frames) - 1);
    const size_t want = std::min(first + max, std::size(frames));
    const int n = backtrace(frames, static_cast<int>(want));
    size_t count = 0;
    for (size_t i = first; i < static_cast<size_t>(std::max(n, 0)) && count < max; ++i) {
      if (frames[i] == nullptr) break;
      out[count++] = reinterpret_cast<uintptr_t>(frames[i]);
    }
    return count;
  }
  Walk w{out, max, skip + 1};  // and this function's own frame
  _Unwind_Backtrace(OnFrame, &w);
  return w.count;
}

absl::Status UseLibunwindFrom(const std::string& library) {
  std::lock_guard<std::mutex> lock(g_libunwind_mu);
  if (g_libunwind.load() == nullptr) {
    // RTLD_LOCAL: libunwind also defines _Unwind_Backtrace and backtrace, which must not replace
    // the program's.
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return absl::NotFoundError(
          absl::StrCat(library, " cannot be loaded (", why != nullptr ? why : "no reason given", ")"));
    }
    auto backtrace = reinterpret_cast<UnwBacktrace>(::dlsym(handle, "unw_backtrace"));
    if (backtrace == nullptr) {
      ::dlclose(handle);
      return absl::NotFoundError(absl::StrCat(library, " has no unw_backtrace"));
    }
    // Kept loaded for the process's life: threads may be inside it.
    g_unloaded_at_load.store(ObjectsUnloaded());
    g_libunwind.store(backtrace);
  }
  g_use_libunwind.store(true, std::memory_order_release);
  if (UsableLibunwind() == nullptr) {
    return absl::FailedPreconditionError(
        "an object was unloaded since libunwind was loaded: call stacks use libgcc's unwinder");
  }
  return absl::OkStatus();
}

absl::Status UseLibunwind() {
  absl::Status st = UseLibunwindFrom("libunwind.so.8");
  if (!absl::IsNotFound(st)) return st;
  const std::string beside = DirectoryOfThisLibrary();
  if (!beside.empty() && UseLibunwindFrom(beside + "libunwind.so.8").ok()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(
      "libunwind.so.8 is neither on the loader's path nor beside ", beside.empty() ? "cuscope" : beside,
      ": call stacks use libgcc's unwinder, ~10x slower a launch (Debian and Ubuntu: libunwind8)"));
}

void UseLibgcc() { g_use_libunwind.store(false, std::memory_order_release); }

Unwinder ActiveUnwinder() { return UsableLibunwind() != nullptr ? Unwinder::kLibunwind : Unwinder::kLibgcc; }

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

}  // namespace cuscope::process
