// Launch stacks in a trace: round trip and damage.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "lib/core/trace_format.h"

namespace cuscope::core {
namespace {

// A trace file's bytes: a header, then the chunk `b` built.
std::string TraceBytesOf(ChunkBuilder& b) {
  std::string bytes(kTraceMagic);
  v1::Block header;
  header.mutable_header()->set_format_version(kFormatVersion);
  AppendFramedBlock(header, &bytes);
  v1::Block chunk;
  b.TakeChunk(chunk.mutable_chunk());
  AppendFramedBlock(chunk, &bytes);
  return bytes;
}

// Frames and stacks are interned once and read back; a launch names its stack.
TEST(LaunchStackTraceTest, RoundTrip) {
  ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("f"); });
  const uint32_t main_frame = b.InternFrame("/usr/bin/app", 0x1234, "_Z4stepv", 8);
  const uint32_t lib_frame = b.InternFrame("/usr/lib/libcudart.so.13", 0x99, "", 0);
  EXPECT_EQ(b.InternFrame("/usr/bin/app", 0x1234, "_Z4stepv", 8), main_frame);
  const uint32_t stack = b.InternStack({lib_frame, main_frame});
  EXPECT_EQ(b.InternStack({lib_frame, main_frame}), stack);
  EXPECT_NE(b.InternStack({main_frame}), stack);
  b.AddLaunchStack(42, stack);
  auto t = LoadTraceFromBytes(TraceBytesOf(b));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->truncated());
  ASSERT_EQ(t->launch_stacks.size(), 1u);
  EXPECT_EQ(t->launch_stacks[0].correlation_id, 42u);
  const v1::CallStack& s = t->dict.stack(t->launch_stacks[0].stack);
  ASSERT_EQ(s.frames_size(), 2);
  const v1::StackFrame& f = t->dict.frame(s.frames(1));
  EXPECT_EQ(t->dict.str(f.module()), "/usr/bin/app");
  EXPECT_EQ(f.module_offset(), 0x1234u);
  EXPECT_EQ(t->dict.str(f.function()), "_Z4stepv");
  EXPECT_EQ(f.function_offset(), 8u);
  EXPECT_EQ(t->dict.frame(s.frames(0)).function(), 0u);
  EXPECT_EQ(t->dict.stack_count(), 2u);
}

// Python frames: file, qualified name and line, interned by all three, numbered with the native
// frames in one sequence, read back as Python frames.
TEST(LaunchStackTraceTest, PythonFramesRoundTrip) {
  ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("f"); });
  const uint32_t native = b.InternFrame("/usr/bin/python3.12", 0x77, "_PyEval_EvalFrameDefault", 3);
  const uint32_t forward = b.InternPythonFrame("/home/u/train.py", "Model.forward", 12);
  EXPECT_EQ(b.InternPythonFrame("/home/u/train.py", "Model.forward", 12), forward);
  const uint32_t other_line = b.InternPythonFrame("/home/u/train.py", "Model.forward", 13);
  EXPECT_NE(other_line, forward);
  EXPECT_NE(forward, native);
  b.AddLaunchStack(1, b.InternStack({forward, other_line, native}));
  auto t = LoadTraceFromBytes(TraceBytesOf(b));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->corruption.has_value()) << t->corruption->message();
  const v1::CallStack& s = t->dict.stack(t->launch_stacks[0].stack);
  ASSERT_EQ(s.frames_size(), 3);
  const v1::StackFrame& f = t->dict.frame(s.frames(0));
  EXPECT_EQ(t->dict.str(f.module()), "/home/u/train.py") << "what a reader without source_file shows";
  EXPECT_EQ(t->dict.str(f.source_file()), "/home/u/train.py");
  EXPECT_EQ(t->dict.str(f.function()), "Model.forward");
  EXPECT_EQ(f.line(), 12u);
  EXPECT_EQ(t->dict.frame(s.frames(2)).source_file(), 0u);
}

// Damage: a stack naming a frame never defined, a frame naming an undefined string, an empty
// stack, a launch naming an undefined stack.
TEST(LaunchStackTraceTest, UndefinedIdsAreDamage) {
  const auto load = [](const std::function<void(v1::Chunk*)>& fill) {
    std::string bytes(kTraceMagic);
    v1::Block header;
    header.mutable_header()->set_format_version(kFormatVersion);
    AppendFramedBlock(header, &bytes);
    v1::Block chunk;
    auto* s = chunk.mutable_chunk()->add_strings();
    s->set_id(1);
    s->set_value("/bin/app");
    fill(chunk.mutable_chunk());
    AppendFramedBlock(chunk, &bytes);
    return *LoadTraceFromBytes(bytes);
  };
  const auto frame = [](v1::Chunk* c, uint32_t id, uint32_t module, uint32_t function) {
    auto* f = c->add_stack_frames();
    f->set_id(id);
    f->set_module(module);
    f->set_function(function);
  };
  Trace t = load([&](v1::Chunk* c) {
    frame(c, 1, 1, 0);
    auto* s = c->add_call_stacks();
    s->set_id(1);
    s->add_frames(2);
  });
  ASSERT_TRUE(t.corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), "undefined frame 2")) << t.corruption->message();
  t = load([&](v1::Chunk* c) { frame(c, 1, 7, 0); });
  ASSERT_TRUE(t.corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), "undefined string")) << t.corruption->message();
  t = load([&](v1::Chunk* c) { frame(c, 1, 0, 0); });
  ASSERT_TRUE(t.corruption.has_value()) << "a frame without a module";
  // A Python frame names its file (as its module too); a file that is not defined is damage.
  t = load([&](v1::Chunk* c) {
    frame(c, 1, 1, 1);
    c->mutable_stack_frames(0)->set_source_file(1);
  });
  EXPECT_FALSE(t.corruption.has_value()) << t.corruption->message();
  t = load([&](v1::Chunk* c) {
    frame(c, 1, 1, 1);
    c->mutable_stack_frames(0)->set_source_file(9);
  });
  ASSERT_TRUE(t.corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), "undefined string")) << t.corruption->message();
  t = load([&](v1::Chunk* c) { c->add_call_stacks()->set_id(1); });
  ASSERT_TRUE(t.corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), "empty")) << t.corruption->message();
  for (const auto& stack_and_original : std::vector<std::pair<uint32_t, uint64_t>>{{0, 0}, {1, 5}, {9, 0}}) {
    // Plain variables, not a structured binding: clang 14 (the sanitized build) captures none.
    const uint32_t stack = stack_and_original.first;
    const uint64_t original = stack_and_original.second;
    t = load([&](v1::Chunk* c) {
      frame(c, 1, 1, 0);
      auto* s = c->add_call_stacks();
      s->set_id(1);
      s->add_frames(1);
      auto* g = c->add_graph_node_stacks();
      g->set_node_id(7);
      g->set_stack(stack);
      g->set_original_node_id(original);
    });
    ASSERT_TRUE(t.corruption.has_value()) << stack << " " << original;
    EXPECT_TRUE(absl::StrContains(t.corruption->message(), "graph node 7")) << t.corruption->message();
  }
  t = load([&](v1::Chunk* c) {
    auto* l = c->add_launch_stacks();
    l->set_correlation_id(1);
    l->set_stack(3);
  });
  ASSERT_TRUE(t.corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), "undefined call stack 3")) << t.corruption->message();
}

}  // namespace
}  // namespace cuscope::core
