// `cuscope ps`, `status` and `capture` as a user types them, against a running process with the
// collector inside and a fake record source (fake_workload.cc).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/core/trace.h"
#include "tests/cupti/collector_test_support.h"

namespace cuscope::cupti {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Output {
  int exit_code = -1;
  std::string text;  // stdout and stderr together
};

Output RunShell(const std::string& command) {
  Output out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), p)) > 0) out.text.append(buffer.data(), n);
  const int status = ::pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// fake_workload with CUSCOPE_* settings; stops (and is reaped) when the object goes.
class Workload {
 public:
  // With `stderr_path`, the process's stderr goes to that file.
  explicit Workload(const std::vector<std::string>& settings, const std::string& stderr_path = "") {
    int in[2], out[2];
    // Close-on-exec: a second workload must not inherit this one's input (it would never see EOF).
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      if (!stderr_path.empty()) {
        const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err >= 0) ::dup2(err, 2);
      }
      ::close(in[1]);
      ::close(out[0]);
      for (const std::string& s : settings) ::putenv(const_cast<char*>(s.c_str()));
      ::execl(CUSCOPE_FAKE_WORKLOAD, CUSCOPE_FAKE_WORKLOAD, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    char line[16] = {};
    ready_ = ::read(out[0], line, 6) == 6 && std::string(line, 5) == "ready";
    ::close(out[0]);
  }
  ~Workload() { Stop(); }
  // Closes its input: the collector stops and the process exits. Its exit code.
  int Stop() {
    if (pid_ <= 0) return exit_code_;
    ::close(stdin_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  bool ready_ = false;
  int exit_code_ = -1;
};

class ControlCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    dir_ = scratch_.path();
  }

  Output Cuscope(const std::string& args) { return RunShell(absl::StrCat("cd '", dir_, "' && ", CUSCOPE_CLI, " ", args)); }

  testing::ScratchDir scratch_{"cuscope_control_cli"};
  std::string dir_;
};

TEST_F(ControlCliTest, PsStatusAndACaptureWindowFromAMonitoredProcess) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_MONITOR_INTERVAL=0.1", "CUSCOPE_FLUSH_PERIOD_MS=100",
              "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(w.ready());
  Output ps = Cuscope("ps");
  EXPECT_EQ(ps.exit_code, 0) << ps.text;
  EXPECT_THAT(ps.text, HasSubstr(absl::StrCat(w.pid(), "  monitor  injection")));
  EXPECT_THAT(ps.text, HasSubstr("fake_workload"));

  ::usleep(700'000);  // a few intervals close
  Output status = Cuscope(absl::StrCat("status --pid ", w.pid()));
  EXPECT_EQ(status.exit_code, 0) << status.text;
  EXPECT_THAT(status.text, HasSubstr("monitor mode (injection)"));
  EXPECT_THAT(status.text, HasSubstr("GPU 0: busy"));
  EXPECT_THAT(status.text, HasSubstr("kernels with the most GPU time"));
  Output json = Cuscope(absl::StrCat("status --pid ", w.pid(), " --format json"));
  EXPECT_THAT(json.text, HasSubstr("\"mode\": \"monitor\""));

  Output capture = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.5 -o window"));
  EXPECT_EQ(capture.exit_code, 0) << capture.text;
  EXPECT_THAT(capture.text, HasSubstr("window.cuscope: "));
  auto trace = core::LoadTrace(dir_ + "/window.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_FALSE(trace->truncated());
  // 4 kernels every 20 ms for 0.5 s: about 100, give or take the machine's pace.
  EXPECT_GE(trace->kernels.size(), 20u);
  EXPECT_LE(trace->kernels.size(), 200u);
  // The same name again is refused at once, like any output; -f replaces it.
  Output again = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.2 -o window"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.text, HasSubstr("exists"));
  EXPECT_EQ(Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.2 -o window -f")).exit_code, 0);
  // Default names count up.
  Output numbered = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.2"));
  EXPECT_EQ(numbered.exit_code, 0) << numbered.text;
  EXPECT_THAT(numbered.text, HasSubstr(absl::StrCat("capture_", w.pid(), "_1.cuscope")));
  const pid_t pid = w.pid();
  EXPECT_EQ(w.Stop(), 0);

  // Gone: no socket left behind, and each command says so. (Other tests' workloads may be listed:
  // ctest runs them side by side.)
  const std::string listed = Cuscope("ps").text;
  for (absl::string_view line : absl::StrSplit(listed, '\n')) {
    EXPECT_FALSE(absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), absl::StrCat(pid, " "))) << listed;
  }
  Output gone = Cuscope(absl::StrCat("status --pid ", pid));
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_THAT(gone.text, HasSubstr("no process"));
}

