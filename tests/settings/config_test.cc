#include "lib/settings/config.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace cuscope::settings {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

TEST(ConfigTest, DefaultsWithoutVariables) {
  auto c = ParseConfigFromEnvironment({{"PATH", "/usr/bin"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->buffer_bytes, 4u << 20);
  EXPECT_EQ(c->buffer_pool_cap_bytes, 128u << 20);
  EXPECT_EQ(c->flush_period_ms, 500u);
  EXPECT_TRUE(c->kind_enabled("kernel"));
  EXPECT_TRUE(c->kind_enabled("nvtx"));
  // Lean by default: the calls the analyzer reads, not every runtime and driver call.
  EXPECT_TRUE(c->kind_enabled("api"));
  EXPECT_FALSE(c->kind_enabled("runtime"));
  EXPECT_FALSE(c->kind_enabled("driver"));
  EXPECT_EQ(c->mode, CollectionMode::kTrace);
  EXPECT_TRUE(c->settings.empty());
}

TEST(ConfigTest, MonitorModeSettings) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"},
                                       {"CUSCOPE_MONITOR_INTERVAL", "0.25"},
                                       {"CUSCOPE_MONITOR_TOP_KERNELS", "5"},
                                       {"CUSCOPE_PROMETHEUS", "9400"},
                                       {"CUSCOPE_OUTPUT", ""}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, CollectionMode::kMonitor);
  EXPECT_EQ(c->monitor_interval_ms, 250u);
  EXPECT_EQ(c->monitor_top_kernels, 5u);
  EXPECT_EQ(c->prometheus, "9400");
  EXPECT_EQ(c->output, "");  // monitor mode may run without a file
  auto d = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->monitor_interval_ms, 1000u);
  EXPECT_EQ(d->output, "cuscope_%p");
}

TEST(ConfigTest, MonitorModeRefusesWhatNeedsATraceWindowOrReplay) {
  for (const char* name : {"CUSCOPE_METRICS", "CUSCOPE_TOP_DOWN", "CUSCOPE_DURATION", "CUSCOPE_DELAY",
                           "CUSCOPE_CAPTURE_RANGE"}) {
    const std::string value = std::string(name) == "CUSCOPE_METRICS"         ? "sol"
                              : std::string(name) == "CUSCOPE_CAPTURE_RANGE" ? "cudaProfilerApi"
                                                                             : "2";
    auto c = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {name, value}});
    ASSERT_FALSE(c.ok()) << name;
    EXPECT_NE(std::string(c.status().message()).find(name), std::string::npos) << c.status();
  }
}

