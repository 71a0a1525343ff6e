// The Python frame reader's pure parts: CPython's location table decoded on fabricated tables, the
// layouts it knows, and a process without CPython. The reader on a running interpreter is tested in
// tests/python_frames (an embedded CPython).
#include "lib/core/python_stack.h"

#include <vector>

#include "gtest/gtest.h"

namespace cuscope::core {
namespace {

constexpr uint8_t Head(int code, int units) { return static_cast<uint8_t>(0x80 | (code << 3) | (units - 1)); }

// Entries of each form, from line 10: two units with no column (+0), three on the next line
// (one-line form, +1), one with no location, one in the long form (+41, a two-byte varint), two
// back again (-41, no column) and one in the short form.
const std::vector<uint8_t> kTable = {
    Head(13, 2), 0x00,                    // units 0-1: line 10
    Head(11, 3), 4, 9,                    // units 2-4: line 11
    Head(15, 1),                          // unit 5: no line
    Head(14, 1), 0x40 | 18, 0x01, 0, 1, 5,  // unit 6: 82 -> +41: line 52
    Head(13, 2), 0x40 | 19, 0x01,         // units 7-8: 83 -> -41: line 11
    Head(3, 1), 0x21,                     // unit 9: line 11
};

TEST(PythonLineTableTest, EveryFormOfEntry) {
  const auto line = [](int64_t unit) { return LineOfCodeUnit(kTable.data(), kTable.size(), 10, unit); };
  EXPECT_EQ(line(0), 10u);
  EXPECT_EQ(line(1), 10u);
  EXPECT_EQ(line(2), 11u);
  EXPECT_EQ(line(4), 11u);
  EXPECT_EQ(line(5), std::nullopt) << "an instruction with no location";
  EXPECT_EQ(line(6), 52u);
  EXPECT_EQ(line(7), 11u);
  EXPECT_EQ(line(8), 11u);
  EXPECT_EQ(line(9), 11u);
  EXPECT_EQ(line(10), std::nullopt) << "past the table";
  EXPECT_EQ(line(-1), std::nullopt);
}

TEST(PythonLineTableTest, DamagedTablesGiveNoLine) {
  std::vector<uint8_t> truncated(kTable.begin(), kTable.begin() + 8);  // inside the long form's varint
  EXPECT_EQ(LineOfCodeUnit(truncated.data(), truncated.size(), 10, 6), std::nullopt);
  EXPECT_EQ(LineOfCodeUnit(truncated.data(), truncated.size(), 10, 0), 10u) << "entries before the damage still read";
  const std::vector<uint8_t> no_head = {0x05, 0x00};
  EXPECT_EQ(LineOfCodeUnit(no_head.data(), no_head.size(), 10, 0), std::nullopt);
  const std::vector<uint8_t> endless = {Head(13, 1), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f};
  EXPECT_EQ(LineOfCodeUnit(endless.data(), endless.size(), 10, 0), std::nullopt) << "a varint that never ends";
  const std::vector<uint8_t> below_one = {Head(13, 1), 0x15};  // -10 from line 10
  EXPECT_EQ(LineOfCodeUnit(below_one.data(), below_one.size(), 10, 0), std::nullopt);
  EXPECT_EQ(LineOfCodeUnit(nullptr, 0, 10, 0), std::nullopt);
}

TEST(PythonLayoutTest, KnowsThreeElevenAndThreeTwelveOnly) {
  ASSERT_TRUE(CPythonLayoutFor(0x030B07F0).has_value());
  EXPECT_TRUE(CPythonLayoutFor(0x030B07F0)->frame_is_entry.has_value()) << "3.11 marks entry frames";
  ASSERT_TRUE(CPythonLayoutFor(0x030C03F0).has_value());
  EXPECT_TRUE(CPythonLayoutFor(0x030C03F0)->owner_c_stack.has_value()) << "3.12 has entry shim frames";
  EXPECT_FALSE(CPythonLayoutFor(0x030A0CF0).has_value());
  EXPECT_FALSE(CPythonLayoutFor(0x030D00F0).has_value());
}

// Native ids from 1, Python ids from 100.
std::vector<MergedFrame> Native(std::initializer_list<std::pair<uint32_t, bool>> frames) {
  std::vector<MergedFrame> out;
  for (auto [id, eval] : frames) out.push_back({id, eval});
  return out;
}

TEST(MergeStacksTest, EachEvalLoopFrameStandsForItsPythonFrames) {
  // launch <- torch op <- eval(leaf) <- map's C code <- eval(run, <module>) <- main
  const auto native = Native({{1, false}, {2, false}, {3, true}, {4, false}, {5, true}, {6, false}});
  const auto python = Native({{100, true}, {101, false}, {102, true}});
  EXPECT_EQ(MergeStacks(native, python), (std::vector<uint32_t>{1, 2, 100, 4, 101, 102, 6}));
}

TEST(MergeStacksTest, PythonFramesLeftWhenTheNativeStackEndsFollowIt) {
  const auto native = Native({{1, false}, {2, true}, {3, false}});
  const auto python = Native({{100, true}, {101, false}, {102, true}});
  EXPECT_EQ(MergeStacks(native, python), (std::vector<uint32_t>{1, 100, 3, 101, 102}));
  EXPECT_EQ(MergeStacks(Native({{1, false}}), python), (std::vector<uint32_t>{1, 100, 101, 102}))
      << "no eval loop in the native stack at all";
}

// A __del__ run while a frame returns: an eval-loop call with no Python frame of its own between
// two that have some. Its native frame stands for nothing; the frames after it stay in place.
TEST(MergeStacksTest, AnEmptyEvalLoopCallStandsForNothing) {
  // launch <- eval(__del__) <- dealloc <- eval(empty) <- map's C code <- eval(outer, <module>) <- main
  const auto native = Native({{1, false}, {2, true}, {3, false}, {4, true}, {5, false}, {6, true}, {7, false}});
  std::vector<MergedFrame> python = Native({{100, true}, {101, false}, {102, true}});
  python[1].empty_evals_before = 1;
  EXPECT_EQ(MergeStacks(native, python), (std::vector<uint32_t>{1, 100, 3, 5, 101, 102, 7}));
  python[1].empty_evals_before = 0;
  EXPECT_EQ(MergeStacks(native, python), (std::vector<uint32_t>{1, 100, 3, 101, 102, 5, 6, 7}))
      << "without the empty call counted, <module> would sit inside map's C code";
}

TEST(MergeStacksTest, EvalLoopFramesLeftWhenThePythonFramesEndStay) {
  const auto native = Native({{1, false}, {2, true}, {3, true}});
  EXPECT_EQ(MergeStacks(native, Native({{100, true}})), (std::vector<uint32_t>{1, 100, 3}));
  EXPECT_EQ(MergeStacks(native, {}), (std::vector<uint32_t>{1, 2, 3})) << "no Python: the native stack unchanged";
}

TEST(PythonStackReaderTest, AProcessWithoutPythonHasNoReader) {
  const auto reader = PythonStackReader::ForThisProcess();
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::IsNotFound(reader.status())) << reader.status();
}

}  // namespace
}  // namespace cuscope::core
