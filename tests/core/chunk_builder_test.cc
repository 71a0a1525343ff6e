#include "lib/core/chunk_builder.h"

#include <gtest/gtest.h>

#include "lib/core/dictionary.h"
#include "lib/core/trace_reader.h"
#include "tests/core/test_traces.h"

namespace cuscope::core {
namespace {

using testing::Api;
using testing::FakeApiName;
using testing::Kernel;

TEST(ChunkBuilderTest, InternsRepeatedLaunchConfigurationsOnce) {
  ChunkBuilder b(FakeApiName);
  for (int i = 0; i < 100; ++i) b.Add(Kernel(1000 + i * 10, 5, 1 + i, "k_small"));
  b.Add(Kernel(5000, 5, 200, "k_small", /*grid=*/8));  // same name, other grid: a new signature
  v1::Chunk c;
  b.TakeChunk(&c);
  EXPECT_EQ(c.kernel_signatures_size(), 2);
  EXPECT_EQ(c.strings_size(), 1);
  EXPECT_EQ(c.kernels().duration_size(), 101);
  // Optional columns stay empty when every row would be zero.
  EXPECT_TRUE(c.kernels().graph_id().empty());
  EXPECT_TRUE(c.kernels().flags().empty());
}

TEST(ChunkBuilderTest, DefinitionsAreNotRepeatedInLaterChunks) {
  ChunkBuilder b(FakeApiName);
  b.Add(Kernel(1000, 5, 1, "k"));
  b.Add(Api(990, 8, 1, 211));
  v1::Chunk first, second;
  b.TakeChunk(&first);
  b.Add(Kernel(2000, 5, 2, "k"));
  b.Add(Api(1990, 8, 2, 211));
  b.TakeChunk(&second);
  EXPECT_EQ(first.kernel_signatures_size(), 1);
  EXPECT_EQ(first.api_functions_size(), 1);
  EXPECT_EQ(first.threads_size(), 1);
  EXPECT_EQ(second.kernel_signatures_size(), 0);
  EXPECT_EQ(second.api_functions_size(), 0);
  EXPECT_EQ(second.strings_size(), 0);
  EXPECT_EQ(second.sequence(), first.sequence() + 1);
}

TEST(ChunkBuilderTest, OptionalColumnIsBackFilledWhenFirstNonZeroArrives) {
  ChunkBuilder b(FakeApiName);
  b.Add(Kernel(1000, 5, 1, "k"));
  b.Add(Kernel(1010, 5, 2, "k"));
  KernelActivity g = Kernel(1020, 5, 3, "k");
  g.graph_id = 9;
  g.graph_node_id = 77;
  b.Add(g);
  v1::Chunk c;
  b.TakeChunk(&c);
  ASSERT_EQ(c.kernels().graph_id_size(), 3);
  EXPECT_EQ(c.kernels().graph_id(0), 0u);
  EXPECT_EQ(c.kernels().graph_id(2), 9u);
  EXPECT_EQ(c.kernels().graph_node_id(2), 77u);
}

TEST(ChunkBuilderTest, ApiNameResolverIsAskedOncePerFunction) {
  int calls = 0;
  ChunkBuilder b([&calls](v1::ApiDomain d, uint32_t cbid) {
    ++calls;
    return FakeApiName(d, cbid);
  });
  for (int i = 0; i < 10; ++i) b.Add(Api(100 + i, 1, i + 1, 211));
  b.Add(Api(200, 1, 50, 212));
  EXPECT_EQ(calls, 2);
}

TEST(ChunkBuilderTest, DecodedChunkRestoresAbsoluteValues) {
  ChunkBuilder b(FakeApiName);
  // Out-of-order starts and decreasing correlation ids must survive the delta encoding.
  b.Add(Kernel(5000, 100, 30, "late"));
  b.Add(Kernel(4000, 200, 10, "early"));
  b.Add(Api(3900, 50, 10, 211, 7));
  MemcpyRecord m;
  m.start = 4500;
  m.end = 4600;
  m.bytes = 1 << 20;
  m.copy_kind = v1::COPY_KIND_HTOD;
  m.src_kind = v1::MEMORY_KIND_PAGEABLE;
  m.dst_kind = v1::MEMORY_KIND_DEVICE;
  m.correlation_id = 11;
  b.Add(m);
  v1::Chunk c;
  b.TakeChunk(&c);
  Dictionary dict;
  ASSERT_TRUE(dict.Absorb(c).ok());
  DecodedChunk d;
  ASSERT_TRUE(DecodeChunk(c, dict, &d).ok());
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].start, 5000u);
  EXPECT_EQ(d.kernels[0].end, 5100u);
  EXPECT_EQ(d.kernels[0].correlation_id, 30u);
  EXPECT_EQ(d.kernels[1].start, 4000u);
  EXPECT_EQ(d.kernels[1].correlation_id, 10u);
  EXPECT_EQ(dict.kernel_name(d.kernels[1].signature), "early");
  ASSERT_EQ(d.api_calls.size(), 1u);
  EXPECT_EQ(d.api_calls[0].start, 3900u);
  EXPECT_EQ(dict.function_name(d.api_calls[0].function), "cudaFunc211");
  EXPECT_EQ(dict.thread(d.api_calls[0].thread).tid(), 7u);
  ASSERT_EQ(d.memcpys.size(), 1u);
  EXPECT_EQ(d.memcpys[0].start, 4500u);
  EXPECT_EQ(d.memcpys[0].src_kind, v1::MEMORY_KIND_PAGEABLE);
}

TEST(ChunkBuilderTest, KernelRowsCostFewBytesInALaunchHeavyChunk) {
  // The trace-format contract: at most 32 bytes per kernel record on average in a launch-heavy
  // trace. Launches 1-2 us apart, a handful of distinct kernels, consecutive correlation ids.
  ChunkBuilder b(FakeApiName);
  const char* names[] = {"elementwise_add", "elementwise_mul", "reduce_sum", "gemm_128x128"};
  uint64_t t = 1'700'000'000'000'000'000ull;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    t += 1500 + (i % 7) * 37;
    b.Add(Kernel(t, 700 + (i % 13) * 11, 1000 + 2 * i, names[i % 4], 64 + (i % 4), 256, 7 + (i % 2)));
  }
  v1::Chunk c;
  b.TakeChunk(&c);
  const double per_kernel = static_cast<double>(c.kernels().ByteSizeLong()) / n;
  EXPECT_LE(per_kernel, 32.0);
  RecordProperty("bytes_per_kernel_row", std::to_string(per_kernel));
}

}  // namespace
}  // namespace cuscope::core
