#include "lib/attach/remote_thread.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cuscope::attach {

#if defined(__x86_64__)

namespace {

using Clock = std::chrono::steady_clock;

std::string Errno(const char* what) { return absl::StrCat(what, ": ", std::strerror(errno)); }

std::vector<pid_t> Threads(pid_t pid) {
  std::vector<pid_t> tids;
  const std::string dir = absl::StrCat("/proc/", pid, "/task");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return tids;
  while (dirent* e = ::readdir(d)) {
    pid_t tid = 0;
    if (absl::SimpleAtoi(e->d_name, &tid)) tids.push_back(tid);
  }
  ::closedir(d);
  return tids;
}

// The system calls a thread waits in without holding the allocator's or the loader's lock.
bool WaitingCall(long nr) {
  switch (nr) {
    case SYS_read: case SYS_poll: case SYS_select: case SYS_ioctl: case SYS_sched_yield: case SYS_pause:
    case SYS_nanosleep: case SYS_accept: case SYS_recvfrom: case SYS_recvmsg: case SYS_wait4:
    case SYS_rt_sigtimedwait: case SYS_futex: case SYS_epoll_wait: case SYS_clock_nanosleep:
    case SYS_pselect6: case SYS_ppoll: case SYS_epoll_pwait: case SYS_accept4:
      return true;
    default:
      return false;
  }
}

// Stopped inside a system call: its return value is one of the kernel's restart codes or EINTR.
bool InsideCall(const user_regs_struct& r) {
  const long rax = static_cast<long>(r.rax);
  return static_cast<long>(r.orig_rax) >= 0 && (rax == -EINTR || (rax <= -512 && rax >= -516));
}

// Waits for `tid` to stop; its wait status. -1 when it is gone.
int WaitStop(pid_t tid) {
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(tid, &status, __WALL);
  } while (got < 0 && errno == EINTR);
  return got == tid ? status : -1;
}

// A fault the kernel raised on the instruction itself (not a signal another process sent).
bool KernelFault(pid_t tid, int sig) {
  if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGTRAP) return false;
  siginfo_t info{};
  return ::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) == 0 && info.si_code > 0;
}

}  // namespace

RemoteThread::RemoteThread(pid_t pid, pid_t tid, int mem_fd, std::chrono::milliseconds call_timeout)
    : pid_(pid), tid_(tid), mem_fd_(mem_fd), call_timeout_(call_timeout) {}

