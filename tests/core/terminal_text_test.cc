#include "lib/core/terminal_text.h"

#include <string>

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

TEST(TerminalTextTest, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(EscapeForTerminal("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(EscapeForTerminal("tab\there\nnl\r\x07"), "tab\\x09here\\x0anl\\x0d\\x07");
  EXPECT_EQ(EscapeForTerminal(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeForTerminal("del\x7f"), "del\\x7f");
}

TEST(TerminalTextTest, C1ControlsAndBytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(EscapeForTerminal("csi\xc2\x9b" "2J"), "csi\\u009b2J");
  EXPECT_EQ(EscapeForTerminal("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");
  EXPECT_EQ(EscapeForTerminal("lone\x9b"), "lone\\x9b");
  EXPECT_EQ(EscapeForTerminal("cut\xe2\x82"), "cut\\xe2\\x82");
  EXPECT_EQ(EscapeForTerminal("overlong\xc0\xaf"), "overlong\\xc0\\xaf");
  EXPECT_EQ(EscapeForTerminal("surrogate\xed\xa0\x80"), "surrogate\\xed\\xa0\\x80");
  EXPECT_EQ(EscapeForTerminal("\xff"), "\\xff");
}

TEST(TerminalTextTest, PrintableTextIsLeftAlone) {
  const std::string text = "_Z4gemmPf caf\xc3\xa9 \xc2\xa0nbsp \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x94\xa5 <a> \\x1b";
  EXPECT_EQ(EscapeForTerminal(text), text);
  EXPECT_EQ(EscapeForTerminal(""), "");
}

TEST(TerminalTextTest, WholeTextKeepsItsLineBreaksOnly) {
  EXPECT_EQ(EscapeTextForTerminal("line 1\nline\x1b[31m 2\t\n"), "line 1\nline\\x1b[31m 2\\x09\n");
}

}  // namespace
}  // namespace cuscope::core
