#include "lib/attach/injector.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace cuscope::attach {
namespace {

struct LibcFunctions {
  uint64_t dlopen = 0, dlerror = 0, dlsym = 0;
};

// The C library's functions in the process: this process's C library must be the same file (same
// inode), so that each function sits at the same offset from its load address.
absl::StatusOr<LibcFunctions> FindLibcFunctions(const ProcessFacts& facts) {
  const char* names[] = {"dlopen", "dlerror", "dlsym"};
  uint64_t own[3] = {};
  Dl_info info{};
  // Looked up in the C library itself, not the program's scope, where a sanitizer's or another
  // tool's interceptor of the same name may come first.
  void* libc = ::dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == nullptr) return absl::InternalError("cuscope's own process has no libc.so.6 loaded");
  for (int i = 0; i < 3; ++i) {
    void* address = ::dlsym(libc, names[i]);
    Dl_info at{};
    if (address == nullptr || ::dladdr(address, &at) == 0 || at.dli_fname == nullptr) {
      return absl::InternalError(absl::StrCat("cannot find ", names[i], " in cuscope's own C library"));
    }
    // All three in one object (an interposer of one would put it elsewhere).
    if (i == 0) {
      info = at;
    } else if (at.dli_fbase != info.dli_fbase) {
      return absl::InternalError(absl::StrCat(names[i], " is not in the C library dlopen is in (", at.dli_fname, ")"));
    }
    own[i] = reinterpret_cast<uint64_t>(address);
  }
  ::dlclose(libc);  // RTLD_NOLOAD took a reference
  struct stat own_file{};
  if (::stat(info.dli_fname, &own_file) != 0) return absl::InternalError(absl::StrCat("cannot stat ", info.dli_fname));
  const Mapping* target = nullptr;
  for (const Mapping& m : facts.mappings) {
    if (m.offset == 0 && m.path.size() >= 9 && m.path.compare(m.path.size() - 9, 9, "libc.so.6") == 0) target = &m;
  }
  if (target == nullptr) return absl::FailedPreconditionError("the process has no libc.so.6 mapped");
  // The same file: device and inode, the target's path seen through its own root.
  struct stat target_file{};
  const std::string seen = absl::StrCat("/proc/", facts.pid, "/root", target->path);
  if (::stat(seen.c_str(), &target_file) != 0 || target_file.st_dev != own_file.st_dev ||
      target_file.st_ino != own_file.st_ino || target->inode != own_file.st_ino) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the process uses another C library (", target->path, ") than cuscope (", info.dli_fname,
        "): a process in another container or root file system cannot be attached to from here"));
  }
  const uint64_t own_base = reinterpret_cast<uint64_t>(info.dli_fbase);
  LibcFunctions f;
  f.dlopen = target->start + (own[0] - own_base);
  f.dlerror = target->start + (own[1] - own_base);
  f.dlsym = target->start + (own[2] - own_base);
  return f;
}

absl::Status Failed(FailAt at) {
  return absl::AbortedError(absl::StrCat("failed on purpose at step ", static_cast<int>(at)));
}

// dlerror's line in the process, or a placeholder.
std::string RemoteError(RemoteThread& thread, const LibcFunctions& libc) {
  absl::StatusOr<uint64_t> message = thread.Call(libc.dlerror, {0, 0, 0});
  if (!message.ok() || *message == 0) return "no reason given";
  absl::StatusOr<std::string> text = thread.ReadString(*message, 512);
  return text.ok() ? *text : "no reason given";
}

}  // namespace

absl::StatusOr<InjectReport> InjectLibrary(const ProcessFacts& facts, const std::string& library,
                                           const std::string& entry_symbol, const std::string& entry_argument,
                                           const InjectOptions& options) {
  absl::StatusOr<LibcFunctions> libc = FindLibcFunctions(facts);
  if (!libc.ok()) return libc.status();
  absl::StatusOr<std::unique_ptr<RemoteThread>> seized = RemoteThread::Seize(facts.pid, options.thread);
  if (!seized.ok()) return seized.status();
  RemoteThread& thread = **seized;
  // Every return below releases the thread (its destructor), restored.
  const auto fail = [&thread](absl::Status status) -> absl::Status {
    if (absl::Status released = thread.Release(); !released.ok()) {
      return absl::InternalError(absl::StrCat(status.message(), "; and giving the thread back failed: ",
                                              released.message()));
    }
    return status;
  };
  if (options.fail_at == FailAt::kAfterSeize) return fail(Failed(FailAt::kAfterSeize));
  if (options.fail_at == FailAt::kBeforeLoad) return fail(Failed(FailAt::kBeforeLoad));
  absl::StatusOr<uint64_t> handle = thread.Call(libc->dlopen, {0, RTLD_NOW, 0}, &library);
  if (!handle.ok()) return fail(handle.status());
  if (*handle == 0) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat("loading ", library, " into the process failed: ", RemoteError(thread, *libc))));
  }
  if (options.fail_at == FailAt::kAfterLoad) return fail(Failed(FailAt::kAfterLoad));
  absl::StatusOr<uint64_t> entry = thread.Call(libc->dlsym, {*handle, 0, 0}, &entry_symbol, /*text_index=*/1);
  if (!entry.ok()) return fail(entry.status());
  if (*entry == 0) {
    return fail(absl::FailedPreconditionError(absl::StrCat(library, " has no ", entry_symbol)));
  }
  if (options.fail_at == FailAt::kBeforeEntry) return fail(Failed(FailAt::kBeforeEntry));
  absl::StatusOr<uint64_t> result = thread.Call(*entry, {0, 0, 0}, &entry_argument);
  if (!result.ok()) return fail(result.status());
  if (absl::Status released = thread.Release(); !released.ok()) return released;
  InjectReport report;
  report.thread = thread.tid();
  report.stopped_ns = thread.stopped_ns();
  report.entry_result = static_cast<int>(static_cast<int32_t>(*result));
  return report;
}

}  // namespace cuscope::attach
