// The Python frame reader's pure parts: CPython's location table decoded on fabricated tables, the
// layouts it knows, 3.13's published offsets checked against its layout, and a process without
// CPython. The reader on a running interpreter is tested in
// tests/python_frames (an embedded CPython).
#include "lib/process/python_stack.h"

#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cuscope::process {
namespace {

using ::testing::HasSubstr;

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

TEST(PythonLayoutTest, KnowsThreeElevenToThreeThirteenOnly) {
  ASSERT_TRUE(CPythonLayoutFor(0x030B07F0).has_value());
  EXPECT_TRUE(CPythonLayoutFor(0x030B07F0)->frame_is_entry.has_value()) << "3.11 marks entry frames";
  EXPECT_TRUE(CPythonLayoutFor(0x030B07F0)->thread_cframe.has_value());
  ASSERT_TRUE(CPythonLayoutFor(0x030C03F0).has_value());
  EXPECT_TRUE(CPythonLayoutFor(0x030C03F0)->owner_c_stack.has_value()) << "3.12 has entry shim frames";
  ASSERT_TRUE(CPythonLayoutFor(0x030D00F0).has_value());
  EXPECT_TRUE(CPythonLayoutFor(0x030D00F0)->owner_c_stack.has_value()) << "3.13 keeps the shim frames";
  EXPECT_FALSE(CPythonLayoutFor(0x030D00F0)->thread_cframe.has_value()) << "3.13 has no _PyCFrame";
  EXPECT_FALSE(CPythonLayoutFor(0x030A0CF0).has_value());
  EXPECT_FALSE(CPythonLayoutFor(0x030E00A0).has_value());
}

// A 3.13 _Py_DebugOffsets as a release build of 3.13.0 publishes it (584 bytes): the cookie, the
// version, free_threaded, then the offsets the walk reads at their places in the struct.
std::vector<uint8_t> DebugOffsets313(uint64_t version = 0x030D00F0, uint64_t free_threaded = 0) {
  std::vector<uint8_t> d(584, 0);
  const auto put = [&d](size_t at, uint64_t value) { std::memcpy(d.data() + at, &value, sizeof(value)); };
  std::memcpy(d.data(), "xdebugpy", 8);
  put(8, version);
  put(16, free_threaded);
  const CPythonLayout l = *CPythonLayoutFor(0x030D00F0);
  put(184, l.current_frame);
  put(232, l.frame_previous);
  put(240, l.frame_code);
  put(248, l.frame_prev_instr);
  put(264, l.frame_owner);
  put(280, l.code_filename);
  put(296, l.code_qualname);
  put(304, l.code_linetable);
  put(312, l.code_first_line);
  put(344, l.code_bytecode);
  put(360, 8);   // ob_type
  put(520, 16);  // bytes ob_size
  put(528, 32);  // bytes ob_sval
  put(544, 32);  // unicode state
  put(552, 16);  // unicode length
  put(560, l.ascii_header);
  return d;
}

TEST(PythonLayoutTest, ThreeThirteensPublishedOffsetsConfirmTheLayout) {
  const CPythonLayout l = *CPythonLayoutFor(0x030D00F0);
  EXPECT_TRUE(CheckDebugOffsets313(DebugOffsets313().data(), 0x030D00F0, l).ok());
  EXPECT_TRUE(CheckDebugOffsets313(DebugOffsets313(0x030D05F0).data(), 0x030D00F0, l).ok()) << "a micro version";
}

TEST(PythonLayoutTest, ThreeThirteenIsRefusedWhenItsOffsetsDiffer) {
  const CPythonLayout l = *CPythonLayoutFor(0x030D00F0);
  EXPECT_TRUE(absl::IsUnimplemented(CheckDebugOffsets313(nullptr, 0x030D00F0, l)));
  std::vector<uint8_t> no_cookie = DebugOffsets313();
  no_cookie[0] = 'X';
  EXPECT_THAT(CheckDebugOffsets313(no_cookie.data(), 0x030D00F0, l).message(), HasSubstr("no debugger offsets"));
  EXPECT_THAT(CheckDebugOffsets313(DebugOffsets313(0x030C00F0).data(), 0x030D00F0, l).message(),
              HasSubstr("of CPython 3.12, the process runs 3.13"));
  EXPECT_THAT(CheckDebugOffsets313(DebugOffsets313(0x030D00F0, 1).data(), 0x030D00F0, l).message(),
              HasSubstr("free-threaded"));
  // A free-threaded object header moves ob_type; a build with another frame moves instr_ptr.
  std::vector<uint8_t> moved = DebugOffsets313();
  const uint64_t instr_ptr = 64;
  std::memcpy(moved.data() + 248, &instr_ptr, sizeof(instr_ptr));
  EXPECT_THAT(CheckDebugOffsets313(moved.data(), 0x030D00F0, l).message(),
              HasSubstr("interpreter_frame.instr_ptr at 64, not 56"));
  std::vector<uint8_t> header = DebugOffsets313();
  const uint64_t ob_type = 24;
  std::memcpy(header.data() + 360, &ob_type, sizeof(ob_type));
  EXPECT_THAT(CheckDebugOffsets313(header.data(), 0x030D00F0, l).message(), HasSubstr("pyobject.ob_type"));
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
}  // namespace cuscope::process