TEST(ConfigTest, LaunchStacksAreOffByDefaultAndTakeASampling) {
  EXPECT_FALSE(ParseConfigFromEnvironment({})->stacks.on());
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_STACKS", "every:10"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->stacks.mode, StackSampling::Mode::kEvery);
  EXPECT_EQ(c->stacks.n, 10u);
  auto bad = ParseConfigFromEnvironment({{"CUSCOPE_STACKS", "often"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CUSCOPE_STACKS=often: not a stack sampling"), std::string::npos)
      << bad.status();
  // Trace mode only: monitor and flight modes keep no per-launch record to attach a stack to.
  for (const char* mode : {"monitor", "flight"}) {
    auto refused = ParseConfigFromEnvironment({{"CUSCOPE_MODE", mode}, {"CUSCOPE_STACKS", "all"}});
    ASSERT_FALSE(refused.ok()) << mode;
    EXPECT_NE(refused.status().message().find("CUSCOPE_STACKS does not apply"), std::string::npos) << refused.status();
  }
}

TEST(ConfigTest, StacksUseLibunwindUnlessLibgccIsAskedFor) {
  EXPECT_EQ(ParseConfigFromEnvironment({})->unwinder, process::Unwinder::kLibunwind);
  auto gcc = ParseConfigFromEnvironment({{"CUSCOPE_STACKS", "all"}, {"CUSCOPE_UNWINDER", "libgcc"}});
  ASSERT_TRUE(gcc.ok()) << gcc.status();
  EXPECT_EQ(gcc->unwinder, process::Unwinder::kLibgcc);
  EXPECT_EQ(ParseConfigFromEnvironment({{"CUSCOPE_UNWINDER", "libunwind"}})->unwinder, process::Unwinder::kLibunwind);
  auto bad = ParseConfigFromEnvironment({{"CUSCOPE_UNWINDER", "fp"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CUSCOPE_UNWINDER"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("expected libunwind or libgcc"), std::string::npos) << bad.status();
  auto refused = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {"CUSCOPE_UNWINDER", "libgcc"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("CUSCOPE_UNWINDER does not apply"), std::string::npos) << refused.status();
}

TEST(ConfigTest, QueueTimesAreOffUnlessAskedFor) {
  EXPECT_FALSE(ParseConfigFromEnvironment({})->queue_times);
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_QUEUE_TIMES", "1"}})->queue_times);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_QUEUE_TIMES", "false"}})->queue_times);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_QUEUE_TIMES", "0"}})->queue_times);
  auto bad = ParseConfigFromEnvironment({{"CUSCOPE_QUEUE_TIMES", "sometimes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CUSCOPE_QUEUE_TIMES=sometimes"), std::string::npos) << bad.status();
}

TEST(ConfigTest, LeanCallsAreTimedByCallbacksUnlessRecordsAreAskedFor) {
  const Config defaults = *ParseConfigFromEnvironment({});
  EXPECT_FALSE(defaults.lean_calls_by_records);
  // The default kinds leave CUPTI's synchronization kind off: the callbacks write those records.
  EXPECT_TRUE(defaults.kind_enabled("api"));
  EXPECT_FALSE(defaults.kind_enabled("sync"));
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_LEAN_CALLS", "records"}})->lean_calls_by_records);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_LEAN_CALLS", "callbacks"}})->lean_calls_by_records);
  for (const char* value : {"", "Records", "records,callbacks", "1"}) {
    auto bad = ParseConfigFromEnvironment({{"CUSCOPE_LEAN_CALLS", value}});
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_NE(bad.status().message().find("CUSCOPE_LEAN_CALLS="), std::string::npos) << bad.status();
    EXPECT_NE(bad.status().message().find("callbacks or records"), std::string::npos) << bad.status();
  }
}

TEST(ConfigTest, AnNvtxCaptureRangeNeedsItsRangeName) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_CAPTURE_RANGE", "nvtx"}, {"CUSCOPE_NVTX_CAPTURE", "train step"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->capture_range, "nvtx");
  EXPECT_EQ(c->nvtx_capture, "train step");
  auto no_name = ParseConfigFromEnvironment({{"CUSCOPE_CAPTURE_RANGE", "nvtx"}});
  ASSERT_FALSE(no_name.ok());
  EXPECT_NE(std::string(no_name.status().message()).find("needs CUSCOPE_NVTX_CAPTURE"), std::string::npos);
  auto no_range = ParseConfigFromEnvironment({{"CUSCOPE_NVTX_CAPTURE", "step"}});
  ASSERT_FALSE(no_range.ok());
  EXPECT_NE(std::string(no_range.status().message()).find("needs CUSCOPE_CAPTURE_RANGE=nvtx"), std::string::npos);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_CAPTURE_RANGE", "nvtx"}, {"CUSCOPE_NVTX_CAPTURE", ""}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_CAPTURE_RANGE", "NVTX"}, {"CUSCOPE_NVTX_CAPTURE", "s"}}).ok());
  // The range's end is the top-down's window end.
  auto top_down = ParseConfigFromEnvironment(
      {{"CUSCOPE_CAPTURE_RANGE", "nvtx"}, {"CUSCOPE_NVTX_CAPTURE", "step"}, {"CUSCOPE_TOP_DOWN", "2"}});
  ASSERT_TRUE(top_down.ok()) << top_down.status();
  EXPECT_EQ(top_down->top_down_kernels, 2u);
}

TEST(ConfigTest, MonitorSettingsNeedMonitorMode) {
  for (const char* name : {"CUSCOPE_MONITOR_INTERVAL", "CUSCOPE_PROMETHEUS"}) {
    auto c = ParseConfigFromEnvironment({{name, "1"}});
    ASSERT_FALSE(c.ok()) << name;
    EXPECT_NE(std::string(c.status().message()).find("CUSCOPE_MODE=monitor"), std::string::npos) << c.status();
  }
}

