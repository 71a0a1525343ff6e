#include "lib/core/json_string.h"

#include <string>

#include "gtest/gtest.h"

namespace cuscope::core {
namespace {

std::string Minimal(std::string_view s) {
  std::string out;
  AppendJsonString(s, JsonEscaping::kMinimal, &out);
  return out;
}

TEST(JsonStringTest, EscapesWhatJsonAndHtmlNeed) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(JsonString(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  // Never a literal '<', '>' or '&': the text can neither end a <script> element nor open a comment.
  EXPECT_EQ(JsonString("</script><!--&"), "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
  EXPECT_EQ(JsonString("\xe2\x80\xa8|\xe2\x80\xa9"), "\"\\u2028|\\u2029\"");
}

TEST(JsonStringTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonString("µs · ×"), "\"µs · ×\"");
  EXPECT_EQ(JsonString("\xf0\x9f\x9a\x80"), "\"\xf0\x9f\x9a\x80\"");  // 4-byte sequence
  EXPECT_EQ(JsonString("a\xff"
                       "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(JsonString("\xc3"), "\"\\ufffd\"");                        // cut sequence
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  // A sequence cut short is one replacement (its maximal invalid part), then what follows as is.
  EXPECT_EQ(JsonString("\xe2\x80x"), "\"\\ufffdx\"");
  EXPECT_EQ(JsonString("\xf0\x9f\x9a"), "\"\\ufffd\"");
}

TEST(JsonStringTest, MinimalEscapesOnlyWhatJsonRequires) {
  EXPECT_EQ(Minimal("plain"), "\"plain\"");
  EXPECT_EQ(Minimal("a\"b\\c"), "\"a\\\"b\\\\c\"");
  // JSON's short escapes where it has them, the other control characters as \u00XX; DEL is not a
  // JSON control character.
  EXPECT_EQ(Minimal("line\nnext\ttab\r\b\f\x1f\x7f"), "\"line\\nnext\\ttab\\r\\b\\f\\u001f\x7f\"");
  EXPECT_EQ(Minimal(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  EXPECT_EQ(Minimal("</script>&"), "\"</script>&\"");
  EXPECT_EQ(Minimal("\xe2\x80\xa8"), "\"\xe2\x80\xa8\"");
}

// Both styles treat UTF-8 alike: where a string has nothing else to escape, they agree.
TEST(JsonStringTest, MinimalHandlesUtf8AsScriptSafeDoes) {
  for (const std::string_view s : {"µs · ×", "\xf0\x9f\x9a\x80", "a\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80"}) {
    EXPECT_EQ(Minimal(s), JsonString(s)) << s;
  }
  EXPECT_EQ(Minimal("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // above U+10FFFF
}

std::string TerminalSafe(std::string_view s) {
  std::string out;
  AppendJsonString(s, JsonEscaping::kTerminalSafe, &out);
  return out;
}

// Printed on a terminal, the JSON cannot drive it: C0 and C1 controls and DEL are escapes, the
// characters a page would escape are kept, and so are line breaks in their short form.
TEST(JsonStringTest, TerminalSafeEscapesEveryControlAndKeepsMarkup) {
  EXPECT_EQ(TerminalSafe("\x1b[31mred\x7f"), "\"\\u001b[31mred\\u007f\"");
  EXPECT_EQ(TerminalSafe("x\xc2\x9b" "2Jy\xc2\x85"), "\"x\\u009b2Jy\\u0085\"");
  EXPECT_EQ(TerminalSafe("a\tb\nc\r"), "\"a\\tb\\nc\\r\"");
  EXPECT_EQ(TerminalSafe("vector<float>&"), "\"vector<float>&\"");
  // U+00A0, just past the C1 range, and other valid UTF-8 are kept; invalid bytes are replaced.
  EXPECT_EQ(TerminalSafe("\xc2\xa0\xc2\xb5s"), "\"\xc2\xa0\xc2\xb5s\"");
  EXPECT_EQ(TerminalSafe("a\xff" "b\xc2"), "\"a\\ufffdb\\ufffd\"");
}

TEST(JsonStringTest, AppendsAfterWhatIsThere) {
  std::string out = "[";
  AppendJsonString("x", JsonEscaping::kScriptSafe, &out);
  AppendJsonString("y", JsonEscaping::kMinimal, &out);
  EXPECT_EQ(out, "[\"x\"\"y\"");
}

}  // namespace
}  // namespace cuscope::core
