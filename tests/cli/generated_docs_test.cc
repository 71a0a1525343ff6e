// The completion scripts and the manual page the command generates from its commands'
// declarations: every command and option in them, the bash script read and run by bash, the page
// read by troff.
#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/cli/command_catalog.h"

namespace cuscope::cli {
namespace {

struct Output {
  int exit_code = -1;
  std::string text;  // standard output and error together
};

Output Shell(const std::string& command) {
  Output out;
  FILE* p = ::popen(absl::StrCat(command, " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buffer;
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), p)) > 0;) out.text.append(buffer.data(), n);
  const int status = ::pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// `cuscope completion SHELL`, written to a file of the test's own.
std::string CompletionScript(const std::string& shell) {
  const std::string path = absl::StrCat(::testing::TempDir(), "cuscope_completion_", getpid(), ".", shell);
  const Output out = Shell(absl::StrCat(CUSCOPE_CLI, " completion ", shell, " > ", path));
  EXPECT_EQ(out.exit_code, 0) << out.text;
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the bash script's function offers for the words `line` (the last one being completed).
std::vector<std::string> BashCompletions(const std::string& script, const std::string& line) {
  std::vector<std::string> words = absl::StrSplit(line, ' ');
  std::string quoted;
  for (const std::string& word : words) absl::StrAppend(&quoted, " '", word, "'");
  const Output out =
      Shell(absl::StrCat("bash -c 'source \"$0\"; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _cuscope; ",
                         "printf \"%s\\n\" \"${COMPREPLY[@]}\"' ", script, quoted));
  EXPECT_EQ(out.exit_code, 0) << out.text;
  return absl::StrSplit(out.text, '\n', absl::SkipEmpty());
}

bool HasWord(const std::string& text, const std::string& word) {
  for (absl::string_view token : absl::StrSplit(text, absl::ByAnyChar(" '\n()[]=|;"), absl::SkipEmpty())) {
    if (token == word) return true;
  }
  return false;
}

TEST(GeneratedDocsTest, EveryOptionHasADescription) {
  for (const CommandDescription& command : DescribeCommands()) {
    EXPECT_FALSE(command.usage.empty()) << command.name;
    for (const ArgumentParser::Declaration& option : command.options) {
      EXPECT_FALSE(option.description.empty()) << command.name << " " << option.names.front();
    }
  }
}

TEST(GeneratedDocsTest, TheCatalogKnowsEveryCommandsOptions) {
  // A few that each command's help names, so that a command whose declarations went unrecorded shows.
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"analyze", "--format"}, {"profile", "--force-overwrite"}, {"profile", "--top-down"}, {"log", "--change"},
      {"diff", "--span"},      {"capture", "--snapshot"},        {"stats", "--report"},     {"metrics", "--csv"}};
  const std::vector<CommandDescription> commands = DescribeCommands();
  for (const auto& [name, option] : expected) {
    bool found = false;
    for (const CommandDescription& command : commands) {
      if (command.name != name) continue;
      for (const ArgumentParser::Declaration& declared : command.options) {
        for (const std::string& n : declared.names) found = found || n == option;
      }
    }
    EXPECT_TRUE(found) << name << " " << option;
  }
}

TEST(GeneratedDocsTest, TheBashScriptParsesAndCompletesCommandsAndOptions) {
  const std::string script = CompletionScript("bash");
  const Output syntax = Shell(absl::StrCat("bash -n ", script));
  EXPECT_EQ(syntax.exit_code, 0) << syntax.text;
  EXPECT_EQ(BashCompletions(script, "cuscope an"), std::vector<std::string>{"analyze"});
  EXPECT_EQ(BashCompletions(script, "cuscope analyze --fo"), std::vector<std::string>{"--format"});
  EXPECT_EQ(BashCompletions(script, "cuscope help ex"), std::vector<std::string>{"export"});
  const std::vector<std::string> profile = BashCompletions(script, "cuscope profile --flight-s");
  EXPECT_EQ(profile, (std::vector<std::string>{"--flight-span", "--flight-size", "--flight-step-threshold",
                                               "--flight-step-range"}));
}

TEST(GeneratedDocsTest, TheBashScriptCompletesFileNamesForOtherArguments) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "cuscope_completion_files_", getpid());
  ASSERT_EQ(Shell(absl::StrCat("mkdir -p ", dir, " && touch ", dir, "/run.cuscope")).exit_code, 0);
  const std::string script = CompletionScript("bash");
  EXPECT_EQ(BashCompletions(script, absl::StrCat("cuscope analyze ", dir, "/ru")),
            std::vector<std::string>{absl::StrCat(dir, "/run.cuscope")});
}

TEST(GeneratedDocsTest, EveryDeclaredOptionIsInTheScripts) {
  const std::string bash = ReadFile(CompletionScript("bash"));
  const std::string zsh = ReadFile(CompletionScript("zsh"));
  for (const CommandDescription& command : DescribeCommands()) {
    EXPECT_TRUE(HasWord(bash, command.name)) << command.name;
    EXPECT_NE(zsh.find(absl::StrCat("    ", command.name, ")\n")), std::string::npos) << command.name;
    for (const ArgumentParser::Declaration& option : command.options) {
      for (const std::string& name : option.names) {
        EXPECT_TRUE(HasWord(bash, name)) << command.name << " " << name;
        EXPECT_NE(zsh.find(absl::StrCat("'*", name, "[")), std::string::npos) << command.name << " " << name;
      }
    }
  }
}

TEST(GeneratedDocsTest, TheManPageHasEveryCommandAndOption) {
  const std::string page = ReadFile(CUSCOPE_MAN_PAGE);
  ASSERT_FALSE(page.empty()) << CUSCOPE_MAN_PAGE << " was not built";
  EXPECT_EQ(page, Shell(absl::StrCat(CUSCOPE_CLI, " man")).text) << "the built page is `cuscope man`";
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH ENVIRONMENT",
                              ".SH EXIT STATUS", ".SH SEE ALSO"}) {
    EXPECT_NE(page.find(section), std::string::npos) << section;
  }
  EXPECT_NE(page.find("CUSCOPE_OUTPUT"), std::string::npos);
  EXPECT_NE(page.find(".BR nsys (1)"), std::string::npos);
  for (const CommandDescription& command : DescribeCommands()) {
    EXPECT_NE(page.find(absl::StrCat(".SS ", command.name, "\n")), std::string::npos) << command.name;
    for (const ArgumentParser::Declaration& option : command.options) {
      for (const std::string& name : option.names) {
        // As troff reads an option: every '-' a minus sign.
        const std::string troff = absl::StrCat("\\fB", absl::StrReplaceAll(name, {{"-", "\\-"}}), "\\fR");
        EXPECT_NE(page.find(troff), std::string::npos) << command.name << " " << name;
      }
    }
  }
}

TEST(GeneratedDocsTest, TheManPageRendersWithoutWarnings) {
  std::string renderer;
  if (Shell("command -v groff").exit_code == 0) {
    renderer = "groff -man -Tutf8 -ww -z";
  } else if (Shell("command -v nroff").exit_code == 0) {
    renderer = "nroff -man -ww";
  } else {
    GTEST_SKIP() << "neither groff nor nroff is installed: the page's rendering is not checked";
  }
  const Output out = Shell(absl::StrCat(renderer, " ", CUSCOPE_MAN_PAGE, " > /dev/null"));
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.text, "") << renderer << " warns";
}

}  // namespace
}  // namespace cuscope::cli