TEST(ConfigTest, FlightModeSettingsAndTheirEdges) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_SPAN", "12.5"},
                                       {"CUSCOPE_FLIGHT_SIZE", "64"}, {"CUSCOPE_OUTPUT", ""}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, CollectionMode::kFlight);
  EXPECT_EQ(c->flight_span_ms, 12'500u);
  EXPECT_EQ(c->flight_size_bytes, 64ull << 20);
  auto d = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->flight_span_ms, 30'000u);
  EXPECT_EQ(d->flight_size_bytes, 256ull << 20);
  for (const auto& [name, value, ok] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"CUSCOPE_FLIGHT_SPAN", "1", true},      {"CUSCOPE_FLIGHT_SPAN", "3600", true},
           {"CUSCOPE_FLIGHT_SPAN", "0.99", false},  {"CUSCOPE_FLIGHT_SPAN", "3601", false},
           {"CUSCOPE_FLIGHT_SIZE", "1", true},      {"CUSCOPE_FLIGHT_SIZE", "65536", true},
           {"CUSCOPE_FLIGHT_SIZE", "0", false},     {"CUSCOPE_FLIGHT_SIZE", "65537", false},
           {"CUSCOPE_FLIGHT_SIZE", "1.5", false},
           {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "0.001", true}, {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "3600", true},
           {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "0", false},    {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "3601", false},
           {"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", "0.001", true}, {"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", "3600", true},
           {"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", "0", false},    {"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", "3601", false},
           {"CUSCOPE_FLIGHT_AFTER", "0", true},              {"CUSCOPE_FLIGHT_AFTER", "3600", true},
           {"CUSCOPE_FLIGHT_AFTER", "-1", false},            {"CUSCOPE_FLIGHT_AFTER", "soon", false}}) {
    EXPECT_EQ(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {name, value}}).ok(), ok) << name << "=" << value;
  }
  auto step = ParseConfigFromEnvironment(
      {{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "0.25"}, {"CUSCOPE_FLIGHT_AFTER", "2"}});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->flight_step_threshold_ms, 250u);
  EXPECT_EQ(step->flight_after_ms, 2000u);
  EXPECT_EQ(d->flight_step_threshold_ms, 0u);  // no step snapshots unless asked
  // Flight settings need flight mode; what replays launches or picks a window by time is refused in it.
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_FLIGHT_STEP_THRESHOLD", "1"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_FLIGHT_REQUEST_THRESHOLD", "1"}}).ok());  // needs flight mode
  auto outside = ParseConfigFromEnvironment({{"CUSCOPE_FLIGHT_SPAN", "10"}});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(std::string(outside.status().message()).find("CUSCOPE_MODE=flight"), std::string::npos);
  for (const char* name : {"CUSCOPE_TOP_DOWN", "CUSCOPE_DURATION", "CUSCOPE_DELAY"}) {
    auto r = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {name, "2"}});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(std::string(r.status().message()).find("flight mode"), std::string::npos) << r.status();
  }
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_PROMETHEUS", "9400"}}).ok());
}

TEST(ConfigTest, MonitorIntervalEdges) {
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {"CUSCOPE_MONITOR_INTERVAL", "0.1"}}).ok());
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {"CUSCOPE_MONITOR_INTERVAL", "3600"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {"CUSCOPE_MONITOR_INTERVAL", "0.09"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "monitor"}, {"CUSCOPE_MONITOR_INTERVAL", "3601"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "always"}}).ok());
}

