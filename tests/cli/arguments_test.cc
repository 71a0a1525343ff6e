// The shared argument parser: arguments read in the order written, the command's own messages for
// each mistake, and the ways a parse ends early (help, a stop, a program to run).
#include "lib/cli/arguments.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cuscope::cli {
namespace {

// A command with a flag, a value option and one positional argument, recording what it was given.
struct Example {
  bool verbose = false;
  std::vector<std::string> log;  // "NAME=VALUE" per option, in the order the actions ran
  std::string path;
  ArgumentParser parser;

  Example() {
    parser.Flag({"-v", "--verbose"}, [this] {
      verbose = true;
      log.push_back("verbose");
      return absl::OkStatus();
    });
    parser.Option({"--format"}, "--format takes text or json", [this](const std::string& v) {
      if (v != "text" && v != "json") return absl::InvalidArgumentError(absl::StrCat("bad format ", v));
      log.push_back("format=" + v);
      return absl::OkStatus();
    });
    parser.Positional(KeepOne(&path, "one file only"));
  }
};

TEST(ArgumentParserTest, ReadsFlagsOptionsAndPositionalsInTheOrderWritten) {
  Example e;
  auto parsed = e.parser.Parse({"--format", "json", "trace.cuscope", "-v", "--format", "text"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(parsed->end, 6u);
  EXPECT_TRUE(e.verbose);
  EXPECT_EQ(e.path, "trace.cuscope");
  EXPECT_EQ(e.log, (std::vector<std::string>{"format=json", "verbose", "format=text"}));
}

TEST(ArgumentParserTest, AValueIsTheNextArgumentEvenWhenItLooksLikeAnOption) {
  Example e;
  auto parsed = e.parser.Parse({"--format", "-v"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "bad format -v");
  EXPECT_FALSE(e.verbose);
}

TEST(ArgumentParserTest, TheFirstMistakeEndsTheParseWithItsMessage) {
  Example missing;
  auto parsed = missing.parser.Parse({"-v", "--format"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "--format takes text or json");

  Example unknown;
  parsed = unknown.parser.Parse({"--bogus", "-v"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "unknown option --bogus");
  EXPECT_FALSE(unknown.verbose) << "an argument after the mistake was read";

  Example too_many;
  parsed = too_many.parser.Parse({"a", "b"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "one file only");

  Example lone_dash;  // "-" is an option name, and no known one
  parsed = lone_dash.parser.Parse({"-"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "unknown option -");
}

TEST(ArgumentParserTest, TheCommandWordsItsOwnMessages) {
  ArgumentParser parser;
  std::string value;
  parser.Option({"--out"}, "", [&](const std::string& v) {
    value = v;
    return absl::OkStatus();
  });
  parser.UnknownOptionMessage([](const std::string& arg) { return "no such option '" + arg + "'"; });
  parser.MissingValueMessage([](const std::string& arg) { return arg + " wants a value"; });
  parser.UnexpectedArgumentMessage([](const std::string& arg) { return "what is " + arg + "?"; });
  EXPECT_EQ(parser.Parse({"-x"}).status().message(), "no such option '-x'");
  EXPECT_EQ(parser.Parse({"--out"}).status().message(), "--out wants a value");
  EXPECT_EQ(parser.Parse({"file"}).status().message(), "what is file?");
  ASSERT_TRUE(parser.Parse({"--out", "x"}).ok());
  EXPECT_EQ(value, "x");
}

TEST(ArgumentParserTest, HelpEndsTheParseWhereItIsWritten) {
  Example before_mistake;
  auto parsed = before_mistake.parser.Parse({"-v", "--help", "--bogus"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->help);
  EXPECT_EQ(parsed->end, 2u);

  Example after_mistake;
  EXPECT_FALSE(after_mistake.parser.Parse({"--bogus", "-h"}).ok());

  ArgumentParser first_only;
  std::string list;
  first_only.HelpOnlyAsFirstArgument().UnknownOptionsArePositional().Positional(KeepOne(&list, "one LIST only"));
  parsed = first_only.Parse({"-h"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->help);
  parsed = first_only.Parse({"sol", "--help"});
  ASSERT_FALSE(parsed.ok()) << "--help after the first argument is a second LIST";
  EXPECT_EQ(parsed.status().message(), "one LIST only");

  ArgumentParser long_only;
  long_only.HelpNames({"--help"});
  EXPECT_TRUE(long_only.Parse({"--help"})->help);
  EXPECT_FALSE(long_only.Parse({"-h"}).ok());
}

TEST(ArgumentParserTest, AnActionCanEndTheParseWithSuccess) {
  ArgumentParser parser;
  std::vector<std::string> seen;
  parser.Option({"--threshold"}, "", [&](const std::string& v) -> Next {
    seen.push_back(v);
    if (v == "help") return Next::Stop();
    return absl::OkStatus();
  });
  auto parsed = parser.Parse({"--threshold", "a=1", "--threshold", "help", "--bogus"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->stopped);
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(parsed->end, 4u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "help"}));
}

TEST(ArgumentParserTest, OptionsCanEndAtAProgramToRun) {
  ArgumentParser parser;
  bool quiet = false;
  parser.EndOptionsAtFirstPositional().EndOptionsAtDoubleDash();
  parser.Flag({"-q"}, [&] {
    quiet = true;
    return absl::OkStatus();
  });
  auto parsed = parser.Parse({"-q", "./app", "-q", "--bogus"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->end, 1u);
  parsed = parser.Parse({"--", "-q"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->end, 1u);
  EXPECT_EQ(parser.Parse({"-q", ""})->end, 1u) << "an empty argument is not an option";
  EXPECT_EQ(parser.Parse({"-q"})->end, 1u);
  EXPECT_TRUE(quiet);
}

TEST(ArgumentParserTest, EveryLongOptionTakesItsValueInline) {
  std::string out, top;
  bool forced = false;
  ArgumentParser parser;
  parser.Option({"--output", "-o"}, "", [&](const std::string& v) {
    out = v;
    return absl::OkStatus();
  });
  parser.Flag({"--force"}, [&] {
    forced = true;
    return absl::OkStatus();
  });
  parser.InlineValue("--top", [&](const std::string& v) {
    top = v;
    return absl::OkStatus();
  });
  ASSERT_TRUE(parser.Parse({"--output=a=b"}).ok()) << "the value is all after the first '='";
  EXPECT_EQ(out, "a=b");
  ASSERT_TRUE(parser.Parse({"--output="}).ok());
  EXPECT_EQ(out, "");
  ASSERT_TRUE(parser.Parse({"--top=5"}).ok()) << "an InlineValue name takes its value inline";
  EXPECT_EQ(top, "5");
  EXPECT_EQ(parser.Parse({"--top", "5"}).status().message(), "unknown option --top");
  // Short names and flags take no inline value.
  EXPECT_EQ(parser.Parse({"-o=x"}).status().message(), "unknown option -o=x");
  EXPECT_EQ(parser.Parse({"--force=true"}).status().message(), "unknown option --force=true");
  EXPECT_FALSE(forced);
}

TEST(ArgumentParserTest, ASwitchTakesTrueOrFalseAsNsysDoes) {
  std::vector<bool> seen;
  std::vector<std::string> rest;
  ArgumentParser parser;
  parser.Switch({"-f", "--force-overwrite"}, [&](bool on) {
    seen.push_back(on);
    return absl::OkStatus();
  });
  parser.EndOptionsAtFirstPositional();
  const auto parse = [&](Args args) {
    seen.clear();
    absl::StatusOr<ParsedArguments> parsed = parser.Parse(args);
    rest.clear();
    if (parsed.ok()) rest.assign(args.begin() + static_cast<long>(parsed->end), args.end());
    return parsed.status();
  };
  ASSERT_TRUE(parse({"-f", "./app"}).ok());
  EXPECT_EQ(seen, std::vector<bool>{true});
  EXPECT_EQ(rest, (std::vector<std::string>{"./app"})) << "alone, a switch is on and takes nothing";
  ASSERT_TRUE(parse({"-f", "true", "./app"}).ok());
  EXPECT_EQ(seen, std::vector<bool>{true});
  EXPECT_EQ(rest, (std::vector<std::string>{"./app"})) << "`-f true ./app` runs ./app, not true";
  ASSERT_TRUE(parse({"--force-overwrite", "false", "./app"}).ok());
  EXPECT_EQ(seen, std::vector<bool>{false});
  ASSERT_TRUE(parse({"--force-overwrite=false", "--force-overwrite=true", "./app"}).ok());
  EXPECT_EQ(seen, (std::vector<bool>{false, true}));
  EXPECT_EQ(rest, (std::vector<std::string>{"./app"}));
  // Only the exact words: anything else after the switch is the next argument.
  ASSERT_TRUE(parse({"-f", "True", "x"}).ok());
  EXPECT_EQ(seen, std::vector<bool>{true});
  EXPECT_EQ(rest, (std::vector<std::string>{"True", "x"}));
  ASSERT_TRUE(parse({"-f"}).ok()) << "a switch last is on";
  EXPECT_EQ(seen, std::vector<bool>{true});
  EXPECT_EQ(parse({"--force-overwrite=yes"}).message(), "--force-overwrite takes true or false");
  EXPECT_EQ(parse({"--force-overwrite="}).message(), "--force-overwrite takes true or false");
  EXPECT_EQ(parse({"-f=true"}).message(), "unknown option -f=true");
}

TEST(ArgumentParserTest, UnknownOptionsCanBePositional) {
  ArgumentParser parser;
  std::string list;
  parser.UnknownOptionsArePositional().Positional(KeepOne(&list, "one LIST only"));
  ASSERT_TRUE(parser.Parse({"-x"}).ok());
  EXPECT_EQ(list, "-x");
}

TEST(ArgumentParserTest, KeepOneCountsOnlyANonEmptyArgument) {
  std::string path;
  ArgumentParser parser;
  parser.Positional(KeepOne(&path, "one file only"));
  ASSERT_TRUE(parser.Parse({"", "trace"}).ok());
  EXPECT_EQ(path, "trace");
}

TEST(ArgumentParserTest, CommaSeparatedListsAppendAndSkipEmptyItems) {
  std::vector<std::string> reports;
  ArgumentParser parser;
  parser.Option({"-r"}, "", AppendCommaSeparated(&reports));
  ASSERT_TRUE(parser.Parse({"-r", "a,,b", "-r", ",c,"}).ok());
  EXPECT_EQ(reports, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ArgumentParserTest, ParsingCanStartPastTheFirstArguments) {
  Example e;
  auto parsed = e.parser.Parse({"add", "--bogus", "-v"}, 2);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(e.verbose);
  EXPECT_TRUE(e.path.empty());
}

// What CLI11 would read otherwise than the rules: combined or attached short names, a number, "--"
// and an empty inline value. Each is read as the rules say.
TEST(ArgumentParserTest, ShortNamesAreWholeNames) {
  Example combined;
  EXPECT_EQ(combined.parser.Parse({"-vv"}).status().message(), "unknown option -vv");
  EXPECT_FALSE(combined.verbose) << "-vv is not -v -v";
  Example number;
  EXPECT_EQ(number.parser.Parse({"-5"}).status().message(), "unknown option -5");
  Example no_name;
  EXPECT_EQ(no_name.parser.Parse({"--=x"}).status().message(), "unknown option --=x");
  Example in_order;  // a mistake the pre-pass finds still comes after the actions before it
  EXPECT_EQ(in_order.parser.Parse({"--format", "xml", "-vq"}).status().message(), "bad format xml");
}

TEST(ArgumentParserTest, DoubleDashIsANameUnlessItEndsTheOptions) {
  Example e;
  EXPECT_EQ(e.parser.Parse({"--"}).status().message(), "unknown option --");
  ArgumentParser parser;
  int separators = 0;
  std::vector<std::string> seen;
  parser.Flag({"--"}, [&] {
    ++separators;
    return absl::OkStatus();
  });
  parser.Option({"--format"}, "", [&](const std::string& v) {
    seen.push_back(v);
    return absl::OkStatus();
  });
  parser.Positional([&](const std::string& v) {
    seen.push_back(absl::StrCat(separators, ":", v));
    return absl::OkStatus();
  });
  ASSERT_TRUE(parser.Parse({"a", "--", "b", "--format", "--", "c"}).ok());
  EXPECT_EQ(separators, 1) << "the value of --format is not a separator";
  EXPECT_EQ(seen, (std::vector<std::string>{"0:a", "1:b", "--", "1:c"}));
}

TEST(ArgumentParserTest, AnEmptyInlineValueIsAValue) {
  std::vector<std::string> seen;
  ArgumentParser parser;
  parser.Option({"--out"}, "", [&](const std::string& v) {
    seen.push_back(v);
    return absl::OkStatus();
  });
  parser.Positional([&](const std::string& v) {
    seen.push_back("positional " + v);
    return absl::OkStatus();
  });
  ASSERT_TRUE(parser.Parse({"--out=", "file"}).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"", "positional file"}));
}

TEST(ArgumentParserTest, AStopEndsThePositionalArgumentsToo) {
  ArgumentParser parser;
  std::vector<std::string> seen;
  parser.Positional([&](const std::string& v) -> Next {
    seen.push_back(v);
    if (v == "stop") return Next::Stop();
    return absl::OkStatus();
  });
  auto parsed = parser.Parse({"a", "stop", "--bogus", "b"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->stopped);
  EXPECT_EQ(parsed->end, 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "stop"}));
}

TEST(ArgumentParserTest, DeclarationsCarryTheirDescriptions) {
  ArgumentParser parser;
  parser.Flag(
      {"-q", "--quiet"}, [] { return absl::OkStatus(); }, "print nothing");
  parser.Option(
      {"--out"}, "", [](const std::string&) { return absl::OkStatus(); }, "the file");
  parser.Switch({"-f"}, [](bool) { return absl::OkStatus(); });
  parser.Flag({"--"}, [] { return absl::OkStatus(); });
  const std::vector<ArgumentParser::Declaration> declared = parser.Declarations();
  ASSERT_EQ(declared.size(), 3u) << "\"--\" is a separator, not an option";
  EXPECT_EQ(declared[0].names, (std::vector<std::string>{"-q", "--quiet"}));
  EXPECT_EQ(declared[0].description, "print nothing");
  EXPECT_EQ(declared[1].takes, ArgumentParser::Takes::kNextArgument);
  EXPECT_EQ(declared[1].description, "the file");
  EXPECT_EQ(declared[2].takes, ArgumentParser::Takes::kTrueOrFalse);
  EXPECT_EQ(declared[2].description, "");
  EXPECT_FALSE(parser.TakesPositionalArguments());

  int recorded = 0;
  {
    DeclarationRecorder recorder(
        [&](const ArgumentParser& p) { recorded += static_cast<int>(p.Declarations().size()); });
    EXPECT_TRUE(parser.Parse({"-q"}).ok());
  }
  EXPECT_TRUE(parser.Parse({"-q"}).ok());
  EXPECT_EQ(recorded, 3) << "recorded while the recorder lived, and only then";
}

}  // namespace
}  // namespace cuscope::cli
