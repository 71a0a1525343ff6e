#include "lib/cli/profile_options.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cli/arguments.h"
#include "lib/cli/nsys_trace_names.h"
#include "lib/settings/config.h"

namespace cuscope::cli {

const char kProfileUsage[] =
    "usage: cuscope profile [options] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with the cuscope collector injected (CUDA_INJECTION64_PATH) and writes its\n"
    "CUDA timeline to a trace file. The program's output and exit code are its own.\n"
    "\n"
    "  -o, --output NAME         trace file name; %p process id, %h host, %r rank (torchrun,\n"
    "                            mpirun, srun), %n sequence number, %q{VAR} environment variable\n"
    "                            (default: cuscope_%p)\n"
    "  -f, --force-overwrite [true|false]\n"
    "                            replace an existing trace file (also as --force-overwrite=true, as\n"
    "                            nsys; `-f true ./app` does not run a program named true)\n"
    "  -t, --trace KINDS         activity kinds, comma-separated: kernel,memcpy,memset,api,\n"
    "                            runtime,driver,sync,nvtx,memory,overhead or all (default: every\n"
    "                            kind but runtime, driver and sync). api: only the runtime and\n"
    "                            driver calls the analyzer reads (launches, copies, syncs,\n"
    "                            allocations, graph and module set-up) and their sync records;\n"
    "                            runtime, driver: every call of that API. nsys's names are taken\n"
    "                            too, with a line saying what each records: cuda (kernel,memcpy,\n"
    "                            memset,api,sync,memory), nvtx; osrt, cublas, cudnn, mpi, ...\n"
    "                            record nothing more\n"
    "      --lean-calls callbacks|records  how api records its calls: CUPTI callbacks on those calls\n"
    "                            (default; cheapest) or CUPTI's API records, which intercept every\n"
    "                            call of the program\n"
    "      --delay SECONDS       start collecting after SECONDS\n"
    "      --duration SECONDS    stop collecting SECONDS after the start\n"
    "  -c, --capture-range cudaProfilerApi|nvtx\n"
    "                            collect only between cudaProfilerStart and cudaProfilerStop, or\n"
    "                            during the first NVTX range named by --nvtx-capture\n"
    "      --nvtx-capture NAME   with -c nvtx: the NVTX range (push/pop or start/end, any domain)\n"
    "                            whose start opens the window and whose end closes it\n"
    "      --stacks none|all|every:N|first:K  the call stack of each kernel launch, of one in N, or of\n"
    "                            the first K launches of each kernel (default none): analyze and\n"
    "                            stats name where each kernel was launched from\n"
    "      --unwinder libunwind|libgcc  how --stacks walks the stack: libunwind (default; ~10x\n"
    "                            cheaper a launch, libunwind.so.8) or the C runtime's libgcc\n"
    "      --queue-times true|false  each kernel also records when the host queued its launch\n"
    "                            (CUPTI's latency timestamps; default false)\n"
    "      --buffer-size SIZE    one CUPTI buffer (default 4M)\n"
    "      --buffer-pool-cap SIZE  memory cap for all buffers (default 128M)\n"
    "      --flush-period-ms MS  how often partly filled buffers are written (default 500)\n"
    "  -q, --quiet               print nothing of cuscope's own\n"
    "\n"
    "Always on (monitor mode: figures per interval and device instead of a trace; memory bounded):\n"
    "      --mode trace|monitor|flight  trace (default) writes every record; monitor writes, per interval,\n"
    "                            GPU busy and idle by host cause, kernels by GPU time, copies,\n"
    "                            syncs and GPU counters (-o '' for no file)\n"
    "      --monitor-interval SECONDS  one interval (default 1)\n"
    "      --overhead-budget PERCENT  record in short windows, as much as keeps the session's\n"
    "                            estimated cost under PERCENT of the program's time (default off:\n"
    "                            record all the time); the figures are then estimates with their\n"
    "                            95% bounds\n"
    "      --duty-cycle PERCENT  record a fixed PERCENT of the time instead (100: all of it)\n"

