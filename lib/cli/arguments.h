// One parser for the arguments of every `cuscope` command. A command declares its options and
// what each does, then calls Parse, which reads the arguments in the order they were written and
// stops at the first mistake; every message is the command's own, so each command keeps its words.
//
//   std::string path, format = "text";
//   ArgumentParser parser;
//   parser.Option({"--format"}, "--format takes text or json", [&](const std::string& v) {
//     if (v != "text" && v != "json") return absl::InvalidArgumentError("--format takes text or json");
//     format = v;
//     return absl::OkStatus();
//   });
//   parser.UnknownOptionMessage(UnknownOptionOf("analyze"));
//   parser.Positional(KeepOne(&path, "analyze takes one trace file"));
//   if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kAnalyzeUsage)) return *exit;
//
// What an argument is, checked in this order:
//   "--" ends the options when EndOptionsAtDoubleDash() was called (else it is looked up as a name);
//   an empty argument, or one not starting with '-', is positional;
//   a help name (-h and --help unless HelpNames says otherwise) ends the parse with help set;
//   a registered name is that flag, switch or option (an option takes the next argument as its
//   value; a switch takes the next argument only when it is "true" or "false");
//   --NAME=VALUE is option NAME with VALUE, for InlineValue names and every option or switch whose
//   name starts with "--", as nsys and most tools take them;
//   anything else starting with '-' is an unknown option.
//
// CLI11 (a CLI::App built for each Parse, arguments.cc) does the reading: it tells names from
// values and positional arguments, splits --NAME=VALUE, takes an option's value and finds it
// missing, and calls each action as its argument is read. What CLI11 reads otherwise than the
// rules above (combined short names, "--", a switch's optional true|false) is settled by a short
// pre-pass there, and every message is still the command's own.
//
// Each declaration may carry a one-line description: with the names, it is what `cuscope
// completion` and `cuscope man` are generated from (command_catalog.h).
#ifndef CUSCOPE_LIB_CLI_ARGUMENTS_H_
#define CUSCOPE_LIB_CLI_ARGUMENTS_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/cli/commands.h"
#include "lib/core/kernel_names.h"

namespace cuscope::cli {

// What an action tells the parser: go on (an OK status), fail with the status's message, or stop
// here with success because the command has all it needs (`analyze --threshold help`).
class Next {
 public:
  Next(absl::Status status) : status_(std::move(status)) {}  // NOLINT: actions return a Status
  static Next Stop();

  bool stop() const { return stop_; }
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
  bool stop_ = false;
};

// Where the parse ended.
struct ParsedArguments {
  bool help = false;     // a help name was given; nothing after it was read
  bool stopped = false;  // an action asked to stop; nothing after its argument was read
  // The first argument left unread: the first positional one after EndOptionsAtFirstPositional(),
  // the one after "--" with EndOptionsAtDoubleDash(), else the number of arguments.
  size_t end = 0;
};

class ArgumentParser {
 public:
  using FlagAction = std::function<Next()>;
  using ValueAction = std::function<Next(const std::string& value)>;
  using SwitchAction = std::function<Next(bool on)>;
  // Builds the message for an argument (an unknown option, a value missing after an option name).
  using Message = std::function<std::string(const std::string& argument)>;

  // A name that takes no value.
  ArgumentParser& Flag(std::vector<std::string> names, FlagAction action, std::string description = "");
  // A name whose value is the next argument; `missing_value` is the message when there is none
  // (empty: the parser's MissingValueMessage).
  ArgumentParser& Option(std::vector<std::string> names, std::string missing_value, ValueAction action,
                         std::string description = "");
  // A name that is on by itself and also takes true or false, as nsys's switches do: NAME,
  // NAME=true|false, or NAME followed by "true" or "false" (`--force-overwrite true`); any other
  // inline value is a mistake ("NAME takes true or false"). Without it, `-f true ./app` would run
  // a program named true.
  ArgumentParser& Switch(std::vector<std::string> names, SwitchAction action, std::string description = "");
  // A name that takes a value only as --NAME=VALUE (NAME alone can be a Flag as well).
  ArgumentParser& InlineValue(std::string name, ValueAction action, std::string description = "");
  // What to do with a positional argument. Without one, a positional argument is a mistake named
  // by UnexpectedArgumentMessage.
  ArgumentParser& Positional(ValueAction action);

  // Parse ends, with success, at the first positional argument: it and everything after it are
  // left for the command (a program and its own arguments).
  ArgumentParser& EndOptionsAtFirstPositional();
  // "--" ends the options: what follows it is left for the command.
  ArgumentParser& EndOptionsAtDoubleDash();
  // The names that ask for help (default -h and --help), and whether they count only as the
  // first argument (after that they are read like any other argument).
  ArgumentParser& HelpNames(std::vector<std::string> names);
  ArgumentParser& HelpOnlyAsFirstArgument();
  // An argument that starts with '-' and names nothing is positional (a command whose positional
  // argument may start with '-').
  ArgumentParser& UnknownOptionsArePositional();

