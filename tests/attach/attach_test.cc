// cuscope attach's pieces on this machine: the /proc parsers, the policy's refusals (each with its
// reason), and the injector on real processes: a library loaded and its entry called while the
// process runs on with the same output and exit code, a thread blocked in read() that still reads
// what comes after, each step failed on purpose with the process unharmed, and the refusals of the
// kernel (a process already traced, another user's).
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/attach/attach_policy.h"
#include "lib/attach/injector.h"
#include "lib/attach/process_facts.h"

namespace cuscope::attach {
namespace {

// ---- /proc parsers ------------------------------------------------------------------------------

TEST(ProcessFactsTest, MapsGiveFileMappingsWithTheirBaseAndPathsWithSpaces) {
  const std::string maps =
      "55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234 /usr/bin/python3.12\n"
      "7f0000000000-7f0000028000 r--p 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f0000028000-7f00001bd000 r-xp 00028000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f1000000000-7f1000001000 rw-p 00000000 00:00 0 \n"
      "7f2000000000-7f2000100000 r-xp 00000000 08:01 77 /opt/my libs/libcuda.so.580.65\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n";
  ProcessFacts f;
  f.mappings = ParseMaps(maps);
  ASSERT_EQ(f.mappings.size(), 4u);
  EXPECT_EQ(f.BaseOf("libc.so.6"), 0x7f0000000000u);
  EXPECT_FALSE(f.mappings[1].executable);
  EXPECT_TRUE(f.mappings[2].executable);
  EXPECT_EQ(f.mappings[2].inode, 42u);
  EXPECT_EQ(f.MappedFile("libcuda.so"), "/opt/my libs/libcuda.so.580.65");
  EXPECT_EQ(f.MappedFile("libcuscope.so"), "");
  EXPECT_EQ(f.BaseOf("libcuscope.so.2"), std::nullopt);
}

TEST(ProcessFactsTest, StatusAndEnvironment) {
  ProcessFacts f;
  ParseStatus("Name:\tpython3\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\nTracerPid:\t77\nSeccomp:\t2\n", &f);
  EXPECT_EQ(f.state, 'S');
  EXPECT_EQ(f.name, "python3");
  EXPECT_EQ(f.uid, 1000u);
  EXPECT_EQ(f.tracer, 77);
  EXPECT_EQ(f.seccomp, 2);
  const std::string environ = std::string("A=1\0CUDA_INJECTION64_PATH=/x/libtool.so\0B=\0", 43);
  EXPECT_EQ(EnvironValue(environ, "CUDA_INJECTION64_PATH"), "/x/libtool.so");
  EXPECT_EQ(EnvironValue(environ, "B"), std::nullopt);  // empty: as unset
  EXPECT_EQ(EnvironValue(environ, "CUDA"), std::nullopt);
}

// ---- the policy -----------------------------------------------------------------------------

ProcessFacts AttachableFacts() {
  ProcessFacts f;
  f.pid = 4242;
  f.uid = 1000;
  f.name = "server";
  f.mappings = ParseMaps(
      "7f0000000000-7f0000028000 r--p 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f2000000000-7f2000100000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libcuda.so.1\n");
  return f;
}

Caller SameUser() {
  Caller c;
  c.uid = 1000;
  return c;
}

void ExpectRefused(const ProcessFacts& f, const Caller& c, const std::string& reason) {
  const absl::Status st = CheckAttachable(f, c);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(reason), std::string::npos) << st.message();
}

TEST(AttachPolicyTest, ACudaProcessOfTheSameUserMayBeAttached) {
  EXPECT_TRUE(CheckAttachable(AttachableFacts(), SameUser()).ok());
  Caller yama_ancestor = SameUser();
  yama_ancestor.yama_scope = 1;
  yama_ancestor.is_ancestor = true;
  EXPECT_TRUE(CheckAttachable(AttachableFacts(), yama_ancestor).ok());
}

TEST(AttachPolicyTest, AnotherUsersProcessIsAttachedAsThatUser) {
  Caller other;
  other.uid = 1001;
  ExpectRefused(AttachableFacts(), other, "run cuscope attach as that user");
  other.cap_sys_ptrace = true;  // root too: the session inside could not read its settings
  ExpectRefused(AttachableFacts(), other, "run cuscope attach as that user");
}

TEST(AttachPolicyTest, YamaScopesAreExplainedAndNotWeakened) {
  Caller c = SameUser();
  c.yama_scope = 1;
  ExpectRefused(AttachableFacts(), c, "ptrace_scope is 1: only an ancestor");
  c.yama_scope = 2;
  ExpectRefused(AttachableFacts(), c, "ptrace_scope is 2");
  c.yama_scope = 3;
  ExpectRefused(AttachableFacts(), c, "ptrace_scope is 3");
  c.yama_scope = 0;
  EXPECT_TRUE(CheckAttachable(AttachableFacts(), c).ok());
  c.yama_scope = 1;
  c.cap_sys_ptrace = true;  // the capability passes scopes 1 and 2
  EXPECT_TRUE(CheckAttachable(AttachableFacts(), c).ok());
}

TEST(AttachPolicyTest, WhatCannotOrMustNotBeAttachedSaysWhy) {
  ProcessFacts f = AttachableFacts();
  f.tracer = 99;
  ExpectRefused(f, SameUser(), "being traced by process 99");
  f = AttachableFacts();
  f.mappings.erase(f.mappings.begin());  // no libc.so.6
  ExpectRefused(f, SameUser(), "statically linked");
  f = AttachableFacts();
  f.seccomp = 2;
  ExpectRefused(f, SameUser(), "seccomp");
  f = AttachableFacts();
  f.mappings = ParseMaps(
      "7f0000000000-7f0000028000 r--p 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f2000000000-7f2000100000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "7f3000000000-7f3000100000 r-xp 00000000 08:01 78 /opt/cuscope/lib/libcuscope.so.2\n");
  EXPECT_TRUE(CheckAttachable(f, SameUser()).ok());  // dormant cuscope inside: started again
  f = AttachableFacts();
  f.injection = "/opt/nsight/libToolsInjection64.so";
  ExpectRefused(f, SameUser(), "another CUDA tool injected");
  f = AttachableFacts();
  f.mappings.pop_back();  // no libcuda
  ExpectRefused(f, SameUser(), "never used CUDA");
  EXPECT_TRUE(CheckAttachable(f, SameUser(), /*require_cuda=*/false).ok());
}

// ---- the injector on real processes -----------------------------------------------------------

struct Child {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout
};

Child Spawn(const std::vector<std::string>& argv) {
  int to[2], from[2];
  if (::pipe(to) != 0 || ::pipe(from) != 0) return {};
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(to[0], 0);
    ::dup2(from[1], 1);
    ::close(to[1]);
    ::close(from[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(to[0]);
  ::close(from[1]);
  c.in = to[1];
  c.out = from[0];
  // Its first line, "ready".
  char ch;
  std::string line;
  while (::read(c.out, &ch, 1) == 1 && ch != '\n') line += ch;
  EXPECT_EQ(line, "ready");
  return c;
}

// The rest of its output and its exit code.
std::pair<std::string, int> Finish(Child& c) {
  if (c.in >= 0) ::close(c.in);
  std::string out;
  char buffer[256];
  ssize_t n;
  while ((n = ::read(c.out, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  ::close(c.out);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

// What `attach_target sleep N` prints when nothing happens to it.
std::string Undisturbed(const std::string& iterations) {
  Child c = Spawn({ATTACH_TARGET, "sleep", iterations});
  return Finish(c).first;
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/attach_", ::getpid(), "_", name);
}

bool Mapped(pid_t pid, const std::string& file) {
  std::ifstream maps(absl::StrCat("/proc/", pid, "/maps"));
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(file) != std::string::npos;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

InjectOptions Quick() {
  InjectOptions o;
  o.thread.find_for = std::chrono::milliseconds(3000);
  return o;
}

class InjectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    expected_ = Undisturbed("400");
    ASSERT_NE(expected_.find("sum="), std::string::npos);
  }
  std::string expected_;
};

TEST_F(InjectorTest, LoadsALibraryAndCallsItsEntryWhileTheProcessRunsOn) {
  Child c = Spawn({ATTACH_TARGET, "sleep", "400"});
  absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
  ASSERT_TRUE(facts.ok()) << facts.status();
  ASSERT_TRUE(CheckAttachable(*facts, CurrentCaller(c.pid), /*require_cuda=*/false).ok());
  const std::string marker = TempPath("called");
  absl::StatusOr<InjectReport> report =
      InjectLibrary(*facts, ATTACH_PROBE_LIBRARY, "attach_probe_entry", marker, Quick());
  if (absl::IsPermissionDenied(report.status())) GTEST_SKIP() << report.status();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->entry_result, 42);
  EXPECT_LT(report->stopped_ns, 1'000'000'000u);  // a thread stopped for well under a second
  EXPECT_EQ(Read(marker), absl::StrCat("called ", marker, "\n"));
  EXPECT_TRUE(Mapped(c.pid, "attach_probe_library"));
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, expected_);  // the same checksum and floating-point result
  std::remove(marker.c_str());
}

TEST_F(InjectorTest, AThreadBlockedInReadStillReadsWhatComesAfter) {
  Child c = Spawn({ATTACH_TARGET, "read"});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into its read()
  absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
  ASSERT_TRUE(facts.ok());
  const std::string marker = TempPath("read_called");
  absl::StatusOr<InjectReport> report =
      InjectLibrary(*facts, ATTACH_PROBE_LIBRARY, "attach_probe_entry", marker, Quick());
  if (absl::IsPermissionDenied(report.status())) GTEST_SKIP() << report.status();
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(::write(c.in, "hello", 5), 5);
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "read=hello\n");
  std::remove(marker.c_str());
}

TEST_F(InjectorTest, EachStepFailedOnPurposeLeavesTheProcessUnharmed) {
  for (FailAt at : {FailAt::kAfterSeize, FailAt::kBeforeLoad, FailAt::kAfterLoad, FailAt::kBeforeEntry}) {
    SCOPED_TRACE(static_cast<int>(at));
    Child c = Spawn({ATTACH_TARGET, "sleep", "400"});
    absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
    ASSERT_TRUE(facts.ok());
    InjectOptions options = Quick();
    options.fail_at = at;
    const std::string marker = TempPath("never");
    absl::StatusOr<InjectReport> report =
        InjectLibrary(*facts, ATTACH_PROBE_LIBRARY, "attach_probe_entry", marker, options);
    if (absl::IsPermissionDenied(report.status())) GTEST_SKIP() << report.status();
    EXPECT_TRUE(absl::IsAborted(report.status())) << report.status();
    // Before the load nothing is loaded; after it the library is there and its entry never ran.
    EXPECT_EQ(Mapped(c.pid, "attach_probe_library"), at == FailAt::kAfterLoad || at == FailAt::kBeforeEntry);
    EXPECT_EQ(Read(marker), "");
    const auto [out, code] = Finish(c);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(out, expected_);
  }
}

TEST_F(InjectorTest, ALibraryThatDoesNotLoadIsNamedWithTheLoadersReason) {
  Child c = Spawn({ATTACH_TARGET, "sleep", "400"});
  absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
  ASSERT_TRUE(facts.ok());
  absl::StatusOr<InjectReport> report =
      InjectLibrary(*facts, "/nonexistent/libnothing.so", "attach_probe_entry", "x", Quick());
  if (absl::IsPermissionDenied(report.status())) GTEST_SKIP() << report.status();
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("cannot open shared object file"), std::string::npos) << report.status();
  absl::StatusOr<InjectReport> no_entry = InjectLibrary(*facts, ATTACH_PROBE_LIBRARY, "no_such_entry", "x", Quick());
  ASSERT_FALSE(no_entry.ok());
  EXPECT_NE(no_entry.status().message().find("has no no_such_entry"), std::string::npos) << no_entry.status();
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, expected_);
}

TEST_F(InjectorTest, AProcessAlreadyTracedIsRefusedWithTheReason) {
  Child c = Spawn({ATTACH_TARGET, "sleep", "400"});
  if (::ptrace(PTRACE_SEIZE, c.pid, nullptr, nullptr) != 0) GTEST_SKIP() << "ptrace not permitted here";
  absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
  ASSERT_TRUE(facts.ok());
  const absl::Status refused = CheckAttachable(*facts, CurrentCaller(c.pid), /*require_cuda=*/false);
  EXPECT_NE(refused.message().find("being traced by process"), std::string::npos) << refused;
  // And the kernel's own refusal, when the policy is passed by: permission denied, nothing done.
  absl::StatusOr<InjectReport> report = InjectLibrary(*facts, ATTACH_PROBE_LIBRARY, "attach_probe_entry", "x", Quick());
  EXPECT_TRUE(absl::IsPermissionDenied(report.status())) << report.status();
  // Detaching needs the tracee stopped; left traced, its exit's leak check (which traces the
  // process itself) could not run under a sanitizer.
  ::ptrace(PTRACE_INTERRUPT, c.pid, nullptr, nullptr);
  int stopped = 0;
  ::waitpid(c.pid, &stopped, __WALL);
  ::ptrace(PTRACE_DETACH, c.pid, nullptr, nullptr);
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, expected_);
}

TEST_F(InjectorTest, AnotherUsersProcessIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  Child c = Spawn({ATTACH_TARGET, "sleep", "400"});  // root's
  const pid_t asker = ::fork();
  if (asker == 0) {
    // As nobody, without capabilities: the facts cannot even be read, or the policy refuses.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
    if (!facts.ok()) ::_exit(absl::IsPermissionDenied(facts.status()) ? 0 : 4);
    const absl::Status st = CheckAttachable(*facts, CurrentCaller(c.pid), /*require_cuda=*/false);
    ::_exit(!st.ok() && st.message().find("as that user") != std::string::npos ? 0 : 5);
  }
  int status = 0;
  ::waitpid(asker, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, expected_);
}

// The command: a plain process is refused with the reason, and the process runs on; detach from a
// process without cuscope says there is no session to end.
TEST_F(InjectorTest, TheCommandRefusesAProcessThatNeverUsedCuda) {
  Child c = Spawn({ATTACH_TARGET, "sleep", "400"});
  const std::string said = TempPath("cli.txt");
  // In a fresh control directory: attach makes it (no process has made one yet).
  const std::string runtime = TempPath("runtime");
  ::mkdir(runtime.c_str(), 0700);
  const std::string env = absl::StrCat("XDG_RUNTIME_DIR=", runtime, " ");
  const int attach =
      std::system(absl::StrCat(env, CUSCOPE_CLI, " attach --pid ", c.pid, " > ", said, " 2>&1").c_str());
  EXPECT_NE(attach, 0);
  EXPECT_NE(Read(said).find("never used CUDA"), std::string::npos) << Read(said);
  const int detach =
      std::system(absl::StrCat(env, CUSCOPE_CLI, " detach --pid ", c.pid, " > ", said, " 2>&1").c_str());
  EXPECT_NE(detach, 0);
  EXPECT_NE(Read(said).find("detach"), std::string::npos) << Read(said);
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, expected_);
  std::remove(said.c_str());
  std::system(absl::StrCat("rm -rf '", runtime, "'").c_str());
}

#ifdef CUSCOPE_LIBRARY_FILE
// libcuscope.so into a plain process: it loads, its session cannot start here (no GPU, or no CUDA
// in the process), it says why in the outcome file, and it stays loaded, dormant, with the process
// running on as before.
TEST_F(InjectorTest, CuscopeLoadsIntoAPlainProcessAndStaysDormant) {
  Child c = Spawn({ATTACH_TARGET, "sleep", "600"});
  absl::StatusOr<ProcessFacts> facts = ReadProcessFacts(c.pid);
  ASSERT_TRUE(facts.ok());
  const std::string settings = TempPath("settings");
  {
    std::ofstream out(settings);
    out << "CUSCOPE_MODE=monitor\nCUSCOPE_OUTPUT=" << TempPath("never.cuscope") << "\n";
  }
  absl::StatusOr<InjectReport> report = InjectLibrary(*facts, CUSCOPE_LIBRARY_FILE, "cuscope_attach", settings, Quick());
  if (absl::IsPermissionDenied(report.status())) GTEST_SKIP() << report.status();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->entry_result, 0);
  std::string outcome;
  for (int i = 0; i < 200 && outcome.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    outcome = Read(settings + ".result");
  }
  EXPECT_FALSE(outcome.empty());
  EXPECT_NE(outcome.rfind("ok ", 0), 0u) << outcome;  // no session on a machine without a GPU
  EXPECT_TRUE(Mapped(c.pid, "libcuscope.so"));
  const auto [out, code] = Finish(c);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, Undisturbed("600"));
  std::remove(settings.c_str());
  std::remove((settings + ".result").c_str());
}
#endif

}  // namespace
}  // namespace cuscope::attach