// Monitor mode records all the time unless given a budget or a fixed duty cycle, never both;
// neither outside monitor mode.
TEST(ConfigTest, DutyCycleAndOverheadBudget) {
  const auto monitor = [](std::vector<std::pair<std::string, std::string>> more) {
    more.insert(more.begin(), {"CUSCOPE_MODE", "monitor"});
    return ParseConfigFromEnvironment(more);
  };
  auto plain = monitor({});
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->overhead_budget, 0);
  EXPECT_FALSE(plain->samples_by_duty_cycle());
  auto two = monitor({{"CUSCOPE_OVERHEAD_BUDGET", "2"}});
  ASSERT_TRUE(two.ok());
  EXPECT_DOUBLE_EQ(two->overhead_budget, 0.02);
  EXPECT_TRUE(two->samples_by_duty_cycle());
  auto off = monitor({{"CUSCOPE_OVERHEAD_BUDGET", "off"}});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->samples_by_duty_cycle());
  auto budget = monitor({{"CUSCOPE_OVERHEAD_BUDGET", "0.5"}});
  ASSERT_TRUE(budget.ok());
  EXPECT_DOUBLE_EQ(budget->overhead_budget, 0.005);
  EXPECT_TRUE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "0.1"}}).ok());
  EXPECT_TRUE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "50"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "0.09"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "51"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "2%"}}).ok());
  auto duty = monitor({{"CUSCOPE_DUTY_CYCLE", "10"}});
  ASSERT_TRUE(duty.ok());
  EXPECT_DOUBLE_EQ(duty->duty_cycle, 0.1);
  EXPECT_TRUE(duty->samples_by_duty_cycle());
  auto whole = monitor({{"CUSCOPE_DUTY_CYCLE", "100"}});
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(whole->samples_by_duty_cycle());  // 100%: recorded all the time, exact figures
  EXPECT_TRUE(monitor({{"CUSCOPE_DUTY_CYCLE", "1"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_CYCLE", "0.9"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_CYCLE", "101"}}).ok());
  EXPECT_EQ(duty->duty_windows, 8u);  // by default eight windows an interval
  auto spread = monitor({{"CUSCOPE_DUTY_CYCLE", "10"}, {"CUSCOPE_DUTY_WINDOWS", "1"}});
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ(spread->duty_windows, 1u);
  EXPECT_TRUE(monitor({{"CUSCOPE_DUTY_WINDOWS", "64"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_WINDOWS", "0"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_WINDOWS", "65"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_WINDOWS", "two"}}).ok());
  auto both = monitor({{"CUSCOPE_DUTY_CYCLE", "10"}, {"CUSCOPE_OVERHEAD_BUDGET", "2"}});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(std::string(both.status().message()).find("give one"), std::string::npos);
  for (const char* name : {"CUSCOPE_DUTY_CYCLE", "CUSCOPE_OVERHEAD_BUDGET", "CUSCOPE_DUTY_WINDOWS"}) {
    auto trace = ParseConfigFromEnvironment({{name, "5"}});
    ASSERT_FALSE(trace.ok()) << name;
    EXPECT_NE(std::string(trace.status().message()).find("needs CUSCOPE_MODE=monitor"), std::string::npos);
  }
  // Detaching CUPTI between windows: off by default, and only with windows to detach between.
  EXPECT_FALSE(duty->duty_detach);
  auto detach = monitor({{"CUSCOPE_DUTY_CYCLE", "10"}, {"CUSCOPE_DUTY_DETACH", "1"}});
  ASSERT_TRUE(detach.ok());
  EXPECT_TRUE(detach->duty_detach);
  EXPECT_TRUE(monitor({{"CUSCOPE_OVERHEAD_BUDGET", "2"}, {"CUSCOPE_DUTY_DETACH", "on"}}).ok());
  EXPECT_TRUE(monitor({{"CUSCOPE_DUTY_DETACH", "off"}}).ok());
  EXPECT_FALSE(monitor({{"CUSCOPE_DUTY_CYCLE", "10"}, {"CUSCOPE_DUTY_DETACH", "sometimes"}}).ok());
  for (const auto& recorded_throughout : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"CUSCOPE_DUTY_DETACH", "1"}},
           {{"CUSCOPE_DUTY_CYCLE", "100"}, {"CUSCOPE_DUTY_DETACH", "1"}},
           {{"CUSCOPE_OVERHEAD_BUDGET", "off"}, {"CUSCOPE_DUTY_DETACH", "1"}}}) {
    auto refused = monitor(recorded_throughout);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(std::string(refused.status().message()).find("CUSCOPE_DUTY_DETACH detaches CUPTI between a duty cycle's"),
              std::string::npos)
        << refused.status();
  }
  auto detach_in_trace_mode = ParseConfigFromEnvironment({{"CUSCOPE_DUTY_DETACH", "1"}});
  ASSERT_FALSE(detach_in_trace_mode.ok());
  EXPECT_NE(std::string(detach_in_trace_mode.status().message()).find("needs CUSCOPE_MODE=monitor"), std::string::npos);
  // Flight mode keeps every record: no duty cycle.
  auto flight = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}});
  ASSERT_TRUE(flight.ok());
  EXPECT_FALSE(flight->samples_by_duty_cycle());
}