RemoteThread::~RemoteThread() {
  (void)Release();
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

absl::StatusOr<std::unique_ptr<RemoteThread>> RemoteThread::Seize(pid_t pid, const Options& options) {
  const Clock::time_point deadline = Clock::now() + options.find_for;
  bool any_seized = false;
  do {
    for (pid_t tid : Threads(pid)) {
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        if (errno == EPERM) {
          return absl::PermissionDeniedError(absl::StrCat("the kernel refused to trace process ", pid,
                                                          " (ptrace: permission denied)"));
        }
        continue;  // gone, or traced by someone else
      }
      any_seized = true;
      const Clock::time_point stopped_at = Clock::now();
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      const int status = WaitStop(tid);
      if (status == -1 || !WIFSTOPPED(status)) continue;
      if ((status >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP) {
        // A group-stop: the process is stopped (job control). Its threads are not to be used.
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      if ((status >> 16) != PTRACE_EVENT_STOP) {
        // A signal came first: let the thread have it, and look elsewhere.
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
        continue;
      }
      user_regs_struct regs{};
      if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0 || !InsideCall(regs) ||
          !WaitingCall(static_cast<long>(regs.orig_rax))) {
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      user_fpregs_struct fpregs{};
      if (::ptrace(PTRACE_GETFPREGS, tid, nullptr, &fpregs) != 0) {
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;
      }
      const int mem = ::open(absl::StrCat("/proc/", pid, "/mem").c_str(), O_RDWR | O_CLOEXEC);
      if (mem < 0) {
        const std::string why = Errno("open /proc/PID/mem");
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        return absl::PermissionDeniedError(why);
      }
      std::unique_ptr<RemoteThread> thread(new RemoteThread(pid, tid, mem, options.call_timeout));
      thread->waiting_ = options.waiting;
      // Ctrl-C, a hang-up or a stop of this command while the thread is held would end the tracing
      // with the thread inside a call: held until Release.
      sigset_t block;
      sigemptyset(&block);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP}) sigaddset(&block, sig);
      ::pthread_sigmask(SIG_BLOCK, &block, &thread->saved_mask_);
      thread->stopped_at_ = stopped_at;
      thread->saved_regs_.assign(reinterpret_cast<uint8_t*>(&regs), reinterpret_cast<uint8_t*>(&regs) + sizeof regs);
      thread->saved_fpregs_.assign(reinterpret_cast<uint8_t*>(&fpregs),
                                   reinterpret_cast<uint8_t*>(&fpregs) + sizeof fpregs);
      return thread;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  } while (Clock::now() < deadline);
  if (!any_seized) return absl::NotFoundError(absl::StrCat("process ", pid, " has no thread to attach to (gone?)"));
  return absl::UnavailableError(absl::StrCat(
      "no thread of process ", pid, " was waiting in a system call (sleep, futex, poll, read, ioctl) within ",
      options.find_for.count(), " ms: a thread busy in its own code may hold the allocator's lock, so none is used"));
}

absl::Status RemoteThread::WriteMemory(uint64_t address, const void* data, size_t size) const {
  if (::pwrite(mem_fd_, data, size, static_cast<off_t>(address)) != static_cast<ssize_t>(size)) {
    return absl::InternalError(Errno("writing the process's stack"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RemoteThread::ReadString(uint64_t address, size_t max) const {
  std::string out(max, '\0');
  const ssize_t n = ::pread(mem_fd_, out.data(), max, static_cast<off_t>(address));
  if (n <= 0) return absl::InternalError(Errno("reading the process's memory"));
  out.resize(static_cast<size_t>(n));
  if (const size_t end = out.find('\0'); end != std::string::npos) out.resize(end);
  return out;
}

absl::StatusOr<uint64_t> RemoteThread::Call(uint64_t function, std::array<uint64_t, 3> arguments,
                                            const std::string* text, size_t text_index) {
  if (released_) return absl::FailedPreconditionError("the thread was released");
  user_regs_struct regs;
  std::memcpy(&regs, saved_regs_.data(), sizeof regs);
  // Below the red zone (128 bytes) and some more; 16-byte aligned at the call, as the ABI wants.
  uint64_t sp = (regs.rsp - 1024) & ~uint64_t{15};
  if (text != nullptr) {
    sp -= (text->size() + 1 + 15) & ~size_t{15};
    if (auto st = WriteMemory(sp, text->c_str(), text->size() + 1); !st.ok()) return st;
    arguments[text_index < arguments.size() ? text_index : 0] = sp;
  }
  sp -= 64;
  const uint64_t return_address = 0;
  sp -= 8;
  if (auto st = WriteMemory(sp, &return_address, sizeof return_address); !st.ok()) return st;
  regs.rsp = sp;
  regs.rip = function;
  regs.rdi = arguments[0];
  regs.rsi = arguments[1];
  regs.rdx = arguments[2];
  regs.rax = 0;
  regs.orig_rax = static_cast<uint64_t>(-1);  // not in a system call: nothing to restart meanwhile
  if (::ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) return absl::InternalError(Errno("ptrace SETREGS"));
  if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) return absl::InternalError(Errno("ptrace CONT"));
  // A call is never abandoned half way: the thread's registers put back in the middle of dlopen
  // would leave the loader's lock held for good. Past the timeout it is waited for all the same,
  // and `waiting` says so.
  Clock::time_point next_word = Clock::now() + call_timeout_;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(tid_, &status, __WALL | WNOHANG);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) {
      if (Clock::now() > next_word) {
        if (waiting_) waiting_(std::chrono::duration_cast<std::chrono::seconds>(call_timeout_).count());
        next_word = Clock::now() + call_timeout_;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (got != tid_ || WIFEXITED(status) || WIFSIGNALED(status)) {
      released_ = true;
      released_at_ = Clock::now();
      ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
      return absl::AbortedError(absl::StrCat("process ", pid_, " ended during the call"));
    }
    if (!WIFSTOPPED(status)) continue;
    const int sig = WSTOPSIG(status);
    if ((status >> 16) == PTRACE_EVENT_STOP) {
      (void)::ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
      continue;
    }
    if (sig == SIGSEGV) {
      user_regs_struct after{};
      if (::ptrace(PTRACE_GETREGS, tid_, nullptr, &after) != 0) return absl::InternalError(Errno("ptrace GETREGS"));
      if (after.rip == return_address) return after.rax;  // returned
    }
    if (KernelFault(tid_, sig)) {
      // The function itself faulted: running it on would fault again. Not delivered.
      return absl::InternalError(absl::StrCat("the call faulted (signal ", sig, ")"));
    }
    pending_signals_.push_back(sig);  // the program's: sent again at Release
    (void)::ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
  }
}

absl::Status RemoteThread::Release() {
  if (released_) return absl::OkStatus();
  released_ = true;
  released_at_ = Clock::now();
  absl::Status status;
  if (::ptrace(PTRACE_SETREGS, tid_, nullptr, saved_regs_.data()) != 0) status = absl::InternalError(Errno("restoring registers"));
  if (::ptrace(PTRACE_SETFPREGS, tid_, nullptr, saved_fpregs_.data()) != 0 && status.ok()) {
    status = absl::InternalError(Errno("restoring floating-point registers"));
  }
  if (::ptrace(PTRACE_DETACH, tid_, nullptr, nullptr) != 0 && status.ok()) {
    status = absl::InternalError(Errno("ptrace DETACH"));
  }
  // The signals that arrived during the calls, sent again (each once) now the thread runs on.
  std::sort(pending_signals_.begin(), pending_signals_.end());
  pending_signals_.erase(std::unique(pending_signals_.begin(), pending_signals_.end()), pending_signals_.end());
  for (int sig : pending_signals_) (void)::syscall(SYS_tgkill, pid_, tid_, sig);
  ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  return status;
}

uint64_t RemoteThread::stopped_ns() const {
  const Clock::time_point end = released_ ? released_at_ : Clock::now();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - stopped_at_).count());
}

#else  // not x86-64

RemoteThread::RemoteThread(pid_t pid, pid_t tid, int mem_fd, std::chrono::milliseconds call_timeout)
    : pid_(pid), tid_(tid), mem_fd_(mem_fd), call_timeout_(call_timeout) {}
RemoteThread::~RemoteThread() = default;
absl::StatusOr<std::unique_ptr<RemoteThread>> RemoteThread::Seize(pid_t, const Options&) {
  return absl::UnimplementedError("attaching is implemented for x86-64 Linux only");
}
absl::StatusOr<uint64_t> RemoteThread::Call(uint64_t, std::array<uint64_t, 3>, const std::string*, size_t) {
  return absl::UnimplementedError("attaching is implemented for x86-64 Linux only");
}
absl::StatusOr<std::string> RemoteThread::ReadString(uint64_t, size_t) const {
  return absl::UnimplementedError("attaching is implemented for x86-64 Linux only");
}
absl::Status RemoteThread::Release() { return absl::OkStatus(); }
uint64_t RemoteThread::stopped_ns() const { return 0; }
absl::Status RemoteThread::WriteMemory(uint64_t, const void*, size_t) const { return absl::OkStatus(); }

#endif

}  // namespace cuscope::attach
