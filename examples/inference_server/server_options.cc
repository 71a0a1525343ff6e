#include "examples/inference_server/server_options.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace inference_server {
namespace {

absl::Status BadValue(absl::string_view flag, absl::string_view value, absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(flag, " ", value, ": expected ", expected));
}

absl::Status ParseCount(absl::string_view flag, absl::string_view value, int min, int max, int* out) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return BadValue(flag, value, absl::StrCat("an integer from ", min, " to ", max));
  }
  *out = n;
  return absl::OkStatus();
}

absl::Status ParseNumber(absl::string_view flag, absl::string_view value, double min, double max, double* out) {
  double x = 0;
  if (!absl::SimpleAtod(value, &x) || !std::isfinite(x) || x < min || x > max) {
    return BadValue(flag, value, absl::StrCat("a number from ", min, " to ", max));
  }
  *out = x;
  return absl::OkStatus();
}

absl::Status ParseCuscopeMode(absl::string_view value, CuscopeMode* out) {
  if (value == "off") {
    *out = CuscopeMode::kOff;
  } else if (value == "trace") {
    *out = CuscopeMode::kTrace;
  } else if (value == "monitor") {
    *out = CuscopeMode::kMonitor;
  } else if (value == "flight") {
    *out = CuscopeMode::kFlight;
  } else {
    return BadValue("--cuscope", value, "off, trace, monitor or flight");
  }
  return absl::OkStatus();
}

absl::Status ParseOnOff(absl::string_view flag, absl::string_view value, bool* out) {
  if (value == "on") {
    *out = true;
  } else if (value == "off") {
    *out = false;
  } else {
    return BadValue(flag, value, "on or off");
  }
  return absl::OkStatus();
}

// One flag and its value into `o`.
absl::Status ApplyFlag(absl::string_view flag, absl::string_view value, ServerOptions& o) {
  if (flag == "--workers") return ParseCount(flag, value, 1, 256, &o.workers);
  if (flag == "--duration") return ParseNumber(flag, value, 0.1, 86400, &o.duration_seconds);
  if (flag == "--rate") return ParseNumber(flag, value, 0, 1e6, &o.rate);
  if (flag == "--batch") return ParseCount(flag, value, 1, 65536, &o.batch);
  if (flag == "--hidden") return ParseCount(flag, value, 1, 65536, &o.hidden);
  if (flag == "--layers") return ParseCount(flag, value, 1, 1024, &o.layers);
  if (flag == "--warmup") return ParseNumber(flag, value, 0, 86400, &o.warmup_seconds);
  if (flag == "--cuscope") return ParseCuscopeMode(value, &o.cuscope);
  if (flag == "--trace-window") return ParseNumber(flag, value, 0, 86400, &o.trace_window_seconds);
  if (flag == "--snapshot-every") return ParseNumber(flag, value, 0.1, 3600, &o.snapshot_every_seconds);
  if (flag == "--linger") return ParseNumber(flag, value, 0, 3600, &o.linger_seconds);
  if (flag == "--requests") return ParseOnOff(flag, value, &o.request_scopes);
  if (flag == "--bulk-workers") return ParseCount(flag, value, 1, 64, &o.bulk_workers);
  if (flag == "--bulk-kernel-us") return ParseNumber(flag, value, 1, 1e6, &o.bulk_kernel_us);
  if (flag == "--request-log") {
    if (value.empty()) return BadValue(flag, "''", "a file name");
    o.request_log = std::string(value);
    return absl::OkStatus();
  }
  if (flag == "--prometheus") {
    o.prometheus = std::string(value);
    return absl::OkStatus();
  }
  if (flag == "--output") {
    if (value.empty()) return BadValue(flag, "''", "a file name");
    o.output = std::string(value);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag, " (see --help)"));
}