TEST(ConfigTest, ReadsEverySetting) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_OUTPUT", "run_%p"},
                                       {"CUSCOPE_FORCE_OVERWRITE", "yes"},
                                       {"CUSCOPE_KINDS", "kernel,memcpy"},
                                       {"CUSCOPE_BUFFER_SIZE", "1M"},
                                       {"CUSCOPE_BUFFER_POOL_CAP", "16M"},
                                       {"CUSCOPE_FLUSH_PERIOD_MS", "250"},
                                       {"CUSCOPE_DELAY", "1.5"},
                                       {"CUSCOPE_DURATION", "3"},
                                       {"CUSCOPE_CAPTURE_RANGE", "cudaProfilerApi"},
                                       {"CUSCOPE_QUIET", "1"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->output, "run_%p");
  EXPECT_TRUE(c->force_overwrite);
  EXPECT_EQ(c->activity_kinds, (std::vector<std::string>{"kernel", "memcpy"}));
  EXPECT_FALSE(c->kind_enabled("runtime"));
  EXPECT_EQ(c->buffer_bytes, 1u << 20);
  EXPECT_EQ(c->buffer_pool_cap_bytes, 16u << 20);
  EXPECT_EQ(c->flush_period_ms, 250u);
  EXPECT_DOUBLE_EQ(c->delay_seconds, 1.5);
  EXPECT_DOUBLE_EQ(c->duration_seconds, 3);
  EXPECT_EQ(c->capture_range, "cudaProfilerApi");
  EXPECT_TRUE(c->quiet);
  EXPECT_EQ(c->settings.size(), 10u);
}

TEST(ConfigTest, TheControlSocketIsOnUnlessTurnedOff) {
  EXPECT_TRUE(ParseConfigFromEnvironment({})->control);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_CONTROL", "0"}})->control);
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_CONTROL", "1"}})->control);
  auto bad = ParseConfigFromEnvironment({{"CUSCOPE_CONTROL", "off-ish"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("CUSCOPE_CONTROL"), std::string::npos);
}

TEST(ConfigTest, AStepRangeNeedsFlightModeAThresholdAndNvtx) {
  auto ok = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"},
                                        {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "0.25"},
                                        {"CUSCOPE_FLIGHT_STEP_RANGE", "train_step"}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->flight_step_range, "train_step");
  const auto refused = [](const Env& env) {
    auto c = ParseConfigFromEnvironment(env);
    return c.ok() ? std::string() : std::string(c.status().message());
  };
  EXPECT_NE(refused({{"CUSCOPE_FLIGHT_STEP_RANGE", "s"}}).find("needs CUSCOPE_MODE=flight"), std::string::npos);
  EXPECT_NE(refused({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_STEP_RANGE", "s"}}).find("STEP_THRESHOLD"),
            std::string::npos);
  EXPECT_NE(refused({{"CUSCOPE_MODE", "flight"},
                     {"CUSCOPE_FLIGHT_STEP_THRESHOLD", "1"},
                     {"CUSCOPE_KINDS", "kernel"},
                     {"CUSCOPE_FLIGHT_STEP_RANGE", "s"}})
                .find("nvtx kind"),
            std::string::npos);
  EXPECT_NE(refused({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_STEP_RANGE", ""}}).find("CUSCOPE_FLIGHT_STEP_RANGE"),
            std::string::npos);
}

TEST(ConfigTest, TheIdleTriggerTakesAPercentageAndAWindowInFlightMode) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"},
                                       {"CUSCOPE_FLIGHT_IDLE_SHARE", "80"},
                                       {"CUSCOPE_FLIGHT_IDLE_SECONDS", "5"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->flight_idle_share, 0.8);
  EXPECT_EQ(c->flight_idle_window_ms, 5000u);
  EXPECT_EQ(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_IDLE_SHARE", "1"}})
                ->flight_idle_window_ms,
            10'000u);
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_IDLE_SHARE", "100"}}).ok());
  for (const char* bad : {"0.5", "101", "most"}) {
    EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_IDLE_SHARE", bad}}).ok())
        << bad;
  }
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_FLIGHT_IDLE_SHARE", "50"}}).ok());  // not flight mode
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"}, {"CUSCOPE_FLIGHT_IDLE_SECONDS", "5"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_MODE", "flight"},
                                           {"CUSCOPE_FLIGHT_IDLE_SHARE", "50"},
                                           {"CUSCOPE_FLIGHT_IDLE_SECONDS", "0.5"}})
                   .ok());
}

TEST(ConfigTest, UnknownVariableIsNamed) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_OUTPTU", "x"}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("CUSCOPE_OUTPTU"), std::string::npos);
}

