#include "lib/cli/arguments.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

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

ArgumentParser& ArgumentParser::Flag(std::vector<std::string> names, FlagAction action) {
  specs_.push_back(Spec{std::move(names), Takes::kNothing, "", std::move(action), nullptr, nullptr});
  return *this;
}

ArgumentParser& ArgumentParser::Option(std::vector<std::string> names, std::string missing_value,
                                       ValueAction action) {
  specs_.push_back(
      Spec{std::move(names), Takes::kNextArgument, std::move(missing_value), nullptr, std::move(action), nullptr});
  return *this;
}

ArgumentParser& ArgumentParser::Switch(std::vector<std::string> names, SwitchAction action) {
  specs_.push_back(Spec{std::move(names), Takes::kTrueOrFalse, "", nullptr, nullptr, std::move(action)});
  return *this;
}

ArgumentParser& ArgumentParser::InlineValue(std::string name, ValueAction action) {
  specs_.push_back(Spec{{std::move(name)}, Takes::kInlineValueOnly, "", nullptr, std::move(action), nullptr});
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

bool ArgumentParser::IsHelp(const std::string& arg, size_t index, size_t first) const {
  if (help_first_only_ && index != first) return false;
  return std::find(help_names_.begin(), help_names_.end(), arg) != help_names_.end();
}

absl::StatusOr<ParsedArguments> ArgumentParser::Parse(const Args& args, size_t first) const {
  ParsedArguments parsed;
  // Takes an action's answer: false when the parse ends here (stopped or failed).
  absl::Status failure;
  const auto go_on = [&](const Next& next) {
    if (!next.status().ok()) {
      failure = next.status();
      return false;
    }
    parsed.stopped = next.stop();
    return !next.stop();
  };
  const auto positional = [&](const std::string& arg) {
    if (positional_) return go_on(positional_(arg));
    failure = absl::InvalidArgumentError(unexpected_argument_ ? unexpected_argument_(arg)
                                                              : absl::StrCat("unexpected argument ", arg));
    return false;
  };
  size_t i = first;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (end_at_double_dash_ && arg == "--") {
      parsed.end = i + 1;
      return parsed;
    }
    if (arg.empty() || arg[0] != '-') {
      if (end_at_positional_) {
        parsed.end = i;
        return parsed;
      }
      if (!positional(arg)) break;
      continue;
    }
    if (IsHelp(arg, i, first)) {
      parsed.help = true;
      parsed.end = i + 1;
      return parsed;
    }
    if (const Spec* spec = Find(arg, false); spec != nullptr) {
      if (spec->takes == Takes::kNothing) {
        if (!go_on(spec->flag())) break;
        continue;
      }
      if (spec->takes == Takes::kTrueOrFalse) {
        const bool value_follows = i + 1 < args.size() && (args[i + 1] == "true" || args[i + 1] == "false");
        const bool on = !value_follows || args[++i] == "true";
        if (!go_on(spec->on_off(on))) break;
        continue;
      }
      if (i + 1 >= args.size()) {
        failure = absl::InvalidArgumentError(!spec->missing_value.empty() ? spec->missing_value
                                             : missing_value_           ? missing_value_(arg)
                                                                        : absl::StrCat("option ", arg, " needs a value"));
        break;
      }
      if (!go_on(spec->value(args[++i]))) break;
      continue;
    }
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      if (const Spec* spec = Find(absl::string_view(arg).substr(0, eq), true); spec != nullptr) {
        const std::string value = arg.substr(eq + 1);
        if (spec->takes == Takes::kTrueOrFalse) {
          if (value != "true" && value != "false") {
            failure = absl::InvalidArgumentError(absl::StrCat(arg.substr(0, eq), " takes true or false"));
            break;
          }
          if (!go_on(spec->on_off(value == "true"))) break;
          continue;
        }
        if (!go_on(spec->value(value))) break;
        continue;
      }
    }
    if (unknown_is_positional_) {
      if (!positional(arg)) break;
      continue;
    }
    failure = absl::InvalidArgumentError(unknown_option_ ? unknown_option_(arg) : absl::StrCat("unknown option ", arg));
    break;
  }
  if (!failure.ok()) return failure;
  // Stopped by an action at args[i] (its name or its value), or every argument read.
  parsed.end = parsed.stopped ? i + 1 : args.size();
  return parsed;
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
