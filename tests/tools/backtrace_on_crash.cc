// A diagnostic for the GPU machine, which has no debugger: preloaded (LD_PRELOAD) into a program,
// it prints the crashing thread's frames on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (an
// uncaught exception aborts from inside its throw, so its frames show where it came from), then
// lets the signal end the program as it would have. Frames in a library without symbols show as
// library(+offset): `addr2line -f -C -e LIB OFFSET` on an unstripped copy names them.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

char g_alternate_stack[1 << 16];

void Write(const char* text) { (void)!write(STDERR_FILENO, text, std::strlen(text)); }

void OnCrash(int signo, siginfo_t* info, void*) {
  char line[160];
  std::snprintf(line, sizeof(line), "\n== backtrace_on_crash: signal %d (%s) at address %p in thread %ld\n", signo,
                strsignal(signo), info->si_addr, static_cast<long>(gettid()));
  Write(line);
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info where{};
    if (dladdr(frames[i], &where) != 0 && where.dli_fname != nullptr) {
      std::snprintf(line, sizeof(line), "  #%-2d %s +0x%lx %s\n", i, where.dli_fname,
                    static_cast<unsigned long>(reinterpret_cast<char*>(frames[i]) -
                                               static_cast<char*>(where.dli_fbase)),
                    where.dli_sname != nullptr ? where.dli_sname : "");
    } else {
      std::snprintf(line, sizeof(line), "  #%-2d %p\n", i, frames[i]);
    }
    Write(line);
  }
  signal(signo, SIG_DFL);
  raise(signo);
}

__attribute__((constructor)) void Install() {
  stack_t alternate{};
  alternate.ss_sp = g_alternate_stack;
  alternate.ss_size = sizeof(g_alternate_stack);
  sigaltstack(&alternate, nullptr);
  struct sigaction action {};
  action.sa_sigaction = OnCrash;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  for (int signo : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(signo, &action, nullptr);
}

}  // namespace
