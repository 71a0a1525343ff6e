// cuscope dump: the records of a trace, one per line, in file order (trace_dump.h).
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/trace_dump.h"
#include "lib/core/output_file.h"
#include "lib/core/terminal_text.h"
#include "lib/core/trace_reader.h"

namespace cuscope::cli {
namespace {

constexpr const char kDumpUsage[] =
    "usage: cuscope dump [--limit N] TRACE\n"
    "Prints the header, then every record with its time relative to the session start.\n";

std::string E(std::string_view s) { return core::EscapeForTerminal(s); }

}  // namespace

int RunDump(const Args& args) {
  std::string path;
  DumpOptions options;
  // A mistake in the command line's shape is shown with the usage after it; the messages carry
  // their own line ends for that reason.
  const auto unexpected = [](const std::string& arg) {
    return absl::StrCat("unexpected argument ", E(arg), "\n", kDumpUsage);
  };
  ArgumentParser parser;
  parser.Option(
      {"--limit"}, unexpected("--limit"),
      [&](const std::string& v) {
        if (!absl::SimpleAtoi(v, &options.record_limit)) return absl::InvalidArgumentError("--limit needs a number\n");
        return absl::OkStatus();
      },
      "print at most N records");
  parser.Positional([&](const std::string& arg) {
    if (!path.empty()) return absl::InvalidArgumentError(unexpected(arg));
    path = arg;
    return absl::OkStatus();
  });
  parser.UnknownOptionMessage(unexpected);
  absl::StatusOr<ParsedArguments> parsed = parser.Parse(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "cuscope: %s", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help) {
    std::fputs(kDumpUsage, stdout);
    return 0;
  }
  if (path.empty()) {
    std::fputs(kDumpUsage, stderr);
    return 2;
  }
  auto reader = core::TraceReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "cuscope: %s\n", E(std::string(reader.status().message())).c_str());
    return 2;
  }
  struct stat st {};
  const uint64_t trace_bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  options.byte_bound = core::TraceOutputBound(trace_bytes);
  options.bound_reason = core::TraceOutputBoundReason(trace_bytes);
  absl::StatusOr<DumpResult> dumped = DumpTrace(**reader, options, stdout);
  std::fflush(stdout);
  if (!dumped.ok()) {
    std::fprintf(stderr, "cuscope: %s\n", E(std::string(dumped.status().message())).c_str());
    return 1;
  }
  if ((*reader)->tail_bytes_dropped() > 0) {
    std::fprintf(stderr, "cuscope: the trace ends in an incomplete block: %llu bytes at the end dropped\n",
                 static_cast<unsigned long long>((*reader)->tail_bytes_dropped()));
  }
  return 0;
}

}  // namespace cuscope::cli