    "      --prometheus [ADDRESS:]PORT serve the figures to Prometheus on /metrics (a bare port\n"
    "                            listens on the loopback interface only)\n"
    "\n"
    "Flight recorder (--mode flight: every record kept in memory for the last seconds, nothing\n"
    "written until the program asks for a snapshot: Session::Snapshot, cuscope_snapshot):\n"
    "      --flight-span SECONDS how far back the records reach (default 30)\n"
    "      --flight-size MIB     the memory they may take (default 256; the smaller limit wins)\n"
    "      --flight-step-threshold SECONDS  a step marked with MarkStep / cuscope_mark_step that\n"
    "                            took longer starts a snapshot\n"
    "      --flight-step-range NAME  NVTX ranges of this name are steps too (needs the threshold)\n"
    "      --flight-request-threshold SECONDS  a request scope (cuscope::RequestScope) that took\n"
    "                            longer starts a snapshot\n"
    "      --flight-idle-share PERCENT  a GPU idle more than this share of the last\n"
    "                            --flight-idle-seconds (default 10) starts a snapshot\n"
    "      --flight-after SECONDS  a triggered snapshot also holds this long after (default 0)\n"
    "\n"
    "Kernel internals (CUPTI Range Profiler; each profiled launch is replayed once per pass and\n"
    "runs serialized, its timeline span is marked and left out of the timeline analysis):\n"
    "      --metrics LIST        sets sol,occupancy,stalls,roofline and/or ncu metric names\n"
    "  -k, --kernel-name NAME    only kernels named NAME (mangled, demangled or base name), or\n"
    "                            regex:PATTERN searched in the mangled and demangled names\n"
    "      --launch-skip N       pass over the first N matching launches\n"
    "      --launch-count N      profile at most N launches in all\n"
    "      --per-kernel-count N  profile at most N launches of each kernel name + grid + block\n"
    "                            (default 1: the whole program once per kernel; 0 = no limit)\n"
    "      --replay-mode kernel  how passes are made: CUPTI saves the memory a launch touches and\n"
    "                            replays it once per pass (the only mode that runs in-process)\n"
    "\n"
    "GPU counters over time (CUPTI PM sampling: SM, warps, tensor pipes, DRAM, PCIe, NVLink; NVML:\n"
    "power, temperature, clocks, clocks-event reasons, memory used), during the timeline window:\n"
    "      --gpu-metrics-devices none|all|IDS  devices to sample (default none; all with --top-down)\n"
    "      --gpu-metrics-frequency HZ  PM samples per second, 10..200000 (default 1000; NVML every\n"
    "                            100 ms)\n"
    "\n"
    "One-run top-down (timeline window, then kernel metrics on its hottest kernels):\n"
    "      --top-down[=N]        after the --duration, cudaProfilerStart/Stop or NVTX window closes,\n"
    "                            collect --metrics (default sol,occupancy,stalls) on the next\n"
    "                            launches of the window's N hottest kernels, name + grid + block\n"
    "                            (default N = 3); GPU counters are sampled during the window\n"
    "                            and stop before the metrics start\n"
    "      --top-down-launches N launches profiled per hot kernel (default 3)\n";

namespace {

// Options that take a value, and the variable each sets.
struct ValueOption {
  const char* long_name;
  const char* short_name;
  const char* variable;
  const char* description;  // one line, from the usage above
};
constexpr ValueOption kValueOptions[] = {
    {"--output", "-o", "CUSCOPE_OUTPUT",
     "trace file name; %p process id, %h host, %r rank, %n sequence number, %q{VAR} environment variable (default: "
     "cuscope_%p)"},
    {"--delay", nullptr, "CUSCOPE_DELAY", "start collecting after SECONDS"},
    {"--duration", nullptr, "CUSCOPE_DURATION", "stop collecting SECONDS after the start"},
    {"--capture-range", "-c", "CUSCOPE_CAPTURE_RANGE",
     "collect only between cudaProfilerStart and cudaProfilerStop (cudaProfilerApi), or during the first NVTX range "
     "named by --nvtx-capture (nvtx)"},
    {"--nvtx-capture", nullptr, "CUSCOPE_NVTX_CAPTURE",
     "with -c nvtx: the NVTX range whose start opens the window and whose end closes it"},
    {"--buffer-size", nullptr, "CUSCOPE_BUFFER_SIZE", "one CUPTI buffer (default 4M)"},
    {"--buffer-pool-cap", nullptr, "CUSCOPE_BUFFER_POOL_CAP", "memory cap for all buffers (default 128M)"},
    {"--flush-period-ms", nullptr, "CUSCOPE_FLUSH_PERIOD_MS",
     "how often partly filled buffers are written, in milliseconds (default 500)"},
    {"--metrics", nullptr, "CUSCOPE_METRICS",
     "kernel metrics: sets sol,occupancy,stalls,roofline and/or ncu metric names"},
    {"--kernel-name", "-k", "CUSCOPE_KERNEL_NAME",
     "only kernels named NAME (mangled, demangled or base name), or regex:PATTERN"},
    {"--launch-skip", nullptr, "CUSCOPE_LAUNCH_SKIP", "pass over the first N matching launches"},
    {"--launch-count", nullptr, "CUSCOPE_LAUNCH_COUNT", "profile at most N launches in all"},
    {"--per-kernel-count", nullptr, "CUSCOPE_PER_KERNEL_COUNT",
     "profile at most N launches of each kernel name + grid + block (default 1; 0 = no limit)"},
    {"--replay-mode", nullptr, "CUSCOPE_REPLAY_MODE",
     "how passes are made: kernel (CUPTI saves and restores the memory a launch touches)"},
    {"--top-down-launches", nullptr, "CUSCOPE_TOP_DOWN_LAUNCHES", "launches profiled per hot kernel (default 3)"},
    {"--stacks", nullptr, "CUSCOPE_STACKS",
     "the call stack of each kernel launch: none (default), all, every:N or first:K"},
    {"--unwinder", nullptr, "CUSCOPE_UNWINDER", "how --stacks walks the stack: libunwind (default) or libgcc"},
    {"--queue-times", nullptr, "CUSCOPE_QUEUE_TIMES",
     "true: each kernel also records when the host queued its launch (default false)"},
    {"--lean-calls", nullptr, "CUSCOPE_LEAN_CALLS",
     "how api records its calls: callbacks (default; cheapest) or records (CUPTI's API records)"},
    {"--gpu-metrics-devices", nullptr, "CUSCOPE_GPU_METRICS_DEVICES",
     "devices whose GPU counters are sampled over time: none (default), all or IDS"},
    {"--gpu-metrics-frequency", nullptr, "CUSCOPE_GPU_METRICS_FREQUENCY",
     "PM samples per second, 10..200000 (default 1000)"},
    {"--mode", nullptr, "CUSCOPE_MODE",
     "trace (default) writes every record; monitor writes figures per interval; flight keeps the last seconds in "
     "memory"},
    {"--monitor-interval", nullptr, "CUSCOPE_MONITOR_INTERVAL", "monitor mode: one interval in seconds (default 1)"},
    {"--duty-cycle", nullptr, "CUSCOPE_DUTY_CYCLE",
     "monitor mode: record a fixed PERCENT of the time (100: all of it)"},
    {"--overhead-budget", nullptr, "CUSCOPE_OVERHEAD_BUDGET",
     "monitor mode: record in short windows, keeping the estimated cost under PERCENT of the program's time"},
    {"--prometheus", nullptr, "CUSCOPE_PROMETHEUS",
     "monitor mode: serve the figures to Prometheus on /metrics at [ADDRESS:]PORT"},
    {"--flight-span", nullptr, "CUSCOPE_FLIGHT_SPAN",
     "flight mode: how far back the records reach, in seconds (default 30)"},
    {"--flight-size", nullptr, "CUSCOPE_FLIGHT_SIZE",
     "flight mode: the memory the records may take, in MiB (default 256)"},
    {"--flight-step-threshold", nullptr, "CUSCOPE_FLIGHT_STEP_THRESHOLD",
     "flight mode: a step that took longer than SECONDS starts a snapshot"},
    {"--flight-step-range", nullptr, "CUSCOPE_FLIGHT_STEP_RANGE",
     "flight mode: NVTX ranges of this name are steps too (needs the threshold)"},
    {"--flight-request-threshold", nullptr, "CUSCOPE_FLIGHT_REQUEST_THRESHOLD",
     "flight mode: a request scope that took longer than SECONDS starts a snapshot"},
    {"--flight-idle-share", nullptr, "CUSCOPE_FLIGHT_IDLE_SHARE",
     "flight mode: a GPU idle more than PERCENT of the last --flight-idle-seconds starts a snapshot"},
    {"--flight-idle-seconds", nullptr, "CUSCOPE_FLIGHT_IDLE_SECONDS",
     "flight mode: the time --flight-idle-share looks back over (default 10)"},
    {"--flight-after", nullptr, "CUSCOPE_FLIGHT_AFTER",
     "flight mode: a triggered snapshot also holds this many seconds after (default 0)"},
};

// Kernels the top-down profiles when --top-down has no value: the few that usually hold most of
// a program's GPU time, at a few launches each.
constexpr char kDefaultTopDownKernels[] = "3";

}  // namespace

std::vector<std::pair<std::string, std::string>> ProfileOptionVariables() {
  std::vector<std::pair<std::string, std::string>> variables = {{"--force-overwrite", "CUSCOPE_FORCE_OVERWRITE"},
                                                                {"--top-down", "CUSCOPE_TOP_DOWN"},
                                                                {"--quiet", "CUSCOPE_QUIET"},
                                                                {"--trace", "CUSCOPE_KINDS"}};
  for (const ValueOption& o : kValueOptions) variables.emplace_back(o.long_name, o.variable);
  return variables;
}

absl::StatusOr<ProfilePlan> ParseProfileArgs(const std::vector<std::string>& args) {
  ProfilePlan plan;
  // Every option sets one variable: flags to a fixed value, the others to the value given.
  const auto set_value = [&plan](const char* variable) {
    return [&plan, variable](const std::string& value) {
      plan.env[variable] = value;
      return absl::OkStatus();
    };
  };
  const auto set = [&set_value](const char* variable, std::string value) {
    return [action = set_value(variable), value] { return action(value); };
  };
  // The program starts at the first argument that is not an option, or after "--".
  ArgumentParser parser;
  parser.EndOptionsAtFirstPositional().EndOptionsAtDoubleDash();
  parser.Switch(
      {"-f", "--force-overwrite"},
      [&plan](bool on) {
        plan.env["CUSCOPE_FORCE_OVERWRITE"] = on ? "1" : "0";
        return absl::OkStatus();
      },
      "replace an existing trace file (`-f true ./app` does not run a program named true)");
  parser.Flag({"--top-down"}, set("CUSCOPE_TOP_DOWN", kDefaultTopDownKernels),
              "after the timeline window closes, collect --metrics on the next launches of its 3 hottest kernels");
  parser.Flag({"-q", "--quiet"}, set("CUSCOPE_QUIET", "1"), "print nothing of cuscope's own");
  parser.InlineValue("--top-down", set_value("CUSCOPE_TOP_DOWN"), "--top-down=N: the same on the N hottest kernels");
  // nsys's trace names (cuda, nvtx, osrt, ...) become cuscope's kinds, with a line saying how.
  parser.Option(
      {"--trace", "-t"}, "",
      [&plan](const std::string& value) -> Next {
        absl::StatusOr<TraceKinds> kinds = TranslateTraceNames(value);
        if (!kinds.ok()) return kinds.status();
        plan.env["CUSCOPE_KINDS"] = kinds->kinds;
        if (!kinds->mapped.empty()) {
          plan.notes.push_back(absl::StrCat("-t ", value, " in nsys's names records ", kinds->kinds, " (",
                                            absl::StrJoin(kinds->mapped, "; "), ")"));
        }
        return absl::OkStatus();
      },
      "activity kinds, comma-separated: kernel,memcpy,memset,api,runtime,driver,sync,nvtx,memory,overhead or all; "
      "nsys's names too");
  for (const ValueOption& o : kValueOptions) {
    std::vector<std::string> names = {o.long_name};
    if (o.short_name != nullptr) names.emplace_back(o.short_name);
    parser.Option(std::move(names), "", set_value(o.variable), o.description);
  }
  absl::StatusOr<ParsedArguments> parsed = parser.Parse(args);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) {
    plan.help = true;
    return plan;
  }
  plan.program.assign(args.begin() + static_cast<std::ptrdiff_t>(parsed->end), args.end());
  if (plan.program.empty()) return absl::InvalidArgumentError("no program to profile");
  // Check the settings now, with the collector's own parser, so a mistake is reported before the
  // program runs rather than as a line in its output.
  std::vector<std::pair<std::string, std::string>> env(plan.env.begin(), plan.env.end());
  if (auto c = settings::ParseConfigFromEnvironment(env); !c.ok()) return c.status();
  return plan;
}

}  // namespace cuscope::cli
