// Queued call stacks into the trace's chunk: resolved, interned once, profiler frames left out.
#include "lib/cupti/stack_interner.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace cuscope::cupti {
namespace {

std::string NoName(v1::ApiDomain, uint32_t) { return ""; }

// A frame of this test program, as a callback's stack would hold its caller's return address.
__attribute__((noinline)) uintptr_t AReturnAddressHere() {
  return reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}

TEST(IsProfilerModuleTest, NamesCuscopesAndCuptisLibrariesWhereverTheyLie) {
  EXPECT_TRUE(IsProfilerModule("/opt/cuscope/lib/libcuscope.so"));
  EXPECT_TRUE(IsProfilerModule("libcuscope.so.1"));
  EXPECT_TRUE(IsProfilerModule("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_FALSE(IsProfilerModule("/usr/lib/libcudart.so.13"));
  EXPECT_FALSE(IsProfilerModule("/home/me/libcuscope_helpers.so/program"));  // a directory of that name
  EXPECT_FALSE(IsProfilerModule(""));
}

TEST(StackInternerTest, ALaunchStackIsInternedOnceAndNamedByItsLaunch) {
  core::ChunkBuilder builder(NoName);
  StackInterner interner(builder);
  QueuedStack launch;
  launch.correlation_id = 17;
  launch.return_addresses = {AReturnAddressHere()};
  QueuedStack again = launch;
  again.correlation_id = 18;
  interner.Add({launch, again});
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  ASSERT_EQ(chunk.launch_stacks_size(), 2);
  EXPECT_EQ(chunk.launch_stacks(0).correlation_id(), 17u);
  EXPECT_EQ(chunk.launch_stacks(1).correlation_id(), 18u);
  EXPECT_NE(chunk.launch_stacks(0).stack(), 0u);
  EXPECT_EQ(chunk.launch_stacks(0).stack(), chunk.launch_stacks(1).stack());  // one stack, defined once
  EXPECT_EQ(chunk.call_stacks_size(), 1);
  EXPECT_EQ(chunk.stack_frames_size(), 1);
  EXPECT_EQ(interner.resolved_addresses(), 1u);
}

TEST(StackInternerTest, GraphNodesKeepTheirCreationAndClonesTheirOriginal) {
  core::ChunkBuilder builder(NoName);
  StackInterner interner(builder);
  QueuedStack created;
  created.graph_node_id = 5;
  created.created_ns = 1234;
  created.tid = 99;
  created.return_addresses = {AReturnAddressHere()};
  QueuedStack clone;
  clone.graph_node_id = 6;
  clone.original_node_id = 5;
  interner.Add({created, clone});
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  ASSERT_EQ(chunk.graph_node_stacks_size(), 2);
  EXPECT_EQ(chunk.graph_node_stacks(0).node_id(), 5u);
  EXPECT_NE(chunk.graph_node_stacks(0).stack(), 0u);
  EXPECT_EQ(chunk.graph_node_stacks(0).created_ns(), 1234u);
  EXPECT_NE(chunk.graph_node_stacks(0).thread(), 0u);
  EXPECT_EQ(chunk.graph_node_stacks(1).node_id(), 6u);
  EXPECT_EQ(chunk.graph_node_stacks(1).original_node_id(), 5u);
  EXPECT_EQ(chunk.graph_node_stacks(1).stack(), 0u);
}

TEST(StackInternerTest, AStackOfNoFramesAddsNothing) {
  core::ChunkBuilder builder(NoName);
  StackInterner interner(builder);
  QueuedStack empty;
  empty.correlation_id = 3;
  interner.Add({empty});
  EXPECT_EQ(builder.pending_records(), 0u);
}

}  // namespace
}  // namespace cuscope::cupti
