// A thread of another process, stopped with ptrace so that functions can be called in it, then
// given back as it was. x86-64 Linux only.
//
// Seize picks a thread that is blocked in a system call that waits (futex, poll and epoll, sleeps,
// read, ioctl, ...), trying every thread of the process for a while: a thread stopped there holds
// no lock of the C library's allocator or loader (a thread stopped in the middle of malloc would
// deadlock the library load). The rest of the process keeps running throughout.
//
// Call runs a function to its return on the thread's own stack (below its red zone), with its
// registers and floating-point state saved first and restored by Release, which also lets the
// system call it was in start again and sends it again the signals that arrived meanwhile. The
// function returns to address 0: the fault that follows is the end of the call, never delivered.
// A fault of the function itself (SIGSEGV elsewhere, SIGBUS, ...) fails the call. While a thread is
// held, this thread blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGTSTP, so that the command is
// not ended with the other process's thread inside a call.
#ifndef CUSCOPE_LIB_ATTACH_REMOTE_THREAD_H_
#define CUSCOPE_LIB_ATTACH_REMOTE_THREAD_H_

#include <sys/types.h>

#include <signal.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::attach {

class RemoteThread {
 public:
  struct Options {
    // How long Seize looks for a thread blocked in a waiting call.
    std::chrono::milliseconds find_for{2000};
    // After this long a Call says so through `waiting` (every that long), and goes on waiting: a
    // call abandoned half way (its thread's registers put back inside dlopen) would leave the
    // process's loader lock held for good.
    std::chrono::milliseconds call_timeout{10000};
    std::function<void(long seconds)> waiting;
  };

  // PermissionDenied when the kernel refuses to trace the process; Unavailable when no thread was
  // found waiting in a system call in time; Unimplemented off x86-64.
  static absl::StatusOr<std::unique_ptr<RemoteThread>> Seize(pid_t pid, const Options& options);
  ~RemoteThread();  // releases the thread if Release was not called
  RemoteThread(const RemoteThread&) = delete;
  RemoteThread& operator=(const RemoteThread&) = delete;

  // Calls `function` (an address in the process) with up to three integer arguments; with `text`,
  // argument `text_index` is the address of a copy of it (NUL-terminated) on the thread's stack.
  // Returns the function's integer result.
  absl::StatusOr<uint64_t> Call(uint64_t function, std::array<uint64_t, 3> arguments, const std::string* text = nullptr,
                                size_t text_index = 0);
  // A NUL-terminated string of the process's memory, at most `max` bytes.
  absl::StatusOr<std::string> ReadString(uint64_t address, size_t max) const;
  // Restores the thread as it was and detaches. Idempotent.
  absl::Status Release();

  pid_t tid() const { return tid_; }
  // How long the thread has been stopped (until Release, then fixed).
  uint64_t stopped_ns() const;

 private:
  RemoteThread(pid_t pid, pid_t tid, int mem_fd, std::chrono::milliseconds call_timeout);
  absl::Status WriteMemory(uint64_t address, const void* data, size_t size) const;

  const pid_t pid_;
  const pid_t tid_;
  const int mem_fd_;
  const std::chrono::milliseconds call_timeout_;
  bool released_ = false;
  std::chrono::steady_clock::time_point stopped_at_;
  std::chrono::steady_clock::time_point released_at_;
  std::vector<uint8_t> saved_regs_;    // struct user_regs_struct
  std::vector<uint8_t> saved_fpregs_;  // struct user_fpregs_struct
  std::vector<int> pending_signals_;   // arrived during calls: sent again at Release
  std::function<void(long)> waiting_;
  sigset_t saved_mask_{};              // this thread's signal mask before Seize
};

}  // namespace cuscope::attach

#endif  // CUSCOPE_LIB_ATTACH_REMOTE_THREAD_H_