// Under a duty cycle `status` says how much is recorded and that the figures are estimates.
TEST_F(ControlCliTest, StatusSaysWhatTheDutyCycleRecords) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_MONITOR_INTERVAL=0.1", "CUSCOPE_FLUSH_PERIOD_MS=100",
              "CUSCOPE_DUTY_CYCLE=20", "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(w.ready());
  ::usleep(800'000);  // a few intervals close
  Output status = Cuscope(absl::StrCat("status --pid ", w.pid()));
  EXPECT_EQ(status.exit_code, 0) << status.text;
  EXPECT_THAT(status.text, HasSubstr("recording 20.0% of the time (a fixed duty cycle)"));
  EXPECT_THAT(status.text, HasSubstr("the latest interval's figures are estimates from"));
  Output json = Cuscope(absl::StrCat("status --pid ", w.pid(), " --format json"));
  EXPECT_THAT(json.text, HasSubstr("\"duty_cycle\": 0.2"));
  EXPECT_EQ(w.Stop(), 0);
}

// CUSCOPE_DUTY_DETACH: `status` says how often CUPTI was detached and attached again, and where
// it stands now.
TEST_F(ControlCliTest, StatusSaysHowOftenCuptiWasDetachedBetweenWindows) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_MONITOR_INTERVAL=0.1", "CUSCOPE_FLUSH_PERIOD_MS=100",
              "CUSCOPE_DUTY_CYCLE=20", "CUSCOPE_DUTY_WINDOWS=1", "CUSCOPE_DUTY_DETACH=1", "CUSCOPE_QUIET=1",
              "FAKE_WORKLOAD_CALLS=1"});
  ASSERT_TRUE(w.ready());
  ::usleep(800'000);  // several windows, each followed by a detach
  Output status = Cuscope(absl::StrCat("status --pid ", w.pid()));
  EXPECT_EQ(status.exit_code, 0) << status.text;
  const std::string said = "CUPTI detached between the windows ";
  const size_t at = status.text.find(said);
  ASSERT_NE(at, std::string::npos) << status.text;
  int detaches = 0;
  ASSERT_TRUE(absl::SimpleAtoi(status.text.substr(at + said.size(), status.text.find(' ', at + said.size()) - at - said.size()),
                               &detaches))
      << status.text;
  EXPECT_GE(detaches, 2) << status.text;
  Output json = Cuscope(absl::StrCat("status --pid ", w.pid(), " --format json"));
  EXPECT_THAT(json.text, HasSubstr("\"cupti_attachment\""));
  EXPECT_EQ(w.Stop(), 0);
}

// Recording all the time (the default), `status` says nothing of a duty cycle.
TEST_F(ControlCliTest, StatusWithoutADutyCycleSaysNothingOfIt) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_MONITOR_INTERVAL=0.1", "CUSCOPE_FLUSH_PERIOD_MS=100",
              "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(w.ready());
  ::usleep(500'000);
  Output status = Cuscope(absl::StrCat("status --pid ", w.pid()));
  EXPECT_EQ(status.exit_code, 0) << status.text;
  EXPECT_THAT(status.text, Not(HasSubstr("of the time")));
  EXPECT_THAT(status.text, Not(HasSubstr("estimates")));
  EXPECT_EQ(w.Stop(), 0);
}

TEST_F(ControlCliTest, ATopDownCaptureFromAMonitoredProcess) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_FLUSH_PERIOD_MS=100", "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(w.ready());
  Output capture =
      Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.3 --top-down=2 --top-down-wait 0.2 -o td"));
  EXPECT_EQ(capture.exit_code, 0) << capture.text;
  EXPECT_THAT(capture.text, HasSubstr("then kernel metrics for at most 0.2 s"));
  EXPECT_THAT(capture.text, HasSubstr("launches profiled"));
  auto trace = core::LoadTrace(dir_ + "/td.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->top_down.size(), 1u);
  EXPECT_GE(trace->top_down[0].kernels_size(), 1);
  EXPECT_LE(trace->top_down[0].kernels_size(), 2);
  // Mistakes are named before anything is asked.
  Output snapshot = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --snapshot --top-down"));
  EXPECT_EQ(snapshot.exit_code, 2);
  EXPECT_THAT(snapshot.text, HasSubstr("--top-down needs a window"));
  Output launches = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --top-down-launches 2"));
  EXPECT_EQ(launches.exit_code, 2);
  EXPECT_THAT(launches.text, HasSubstr("need --top-down"));
  Output zero = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --top-down=0"));
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.text, HasSubstr("from 1 to 100"));
  EXPECT_EQ(w.Stop(), 0);
}

