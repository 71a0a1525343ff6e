#include "lib/cli/run_sets.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cuscope::cli {

void AddRunSetArguments(ArgumentParser* parser, RunSetArgs* args, ArgumentParser::Message unknown_option) {
  parser->Flag({"--"}, [args, unknown_option]() -> Next {
    if (args->separator) return absl::InvalidArgumentError(unknown_option("--"));
    args->separator = true;
    return absl::OkStatus();
  });
  parser->Option({"--base"}, "--base takes TRACE[,TRACE...]", AppendCommaSeparated(&args->base_list),
                 "the baseline's traces, comma-separated (with --new)");
  parser->Option({"--new"}, "--new takes TRACE[,TRACE...]", AppendCommaSeparated(&args->new_list),
                 "the changed program's traces, comma-separated (with --base)");
  parser->Positional([args](const std::string& trace) {
    (args->separator ? args->after_separator : args->before_separator).push_back(trace);
    return absl::OkStatus();
  });
  parser->UnknownOptionMessage(std::move(unknown_option));
}

void AddSpanArguments(ArgumentParser* parser, report::DiffOptions* options) {
  // Whether --span was given: --nvtx after it is a mistake, as is --span after --nvtx.
  auto span_given = std::make_shared<bool>(false);
  parser->Option(
      {"--span"}, "--span takes steady or all",
      [options, span_given](const std::string& v) {
        if (v != "steady" && v != "all") return absl::InvalidArgumentError("--span takes steady or all");
        if (options->span == report::DiffSpan::kNvtx) {
          return absl::InvalidArgumentError("--span and --nvtx do not go together");
        }
        options->span = v == "all" ? report::DiffSpan::kAll : report::DiffSpan::kSteady;
        *span_given = true;
        return absl::OkStatus();
      },
      "the time compared: steady state, start-up left out (default), or all of it");
  parser->Option(
      {"--nvtx"}, "--nvtx takes the name of an NVTX range",
      [options, span_given](const std::string& v) {
        if (v.empty()) return absl::InvalidArgumentError("--nvtx takes the name of an NVTX range");
        if (*span_given) return absl::InvalidArgumentError("--span and --nvtx do not go together");
        options->span = report::DiffSpan::kNvtx;
        options->nvtx_range = v;
        return absl::OkStatus();
      },
      "compare the mean length of the NVTX ranges named RANGE (a step, a request)");
}

absl::StatusOr<RunSets> ResolveRunSets(const RunSetArgs& args) {
  RunSets sets;
  const bool lists = !args.base_list.empty() || !args.new_list.empty();
  if (lists) {
    if (!args.before_separator.empty() || args.separator) {
      return absl::InvalidArgumentError("give the runs either as --base/--new lists or as trace arguments, not both");
    }
    if (args.base_list.empty() || args.new_list.empty()) {
      return absl::InvalidArgumentError("--base and --new both need at least one trace");
    }
    sets.base = args.base_list;
    sets.next = args.new_list;
  } else if (args.separator) {
    if (args.before_separator.empty() || args.after_separator.empty()) {
      return absl::InvalidArgumentError("BASE... -- NEW...: both sides need at least one trace");
    }
    sets.base = args.before_separator;
    sets.next = args.after_separator;
  } else if (args.before_separator.size() == 2) {
    sets.base = {args.before_separator[0]};
    sets.next = {args.before_separator[1]};
  } else {
    return absl::InvalidArgumentError(
        "give two traces (BASE NEW), or several runs per side as BASE... -- NEW... or --base A,B --new C,D");
  }
  return sets;
}

absl::Status LoadRunSets(const RunSets& sets, std::vector<report::RunFigures>* base,
                         std::vector<report::RunFigures>* next) {
  for (auto [paths, out] : {std::pair{&sets.base, base}, std::pair{&sets.next, next}}) {
    for (const std::string& path : *paths) {
      absl::StatusOr<report::RunFigures> figures = report::LoadRunFigures(path);
      if (!figures.ok()) return figures.status();
      if (figures->truncated) {
        std::fprintf(stderr, "cuscope: warning: %s is truncated: its figures cover what was read\n", path.c_str());
      }
      out->push_back(*std::move(figures));
    }
  }
  return absl::OkStatus();
}

}  // namespace cuscope::cli
