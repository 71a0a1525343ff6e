#include "lib/cli/arguments.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/core/terminal_text.h"

namespace cuscope::cli {

Next Next::Stop() {
  Next next(absl::OkStatus());
  next.stop_ = true;
  return next;
}

ArgumentParser& ArgumentParser::Flag(std::vector<std::string> names, FlagAction action, std::string description) {
  specs_.push_back(
      Spec{std::move(names), Takes::kNothing, "", std::move(action), nullptr, nullptr, std::move(description)});
  return *this;
}

ArgumentParser& ArgumentParser::Option(std::vector<std::string> names, std::string missing_value, ValueAction action,
                                       std::string description) {
  specs_.push_back(Spec{std::move(names), Takes::kNextArgument, std::move(missing_value), nullptr, std::move(action),
                        nullptr, std::move(description)});
  return *this;
}

ArgumentParser& ArgumentParser::Switch(std::vector<std::string> names, SwitchAction action, std::string description) {
  specs_.push_back(
      Spec{std::move(names), Takes::kTrueOrFalse, "", nullptr, nullptr, std::move(action), std::move(description)});
  return *this;
}

ArgumentParser& ArgumentParser::InlineValue(std::string name, ValueAction action, std::string description) {
  specs_.push_back(Spec{
      {std::move(name)}, Takes::kInlineValueOnly, "", nullptr, std::move(action), nullptr, std::move(description)});
  return *this;
}

ArgumentParser& ArgumentParser::Positional(ValueAction action) {
  positional_ = std::move(action);
  return *this;
}

ArgumentParser& ArgumentParser::EndOptionsAtFirstPositional() {
  end_at_positional_ = true;
  return *this;
}

ArgumentParser& ArgumentParser::EndOptionsAtDoubleDash() {
  end_at_double_dash_ = true;
  return *this;
}

ArgumentParser& ArgumentParser::HelpNames(std::vector<std::string> names) {
  help_names_ = std::move(names);
  return *this;
}

ArgumentParser& ArgumentParser::HelpOnlyAsFirstArgument() {
  help_first_only_ = true;
  return *this;
}

ArgumentParser& ArgumentParser::UnknownOptionsArePositional() {
  unknown_is_positional_ = true;
  return *this;
}

ArgumentParser& ArgumentParser::UnknownOptionMessage(Message message) {
  unknown_option_ = std::move(message);
  return *this;
}

ArgumentParser& ArgumentParser::MissingValueMessage(Message message) {
  missing_value_ = std::move(message);
  return *this;
}

ArgumentParser& ArgumentParser::UnexpectedArgumentMessage(Message message) {
  unexpected_argument_ = std::move(message);
  return *this;
}

const ArgumentParser::Spec* ArgumentParser::Find(absl::string_view name, bool inline_value) const {
  for (const Spec& spec : specs_) {
    const bool takes_inline = spec.takes == Takes::kNextArgument || spec.takes == Takes::kTrueOrFalse;
    const bool form_fits = inline_value ? spec.takes == Takes::kInlineValueOnly ||
                                              (takes_inline && absl::StartsWith(name, "--"))
                                        : spec.takes != Takes::kInlineValueOnly;
    if (form_fits && std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
  }
  return nullptr;
}

bool ArgumentParser::IsHelpName(const std::string& arg) const {
  return std::find(help_names_.begin(), help_names_.end(), arg) != help_names_.end();
}

std::vector<ArgumentParser::Declaration> ArgumentParser::Declarations() const {
  std::vector<Declaration> declarations;
  for (const Spec& spec : specs_) {
    std::vector<std::string> names;
    for (const std::string& name : spec.names) {
      if (name != "--") names.push_back(name);
    }
    if (!names.empty()) declarations.push_back(Declaration{std::move(names), spec.takes, spec.description});
  }
  return declarations;
}

namespace {

// Thrown by an action's callback to end CLI11's parse where it is: the outcome is already kept in
// the ParseRun. Caught in ParseRun, so nothing leaves Parse but its StatusOr.
struct ParseEnded {};

thread_local const DeclarationRecorder* active_recorder = nullptr;

}  // namespace

DeclarationRecorder::DeclarationRecorder(std::function<void(const ArgumentParser&)> record)
    : record_(std::move(record)), previous_(active_recorder) {
  active_recorder = this;
}

DeclarationRecorder::~DeclarationRecorder() { active_recorder = previous_; }

const DeclarationRecorder* DeclarationRecorder::Active() { return active_recorder; }

// One Parse. CLI11 reads the arguments: a CLI::App with one option per declared name (and per help
// name), each calling back as soon as it is read (trigger_on_parse), so actions run in the order
// written; positional arguments and unknown names it keeps, in order, as extras, and each callback
// first hands those read before its name to the command. A short pre-pass (ReadStretch) cuts the
// arguments before each one CLI11 would read otherwise than arguments.h says; those few are taken
// here between CLI11's stretches.
class ParseRun {
 public:
  ParseRun(const ArgumentParser& parser, const Args& args, size_t first)
      : parser_(parser), args_(args), first_(first) {}

  absl::StatusOr<ParsedArguments> Run();

 private:
  using Spec = ArgumentParser::Spec;
  using Takes = ArgumentParser::Takes;

  // An argument as CLI11 is given it.
  struct Token {
    std::string text;
    size_t end;                       // one past the last argument of args_ it stands for
    std::optional<bool> switch_word;  // a switch's "true" or "false", taken off by the pre-pass
  };
  // The argument a stretch ends before, if any, and why CLI11 does not read it.
  enum class Cut {
    kNone,          // the stretch runs to the last argument
    kEndOfOptions,  // "--" with EndOptionsAtDoubleDash (CLI11 would read on, all positional)
    kProgram,       // the first positional argument with EndOptionsAtFirstPositional
    kSeparator,     // "--" declared as a Flag (run_sets.h), a name CLI11 cannot declare
    kUnreadable,    // a name CLI11 would read apart or as positional (see ReadsAsOneName)
  };

  void DeclareNames();
  size_t ReadStretch(size_t from, Cut* cut);
  bool ReadsAsOneName(const std::string& arg) const;
  bool ParseStretch();
  void OnName(const std::string& name, bool takes_value, const CLI::results_t& results);
  void TakeExtras(size_t upto);
  void Positional(const std::string& arg, size_t end);
  void Unknown(const std::string& arg, size_t end);
  void GoOn(const Next& next, size_t end);
  [[noreturn]] void Fail(absl::Status status);
  absl::StatusOr<ParsedArguments> Outcome() const;

  const ArgumentParser& parser_;
  const Args& args_;
  const size_t first_;
  CLI::App app_;
  std::vector<Token> stretch_;
  std::vector<std::string> unread_;  // the stretch reversed, as CLI11 reads it: it shortens it as it goes
  size_t taken_ = 0;                 // the stretch's tokens handed to the command (or read as values)
  size_t extras_taken_ = 0;          // of CLI11's extras
  ParsedArguments parsed_;
  absl::Status failure_;
};

void ParseRun::DeclareNames() {
  // Help is the command's (its names, its usage text): CLI11's own help flag goes.
  app_.set_help_flag();
  // Unknown names are the command's mistake to word (or its positional arguments): CLI11 keeps them.
  app_.allow_extras();
  std::vector<std::string> names;
  const auto add = [&names](const std::string& name) {
    if (name != "--" && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const Spec& spec : parser_.specs_) {
    for (const std::string& name : spec.names) add(name);
  }
  // A help name that counts only first is left to the pre-pass; after that it is any argument.
  if (!parser_.help_first_only_) {
    for (const std::string& name : parser_.help_names_) add(name);
  }
  // One CLI11 option per name: a Flag and an InlineValue may share one (--top-down and
  // --top-down=N), which CLI11 reads as one flag that may have a value; OnName tells them apart.
  for (const std::string& name : names) {
    const bool help = !parser_.help_first_only_ && parser_.IsHelpName(name);
    const Spec* spec = help ? nullptr : parser_.Find(name, false);
    const bool takes_value = spec != nullptr && spec->takes == Takes::kNextArgument;
    CLI::Option* option = app_.add_option(name, [this, name, takes_value](const CLI::results_t& results) {
      OnName(name, takes_value, results);
      return true;
    });
    if (!takes_value) option->expected(0)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    option->trigger_on_parse();
  }
}

// Whether CLI11 reads `arg` (which starts with '-') as the one name it is, as the rules do.
bool ParseRun::ReadsAsOneName(const std::string& arg) const {
  std::string name, rest;
  // "--" followed by no name's first character ("--=x") would be a positional argument to CLI11.
  if (absl::StartsWith(arg, "--")) return CLI::detail::split_long(arg, name, rest);
  // A short name is one character, alone: CLI11 would read "-vq" as -v -q and "-ofile" or "-o=x"
  // as -o with a value, where the rules know only whole names; and "-" or "-5" (no -5 declared)
  // as positional.
  if (arg.size() != 2 || !CLI::detail::split_short(arg, name, rest)) return false;
  return !absl::ascii_isdigit(static_cast<unsigned char>(arg[1])) || parser_.Find(arg, false) != nullptr;
}

// The pre-pass: the arguments from `from` that CLI11 reads as the rules do, into stretch_, up to
// the first one it would not; returns that one's index (or the number of arguments).
size_t ParseRun::ReadStretch(size_t from, Cut* cut) {
  stretch_.clear();
  *cut = Cut::kNone;
  bool value_next = false;  // args_[i] is the value of the option before it, whatever it looks like
  size_t i = from;
  for (; i < args_.size(); ++i) {
    const std::string& arg = args_[i];
    if (value_next) {
      stretch_.push_back(Token{arg, i + 1, std::nullopt});
      value_next = false;
      continue;
    }
    if (arg == "--") {
      *cut = parser_.end_at_double_dash_            ? Cut::kEndOfOptions
             : parser_.Find("--", false) != nullptr ? Cut::kSeparator
                                                    : Cut::kUnreadable;
      return i;
    }
    if (arg.empty() || arg[0] != '-') {
      // CLI11's prefix_command would end here too, but would read the program's arguments on.
      if (parser_.end_at_positional_) {
        *cut = Cut::kProgram;
        return i;
      }
      stretch_.push_back(Token{arg, i + 1, std::nullopt});
      continue;
    }
    if (!ReadsAsOneName(arg)) {
      *cut = Cut::kUnreadable;
      return i;
    }
    const bool help = !parser_.help_first_only_ && parser_.IsHelpName(arg);
    const Spec* spec = help ? nullptr : parser_.Find(arg, false);
    if (spec != nullptr && spec->takes == Takes::kNextArgument) value_next = true;
    Token token{arg, i + 1, std::nullopt};
    // A switch takes the next argument only when it is "true" or "false" (as nsys's do): CLI11
    // has no value that is optional and limited to some words, so the word is taken off here.
    if (spec != nullptr && spec->takes == Takes::kTrueOrFalse && i + 1 < args_.size() &&
        (args_[i + 1] == "true" || args_[i + 1] == "false")) {
      token.switch_word = args_[++i] == "true";
      token.end = i + 1;
    }
    // "--NAME=" is NAME with an empty value, but CLI11 takes an empty inline value as none and
    // the next argument as the value: it is given NAME and the empty value apart.
    if (spec == nullptr && arg.size() > 3 && arg.back() == '=') {
      const std::string name = arg.substr(0, arg.size() - 1);
      const Spec* inline_spec = parser_.Find(name, true);
      if (name.find('=') == std::string::npos && inline_spec != nullptr && inline_spec->takes == Takes::kNextArgument) {
        stretch_.push_back(Token{name, i + 1, std::nullopt});
        token.text.clear();
      }
    }
    stretch_.push_back(std::move(token));
  }
  return i;
}

bool ParseRun::ParseStretch() {
  taken_ = 0;
  extras_taken_ = 0;
  unread_.clear();
  for (auto token = stretch_.rbegin(); token != stretch_.rend(); ++token) unread_.push_back(token->text);
  bool value_missing = false;
  try {
    app_.parse(unread_);
  } catch (const ParseEnded&) {
    return false;
  } catch (const CLI::ArgumentMismatch&) {
    // An option last, with no argument after it for its value.
    value_missing = true;
  } catch (const CLI::Error& e) {
    failure_ = absl::InternalError(absl::StrCat("the argument parser failed: ", e.what()));
    return false;
  }
  try {
    // What CLI11 read after the last name: a mistake there comes before a value found missing.
    TakeExtras(value_missing ? stretch_.size() - 1 : stretch_.size());
  } catch (const ParseEnded&) {
    return false;
  }
  if (value_missing) {
    const std::string& name = stretch_.back().text;
    const Spec* spec = parser_.Find(name, false);
    failure_ = absl::InvalidArgumentError(spec != nullptr && !spec->missing_value.empty() ? spec->missing_value
                                          : parser_.missing_value_                        ? parser_.missing_value_(name)
                                                                   : absl::StrCat("option ", name, " needs a value"));
    return false;
  }
  return true;
}

// CLI11 has read the name `name` (and its value, if it takes one): the command's action for it.
void ParseRun::OnName(const std::string& name, bool takes_value, const CLI::results_t& results) {
  const size_t read = stretch_.size() - unread_.size();
  const Token& last = stretch_[read - 1];
  // NAME VALUE is two arguments; a flag, a switch and --NAME=VALUE are one.
  const bool value_apart =
      takes_value && !(results.size() == 1 && last.text == absl::StrCat(name, "=", results.front()));
  const size_t start = read - (value_apart ? 2 : 1);
  TakeExtras(start);
  taken_ = read;
  const Token& token = stretch_[start];
  if (takes_value) {
    GoOn(parser_.Find(name, false)->value(results.empty() ? std::string() : results.front()), last.end);
    return;
  }
  if (token.text == name) {
    if (!parser_.help_first_only_ && parser_.IsHelpName(name)) {
      parsed_.help = true;
      parsed_.end = token.end;
      throw ParseEnded{};
    }
    const Spec* spec = parser_.Find(name, false);
    if (spec == nullptr) return Unknown(token.text, token.end);  // an InlineValue name alone
    if (spec->takes == Takes::kTrueOrFalse) return GoOn(spec->on_off(token.switch_word.value_or(true)), token.end);
    return GoOn(spec->flag(), token.end);
  }
  // --NAME=VALUE, which CLI11 takes for the flag NAME with a value: only switches and InlineValue
  // names take one.
  const std::string value = token.text.substr(name.size() + 1);
  const Spec* spec = parser_.Find(name, true);
  if (spec == nullptr) return Unknown(token.text, token.end);
  if (spec->takes == Takes::kTrueOrFalse) {
    if (value != "true" && value != "false") {
      Fail(absl::InvalidArgumentError(absl::StrCat(name, " takes true or false")));
    }
    return GoOn(spec->on_off(value == "true"), token.end);
  }
  GoOn(spec->value(value), token.end);
}

// Hands the command the arguments CLI11 kept as extras before stretch_[upto], in order: positional
// arguments and unknown names (CLI11 reads a name from what starts with '-', as the rules do, once
// the pre-pass has cut the rest).
void ParseRun::TakeExtras(size_t upto) {
  const std::vector<std::string> extras = app_.remaining();
  for (; taken_ < upto; ++taken_) {
    const Token& token = stretch_[taken_];
    if (extras_taken_ >= extras.size() || extras[extras_taken_] != token.text) {
      Fail(absl::InternalError(absl::StrCat("the argument parser lost its place at '", token.text, "'")));
    }
    ++extras_taken_;
    if (!token.text.empty() && token.text[0] == '-') {
      Unknown(token.text, token.end);
    } else {
      Positional(token.text, token.end);
    }
  }
}

void ParseRun::Positional(const std::string& arg, size_t end) {
  if (parser_.positional_) return GoOn(parser_.positional_(arg), end);
  Fail(absl::InvalidArgumentError(parser_.unexpected_argument_ ? parser_.unexpected_argument_(arg)
                                                               : absl::StrCat("unexpected argument ", arg)));
}

void ParseRun::Unknown(const std::string& arg, size_t end) {
  if (parser_.unknown_is_positional_) return Positional(arg, end);
  Fail(absl::InvalidArgumentError(parser_.unknown_option_ ? parser_.unknown_option_(arg)
                                                          : absl::StrCat("unknown option ", arg)));
}

// An action's answer: on, or the end of the parse (stopped after args_[end - 1], or failed).
void ParseRun::GoOn(const Next& next, size_t end) {
  if (!next.status().ok()) Fail(next.status());
  if (next.stop()) {
    parsed_.stopped = true;
    parsed_.end = end;
    throw ParseEnded{};
  }
}

void ParseRun::Fail(absl::Status status) {
  failure_ = std::move(status);
  throw ParseEnded{};
}

absl::StatusOr<ParsedArguments> ParseRun::Outcome() const {
  if (!failure_.ok()) return failure_;
  return parsed_;
}

absl::StatusOr<ParsedArguments> ParseRun::Run() {
  if (parser_.help_first_only_ && first_ < args_.size() && parser_.IsHelpName(args_[first_])) {
    parsed_.help = true;
    parsed_.end = first_ + 1;
    return parsed_;
  }
  try {
    DeclareNames();
  } catch (const CLI::Error& e) {
    return absl::InternalError(absl::StrCat("a command declares a name the argument parser cannot take: ", e.what()));
  }
  size_t from = first_;
  while (true) {
    Cut cut = Cut::kNone;
    const size_t at = ReadStretch(from, &cut);
    if (!ParseStretch()) return Outcome();
    try {
      switch (cut) {
        case Cut::kNone:
          parsed_.end = args_.size();
          return parsed_;
        case Cut::kEndOfOptions:
          parsed_.end = at + 1;
          return parsed_;
        case Cut::kProgram:
          parsed_.end = at;
          return parsed_;
        case Cut::kSeparator: {
          const Spec* spec = parser_.Find("--", false);
          if (spec->takes == Takes::kNothing) {
            GoOn(spec->flag(), at + 1);
          } else {
            Unknown(args_[at], at + 1);
          }
          break;
        }
        case Cut::kUnreadable:
          Unknown(args_[at], at + 1);
          break;
      }
    } catch (const ParseEnded&) {
      return Outcome();
    }
    from = at + 1;
  }
}

absl::StatusOr<ParsedArguments> ArgumentParser::Parse(const Args& args, size_t first) const {
  if (const DeclarationRecorder* recorder = DeclarationRecorder::Active(); recorder != nullptr) recorder->Record(*this);
  return ParseRun(*this, args, first).Run();
}

ArgumentParser::ValueAction KeepOne(std::string* out, std::string too_many) {
  return [out, too_many = std::move(too_many)](const std::string& value) -> Next {
    if (!out->empty()) return absl::InvalidArgumentError(too_many);
    *out = value;
    return absl::OkStatus();
  };
}

ArgumentParser::ValueAction AppendCommaSeparated(std::vector<std::string>* out) {
  return [out](const std::string& value) -> Next {
    for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) out->emplace_back(item);
    return absl::OkStatus();
  };
}

ArgumentParser::ValueAction KeepTextOrJson(std::string* out) {
  return [out](const std::string& v) -> Next {
    if (v != "text" && v != "json") return absl::InvalidArgumentError("--format takes text or json");
    *out = v;
    return absl::OkStatus();
  };
}

ArgumentParser::ValueAction KeepKernelNameStyle(core::KernelNameStyle* out) {
  return [out](const std::string& value) -> Next {
    absl::StatusOr<core::KernelNameStyle> style = core::ParseKernelNameStyle(value);
    if (!style.ok()) return style.status();
    *out = *style;
    return absl::OkStatus();
  };
}

ArgumentParser::Message UnknownOptionOf(std::string command) {
  return [command = std::move(command)](const std::string& arg) {
    return absl::StrCat(command, ": unknown option '", arg, "' (see cuscope ", command, " --help)");
  };
}

std::optional<int> HelpOrMistake(const absl::StatusOr<ParsedArguments>& parsed, absl::string_view usage) {
  if (!parsed.ok()) return PrintError(parsed.status().message());
  if (!parsed->help) return std::nullopt;
  std::fwrite(usage.data(), 1, usage.size(), stdout);
  return 0;
}

int PrintError(absl::string_view message) {
  std::fprintf(stderr, "cuscope: %s\n",
               core::EscapeTextForTerminal(std::string_view(message.data(), message.size())).c_str());
  return 2;
}

}  // namespace cuscope::cli