TEST_F(ControlCliTest, ASnapshotFromAFlightRecorderAndRefusalsInTraceMode) {
  Workload flight({"CUSCOPE_MODE=flight", "CUSCOPE_FLIGHT_SPAN=2", "CUSCOPE_FLUSH_PERIOD_MS=100", "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(flight.ready());
  ::usleep(500'000);
  Output snap = Cuscope(absl::StrCat("capture --pid ", flight.pid(), " --snapshot -o ring"));
  EXPECT_EQ(snap.exit_code, 0) << snap.text;
  auto trace = core::LoadTrace(dir_ + "/ring.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_GE(trace->kernels.size(), 8u);
  Output status = Cuscope(absl::StrCat("status --pid ", flight.pid()));
  EXPECT_THAT(status.text, HasSubstr("flight recorder: "));
  Output too_long = Cuscope(absl::StrCat("capture --pid ", flight.pid(), " --duration 5"));
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_THAT(too_long.text, HasSubstr("refused: a capture of 5 s would lose its start"));

  Workload trace_mode({absl::StrCat("CUSCOPE_OUTPUT=", dir_, "/full"), "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(trace_mode.ready());
  Output refused = Cuscope(absl::StrCat("capture --pid ", trace_mode.pid(), " --duration 1"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.text, HasSubstr("already (trace mode)"));
  Output no_pid = Cuscope("capture --duration 1");
  EXPECT_EQ(no_pid.exit_code, 2);
  EXPECT_THAT(no_pid.text, HasSubstr("--pid names the process"));
  Output not_ours = Cuscope("status --pid 1");
  EXPECT_EQ(not_ours.exit_code, 2);
  EXPECT_THAT(not_ours.text, HasSubstr("has no control socket"));
}

// A capture name with a newline and an escape sequence: the program's own line about the capture
// (on its stderr) shows them escaped, as the command's does, in one line.
TEST_F(ControlCliTest, ACapturePathIsEscapedInTheProgramsLine) {
  const std::string err_path = dir_ + "/program.err";
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_FLUSH_PERIOD_MS=100"}, err_path);
  ASSERT_TRUE(w.ready());
  Output capture = Cuscope(absl::StrCat("capture --pid ", w.pid(), " --duration 0.2 -o \"$(printf 'evil\\nline\\033[2J')\""));
  EXPECT_EQ(capture.exit_code, 0) << capture.text;
  EXPECT_EQ(w.Stop(), 0);
  std::string err;
  {
    std::FILE* f = std::fopen(err_path.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), f)) > 0;) err.append(buffer, n);
    std::fclose(f);
  }
  EXPECT_THAT(err, HasSubstr("evil\\x0aline\\x1b[2J.cuscope")) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "no raw escape reaches the terminal";
  for (absl::string_view line : absl::StrSplit(err, '\n')) {
    if (absl::StrContains(line, "capture")) {
      EXPECT_TRUE(absl::StartsWith(line, "cuscope: ")) << line;
    }
  }
}

// Under a launcher ps and status show where the process stands in its job.
TEST_F(ControlCliTest, PsAndStatusShowTheRank) {
  Workload w({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_QUIET=1", "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8",
              "TORCHELASTIC_RUN_ID=job-7"});
  ASSERT_TRUE(w.ready());
  Output ps = Cuscope("ps");
  EXPECT_THAT(ps.text, HasSubstr("RANK"));
  EXPECT_THAT(ps.text, HasSubstr(absl::StrCat(w.pid(), "  monitor  injection  3/8")));
  Output status = Cuscope(absl::StrCat("status --pid ", w.pid()));
  EXPECT_THAT(status.text, HasSubstr("rank 3/8 (local 1), job job-7"));
  EXPECT_EQ(w.Stop(), 0);
}

// A stopped process (SIGSTOP) answers nothing: `ps` lists it as not answering within its own
// deadline and lists the others; `status` on it is a deadline, not a hang.
TEST_F(ControlCliTest, AStoppedProcessIsListedAsNotAnswering) {
  Workload stopped({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_QUIET=1"});
  Workload running({"CUSCOPE_MODE=monitor", "CUSCOPE_OUTPUT=", "CUSCOPE_QUIET=1"});
  ASSERT_TRUE(stopped.ready());
  ASSERT_TRUE(running.ready());
  ASSERT_EQ(::kill(stopped.pid(), SIGSTOP), 0);
  const auto start = std::chrono::steady_clock::now();
  Output ps = Cuscope("ps");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(ps.exit_code, 0) << ps.text;
  EXPECT_THAT(ps.text, HasSubstr(absl::StrCat(running.pid(), "  monitor  injection")));
  EXPECT_THAT(ps.text, HasSubstr(absl::StrCat(stopped.pid(), "  ?")));
  EXPECT_THAT(ps.text, HasSubstr("not answering"));
  EXPECT_LT(took, std::chrono::seconds(6)) << "one deadline for all, not one each";
  Output status = Cuscope(absl::StrCat("status --pid ", stopped.pid()));
  EXPECT_EQ(status.exit_code, 2);
  EXPECT_THAT(status.text, HasSubstr("did not answer within"));
  ASSERT_EQ(::kill(stopped.pid(), SIGCONT), 0);
  EXPECT_EQ(stopped.Stop(), 0);
  EXPECT_EQ(running.Stop(), 0);
}

}  // namespace
}  // namespace cuscope::cupti