// The review's ~100 KB error lines: every refusal quotes at most the first 100 characters of what
// it refuses, the setting's name included.
TEST(ConfigTest, ErrorLinesQuoteAHugeValueOrNameCut) {
  const std::string huge(100'000, 'x');
  for (const Env& env : std::vector<Env>{{{"CUSCOPE_STACKS", huge}},
                                         {{"CUSCOPE_STACKS", "every:" + huge}},
                                         {{"CUSCOPE_" + huge, "1"}},
                                         {{"CUSCOPE_UNWINDER", huge}},
                                         {{"CUSCOPE_MODE", huge}}}) {
    auto c = ParseConfigFromEnvironment(env);
    ASSERT_FALSE(c.ok());
    EXPECT_LT(c.status().message().size(), 2000u) << c.status().message().substr(0, 300);
    EXPECT_NE(std::string(c.status().message()).find(" characters)"), std::string::npos)
        << c.status().message().substr(0, 300);
  }
}

TEST(ConfigTest, TheCommandsLibraryVariableIsAccepted) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_LIBRARY", "/opt/cuscope/lib/libcuscope.so"}});
  EXPECT_TRUE(c.ok()) << c.status();
}

TEST(ConfigTest, BadValuesAreNamed) {
  const Env bad[] = {{{"CUSCOPE_BUFFER_SIZE", "lots"}},     {{"CUSCOPE_BUFFER_SIZE", "1K"}},
                     {{"CUSCOPE_KINDS", "kernel,gpu"}},     {{"CUSCOPE_DELAY", "-1"}},
                     {{"CUSCOPE_FLUSH_PERIOD_MS", "0"}},    {{"CUSCOPE_CAPTURE_RANGE", "nvtx"}},
                     {{"CUSCOPE_FORCE_OVERWRITE", "maybe"}}, {{"CUSCOPE_OUTPUT", ""}},
                     {{"CUSCOPE_MODE", "monitoring"}}};
  for (const auto& env : bad) {
    auto c = ParseConfigFromEnvironment(env);
    ASSERT_FALSE(c.ok()) << env[0].first << "=" << env[0].second;
    EXPECT_NE(std::string(c.status().message()).find(env[0].first), std::string::npos) << c.status();
  }
}

TEST(ConfigTest, CapSmallerThanOneBufferIsRefused) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_BUFFER_SIZE", "8M"}, {"CUSCOPE_BUFFER_POOL_CAP", "4M"}});
  EXPECT_FALSE(c.ok());
}

TEST(ConfigTest, AllExpandsToEveryKind) {
  auto k = ParseActivityKinds("all");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->size(), std::size(kActivityKindNames));
}