// Settings that are each valid but do not go together. `bulk_flags_given`: --bulk-workers or
// --bulk-kernel-us on the command line (their defaults cannot tell).
absl::Status CheckCombination(const ServerOptions& o, bool bulk_flags_given) {
  if (bulk_flags_given && !o.interference) {
    return absl::InvalidArgumentError("--bulk-workers and --bulk-kernel-us need --interference");
  }
  if (!o.prometheus.empty() && o.cuscope != CuscopeMode::kMonitor) {
    return absl::InvalidArgumentError("--prometheus needs --cuscope monitor");
  }
  if ((o.trace_window_seconds > 0 || o.trace_everything) && o.cuscope != CuscopeMode::kMonitor) {
    return absl::InvalidArgumentError("--trace-window and --trace-everything need --cuscope monitor");
  }
  if (o.snapshot_every_seconds > 0 && o.cuscope != CuscopeMode::kFlight) {
    return absl::InvalidArgumentError("--snapshot-every needs --cuscope flight");
  }
  if (o.trace_window_seconds > 0 && o.trace_everything) {
    return absl::InvalidArgumentError("--trace-window and --trace-everything do not go together");
  }
  // The model's sizes go into cuBLAS as int and into one allocation: keep the largest buffer
  // (the weights) addressable with room to spare.
  const double weight_floats = static_cast<double>(o.hidden) * o.hidden * o.layers;
  if (weight_floats * sizeof(float) > 64.0 * (1ull << 30)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--hidden %d --layers %d: the weights would exceed 64 GiB", o.hidden, o.layers));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerOptions> ParseServerOptions(int argc, char** argv) {
  ServerOptions o;
  bool bulk_flags_given = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      return o;
    }
    if (arg == "--json") {
      o.json = true;
      continue;
    }
    if (arg == "--trace-everything") {
      o.trace_everything = true;
      continue;
    }
    if (arg == "--interference") {
      o.interference = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) return absl::InvalidArgumentError(absl::StrCat("unexpected argument ", arg));
    // "--flag=value" or "--flag value".
    absl::string_view flag = arg;
    absl::string_view value;
    if (const size_t eq = arg.find('='); eq != absl::string_view::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    }
    if (absl::Status st = ApplyFlag(flag, value, o); !st.ok()) return st;
    if (flag == "--bulk-workers" || flag == "--bulk-kernel-us") bulk_flags_given = true;
  }
  if (absl::Status st = CheckCombination(o, bulk_flags_given); !st.ok()) return st;
  return o;
}

std::string ServerUsage(const char* program) {
  const ServerOptions d;
  return absl::StrFormat(
      "usage: %s [flags]\n"
      "A synthetic inference server: worker threads, each with its own CUDA stream, serve requests\n"
      "(cuBLAS GEMMs, elementwise kernels, a small device-to-host result) from a load generator, and\n"
      "print throughput and latency percentiles. Latency runs from a request's arrival (its\n"
      "scheduled time under open-loop load) to its result being on the host. Each request runs\n"
      "inside a cuscope request scope (cuscope/request.h) of its route: \"chat\" for the model's\n"
      "requests and, with --interference, \"bulk\" for the interfering ones.\n"
      "  --workers N         worker threads, one stream each (default %d)\n"
      "  --duration S        measured seconds (default %g)\n"
      "  --rate R            open-loop requests per second, Poisson arrivals; 0 = closed loop, each\n"
      "                      worker serving back to back (default %g)\n"
      "  --batch B           columns per request (default %d)\n"
      "  --hidden H          GEMM size: H x H weights per layer (default %d)\n"
      "  --layers L          GEMM + bias/tanh layers per request (default %d)\n"
      "  --warmup S          seconds served before measuring (default %g)\n"
      "  --cuscope MODE      off (no cuscope Session), trace, monitor or flight (default off)\n"
      "  --prometheus ADDR   monitor mode: serve the figures to Prometheus at PORT or ADDRESS:PORT\n"
      "  --output NAME       cuscope output file name (default %s)\n"
      "  --trace-window S    monitor mode: open a trace window of S seconds halfway through\n"
      "  --trace-everything  monitor mode: a trace window over the whole run (figures and records\n"
      "                      of the same run)\n"
      "  --snapshot-every S  flight mode: a snapshot of the last seconds every S seconds while serving\n"
      "                      (files OUTPUT_snapshotN.cuscope)\n"
      "  --linger S          keep the cuscope session (and its Prometheus endpoint) S seconds after\n"
      "                      the run before stopping it\n"
      "  --requests on|off   open a cuscope request scope (id, route) around every request, from\n"
      "                      the worker taking it to its result on the host; off = no scopes at all,\n"
      "                      to measure what they cost (default on)\n"
      "  --interference      add the route \"bulk\": worker threads with their own streams serving\n"
      "                      back to back requests of one bulk_spin_kernel each, which fills every\n"
      "                      SM and holds it, so that chat requests' kernels queue behind it. Bulk\n"
      "                      requests (ids with the high bit set) are counted apart, not in the\n"
      "                      summary; the checksum is unchanged\n"
      "  --bulk-workers N    with --interference: bulk worker threads (default %d)\n"
      "  --bulk-kernel-us US with --interference: how long each bulk kernel holds the SMs, in\n"
      "                      microseconds (default %g)\n"
      "  --request-log PATH  write a CSV of every measured request, id,route,service_ms, at the end;\n"
      "                      service_ms runs from the worker taking the request to its result on\n"
      "                      the host (its scope's span), by the server's steady clock\n"
      "  --json              print the summary as one JSON line (the bulk count goes to stderr)\n",
      program, d.workers, d.duration_seconds, d.rate, d.batch, d.hidden, d.layers, d.warmup_seconds, d.output,
      d.bulk_workers, d.bulk_kernel_us);
}

}  // namespace inference_server