  // The messages for mistakes the parser finds itself. Defaults: "unknown option X", "option X
  // needs a value", "unexpected argument X".
  ArgumentParser& UnknownOptionMessage(Message message);
  ArgumentParser& MissingValueMessage(Message message);
  ArgumentParser& UnexpectedArgumentMessage(Message message);

  // Reads args[first...]. An error carries the message of the first mistake.
  absl::StatusOr<ParsedArguments> Parse(const Args& args, size_t first = 0) const;

  // What a name takes: nothing (Flag), the next argument (Option), a value only inline
  // (InlineValue), or optionally true or false (Switch).
  enum class Takes { kNothing, kNextArgument, kInlineValueOnly, kTrueOrFalse };
  // One declaration as a command made it, without its action.
  struct Declaration {
    std::vector<std::string> names;
    Takes takes;
    std::string description;
  };
  // The declarations, in the order made. "--" (a separator some commands count, run_sets.h) is
  // left out: it is no option to complete or describe.
  std::vector<Declaration> Declarations() const;
  // Whether the command takes positional arguments (files, mostly) or a program to run.
  bool TakesPositionalArguments() const { return positional_ != nullptr || end_at_positional_; }

 private:
  friend class ParseRun;  // arguments.cc: one Parse, read by CLI11
  struct Spec {
    std::vector<std::string> names;
    Takes takes;
    std::string missing_value;
    FlagAction flag;
    ValueAction value;
    SwitchAction on_off;
    std::string description;
  };

  // The spec registered under `name` for the form used (NAME alone, or --NAME=VALUE when
  // inline_value), or null.
  const Spec* Find(absl::string_view name, bool inline_value) const;
  bool IsHelpName(const std::string& arg) const;

  std::vector<Spec> specs_;
  ValueAction positional_;
  bool end_at_positional_ = false;
  bool end_at_double_dash_ = false;
  std::vector<std::string> help_names_ = {"-h", "--help"};
  bool help_first_only_ = false;
  bool unknown_is_positional_ = false;
  Message unknown_option_;
  Message missing_value_;
  Message unexpected_argument_;
};

// While one lives, every ArgumentParser::Parse on this thread first hands its parser to `record`
// (command_catalog.cc runs each command's --help under one to learn what it declares).
class DeclarationRecorder {
 public:
  explicit DeclarationRecorder(std::function<void(const ArgumentParser&)> record);
  ~DeclarationRecorder();
  DeclarationRecorder(const DeclarationRecorder&) = delete;
  DeclarationRecorder& operator=(const DeclarationRecorder&) = delete;

  // The innermost one living on this thread, or null.
  static const DeclarationRecorder* Active();
  void Record(const ArgumentParser& parser) const { record_(parser); }

 private:
  std::function<void(const ArgumentParser&)> record_;
  const DeclarationRecorder* previous_;
};

// An action for a command's one positional argument: the first fills *out, another (while *out
// is not empty) fails with `too_many`.
ArgumentParser::ValueAction KeepOne(std::string* out, std::string too_many);

// An action that appends the comma-separated items of its value to *out, skipping empty ones.
ArgumentParser::ValueAction AppendCommaSeparated(std::vector<std::string>* out);

// An action for --format text|json (analyze, diff, status): anything else fails with
// "--format takes text or json".
ArgumentParser::ValueAction KeepTextOrJson(std::string* out);

// An action for --kernel-names base|demangled|mangled.
ArgumentParser::ValueAction KeepKernelNameStyle(core::KernelNameStyle* out);
// Its lines in a command's usage (a macro, so that usages stay one string literal).
#define CUSCOPE_KERNEL_NAMES_USAGE                                                                 \
  "  --kernel-names base|demangled|mangled\n"                                                      \
  "                       kernel names as shown: short base names (default), the full demangled\n" \
  "                       names, or as recorded; JSON and CSV keep the recorded names\n"

// The message for an unknown option of `command`: "COMMAND: unknown option 'X' (see cuscope
// COMMAND --help)".
ArgumentParser::Message UnknownOptionOf(std::string command);

// Prints "cuscope: MESSAGE" on stderr, escaped for the terminal (line breaks kept), and returns
// 2, the exit code of a usage or input error.
int PrintError(absl::string_view message);

// The usual end of a parse: help prints `usage` on stdout (exit 0); a mistake prints its message
// as PrintError does (exit 2). Returns that exit code, or nothing when the command goes on.
std::optional<int> HelpOrMistake(const absl::StatusOr<ParsedArguments>& parsed, absl::string_view usage);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_ARGUMENTS_H_