TEST(ConfigTest, TopDownNeedsAWindowThatEndsAndDefaultsToTheWholeMethod) {
  auto none = ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN", "3"}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("CUSCOPE_DURATION"), std::string::npos) << none.status();

  auto c = ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN", "2"}, {"CUSCOPE_DURATION", "5"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->top_down_kernels, 2u);
  EXPECT_EQ(c->top_down_launches, 3u);
  EXPECT_EQ(c->metrics_request, "sol,occupancy,stalls");
  EXPECT_FALSE(c->metrics.empty());
  // Counters over time during the window, on every device.
  EXPECT_TRUE(c->gpu_metrics);
  EXPECT_TRUE(c->gpu_metrics_devices.empty());

  auto gated = ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN", "1"},
                                           {"CUSCOPE_CAPTURE_RANGE", "cudaProfilerApi"},
                                           {"CUSCOPE_METRICS", "occupancy"},
                                           {"CUSCOPE_GPU_METRICS_DEVICES", "none"},
                                           {"CUSCOPE_TOP_DOWN_LAUNCHES", "1"}});
  ASSERT_TRUE(gated.ok()) << gated.status();
  EXPECT_EQ(gated->metrics_request, "occupancy");
  EXPECT_FALSE(gated->gpu_metrics);
  EXPECT_EQ(gated->top_down_launches, 1u);
}

TEST(ConfigTest, TopDownChoosesItsOwnKernels) {
  auto c = ParseConfigFromEnvironment(
      {{"CUSCOPE_TOP_DOWN", "3"}, {"CUSCOPE_DURATION", "5"}, {"CUSCOPE_KERNEL_NAME", "gemm"}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("chooses the kernels itself"), std::string::npos) << c.status();
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN_LAUNCHES", "2"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN", "101"}, {"CUSCOPE_DURATION", "5"}}).ok());
  EXPECT_FALSE(ParseConfigFromEnvironment(
                   {{"CUSCOPE_TOP_DOWN", "1"}, {"CUSCOPE_DURATION", "5"}, {"CUSCOPE_TOP_DOWN_LAUNCHES", "0"}})
                   .ok());
  // 0 is "off", and then nothing else is needed.
  auto off = ParseConfigFromEnvironment({{"CUSCOPE_TOP_DOWN", "0"}});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->top_down_kernels, 0u);
}

TEST(ConfigTest, GpuCounterSamplingDevicesAndRate) {
  auto none = ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "none"}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->gpu_metrics);
  auto all = ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "all"}});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(all->gpu_metrics);
  EXPECT_TRUE(all->gpu_metrics_devices.empty());
  EXPECT_EQ(all->gpu_metrics_frequency_hz, 1000u);
  auto some = ParseConfigFromEnvironment(
      {{"CUSCOPE_GPU_METRICS_DEVICES", "1,0,1"}, {"CUSCOPE_GPU_METRICS_FREQUENCY", "10000"}});
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->gpu_metrics_devices, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(some->gpu_metrics_frequency_hz, 10000u);
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "gpu0"}}).ok());
  // The rate's edges.
  EXPECT_TRUE(ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "0"}, {"CUSCOPE_GPU_METRICS_FREQUENCY", "10"}})
                  .ok());
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "0"}, {"CUSCOPE_GPU_METRICS_FREQUENCY", "9"}})
                   .ok());
  EXPECT_TRUE(
      ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "0"}, {"CUSCOPE_GPU_METRICS_FREQUENCY", "200000"}})
          .ok());
  EXPECT_FALSE(
      ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "0"}, {"CUSCOPE_GPU_METRICS_FREQUENCY", "200001"}})
          .ok());
  // A rate without sampling is a mistake, not a silent no-op.
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_FREQUENCY", "1000"}}).ok());
  // Sampling and kernel metrics share the counters: together only in the top-down, one after the other.
  auto both = ParseConfigFromEnvironment({{"CUSCOPE_GPU_METRICS_DEVICES", "all"}, {"CUSCOPE_METRICS", "sol"}});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("CUSCOPE_TOP_DOWN runs both"), std::string::npos) << both.status();
}

TEST(ConfigTest, ReplayModeIsKernelInProcess) {
  auto k = ParseConfigFromEnvironment({{"CUSCOPE_REPLAY_MODE", "kernel"}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->replay_mode, "kernel");
  auto app = ParseConfigFromEnvironment({{"CUSCOPE_REPLAY_MODE", "application"}});
  ASSERT_FALSE(app.ok());
  EXPECT_NE(app.status().message().find("once per pass"), std::string::npos) << app.status();
  EXPECT_FALSE(ParseConfigFromEnvironment({{"CUSCOPE_REPLAY_MODE", "range"}}).ok());
}

}  // namespace
}  // namespace cuscope::settings
