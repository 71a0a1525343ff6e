// The flight ring: what it keeps (the latest chunks within the span and the byte budget) and that a
// snapshot reads back as a trace whose names all resolve, however many chunks were dropped.
#include "lib/core/flight_ring.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "tests/core/test_traces.h"

namespace cuscope::core {
namespace {

using testing::Api;
using testing::FakeApiName;
using testing::Kernel;

constexpr uint64_t kSecond = 1'000'000'000ull;

// Chunk i holds kernel "k<i>" (a name first used there), a kernel "common" (first used in chunk 0),
// and a call from thread 100 + i % 3; chunk i is taken at second i.
class FlightRingTest : public ::testing::Test {
 protected:
  FlightRingTest() : builder_(FakeApiName) {}

  // `learn_only`: the ring sees the chunks' definitions but keeps no chunk (monitor mode outside a
  // capture).
  void AddChunks(FlightRing& ring, int from, int to, bool learn_only = false) {
    for (int i = from; i < to; ++i) {
      names_.push_back(absl::StrCat("k", i));
      const uint64_t t = static_cast<uint64_t>(i) * kSecond;
      builder_.Add(Kernel(t, 1000, 2 * i + 1, names_.back().c_str(), 1 + i));
      builder_.Add(Kernel(t + 5000, 1000, 2 * i + 2, "common"));
      builder_.Add(Api(t, 500, 2 * i + 1, 211, 100 + i % 3));
      v1::Chunk chunk;
      builder_.TakeChunk(&chunk);
      if (learn_only) {
        ring.Learn(chunk);
      } else {
        ring.Add(chunk, t);
      }
    }
  }

  // The snapshot as a file, read back.
  Trace WriteAndLoad(const FlightRing::Snapshot& s) {
    const std::string path = absl::StrCat(::testing::TempDir(), "/flight_", ::getpid(), "_", ++files_, ".cuscope");
    auto writer = TraceWriter::Create(path, true);
    EXPECT_TRUE(writer.ok()) << writer.status();
    if (!writer.ok()) return {};
    v1::Header header;
    header.mutable_session()->set_pid(42);
    EXPECT_TRUE(WriteFlightSnapshot(header, s, **writer).ok());
    auto t = LoadTrace(path);
    EXPECT_TRUE(t.ok()) << t.status();
    std::remove(path.c_str());
    return t.ok() ? *std::move(t) : Trace{};
  }

  ChunkBuilder builder_;
  std::vector<std::string> names_;
  int files_ = 0;
};

TEST_F(FlightRingTest, KeepsTheLastSecondsAndTheSnapshotResolvesEveryName) {
  FlightRing ring({.span_ns = 5 * kSecond, .max_bytes = 1ull << 30});
  AddChunks(ring, 0, 20);
  // Chunks taken at 14..19 s are within 5 s of the newest (19 s); 0..13 are dropped.
  EXPECT_EQ(ring.chunk_count(), 6u);
  const auto s = ring.Take();
  EXPECT_EQ(s.dropped_chunks, 14u);
  EXPECT_EQ(s.first_time_ns, 14 * kSecond);
  EXPECT_EQ(s.last_time_ns, 19 * kSecond);

  Trace t = WriteAndLoad(s);
  ASSERT_EQ(t.kernels.size(), 12u);
  std::vector<std::string> names;
  for (const auto& k : t.kernels) names.push_back(t.dict.kernel_name(k.signature));
  // "common" was defined in chunk 0, long dropped: the definitions chunk carries it.
  EXPECT_EQ(names[0], "k14");
  EXPECT_EQ(names[1], "common");
  EXPECT_EQ(names[10], "k19");
  EXPECT_EQ(t.api_calls.size(), 6u);
  for (const auto& a : t.api_calls) EXPECT_EQ(t.dict.function_name(a.function), "cudaFunc211");
}

TEST_F(FlightRingTest, TheByteBudgetDropsTheOldestButKeepsTheNewest) {
  FlightRing unbounded({.span_ns = 1000 * kSecond, .max_bytes = 1ull << 30});
  AddChunks(unbounded, 0, 10);
  const uint64_t ten = unbounded.bytes();
  ASSERT_EQ(unbounded.chunk_count(), 10u);

  // Room for about half of them.
  names_.clear();
  builder_ = ChunkBuilder(FakeApiName);
  FlightRing half({.span_ns = 1000 * kSecond, .max_bytes = ten / 2});
  AddChunks(half, 0, 10);
  EXPECT_LE(half.bytes(), ten / 2);
  EXPECT_GE(half.chunk_count(), 3u);
  EXPECT_LT(half.chunk_count(), 10u);
  Trace t = WriteAndLoad(half.Take());
  ASSERT_FALSE(t.kernels.empty());
  EXPECT_EQ(t.dict.kernel_name(t.kernels.back().signature), "common");
  EXPECT_EQ(t.dict.kernel_name(t.kernels[t.kernels.size() - 2].signature), "k9");

  // A budget below one chunk still keeps the newest.
  names_.clear();
  builder_ = ChunkBuilder(FakeApiName);
  FlightRing tiny({.span_ns = 1000 * kSecond, .max_bytes = 1});
  AddChunks(tiny, 0, 4);
  EXPECT_EQ(tiny.chunk_count(), 1u);
  EXPECT_EQ(WriteAndLoad(tiny.Take()).kernels.size(), 2u);
}

TEST_F(FlightRingTest, AChunkExactlyAtTheSpansEdgeIsKept) {
  FlightRing ring({.span_ns = 3 * kSecond, .max_bytes = 1ull << 30});
  AddChunks(ring, 0, 4);  // 0..3 s: the oldest is exactly 3 s older than the newest
  EXPECT_EQ(ring.chunk_count(), 4u);
  AddChunks(ring, 4, 5);
  EXPECT_EQ(ring.chunk_count(), 4u);
  EXPECT_EQ(ring.Take().first_time_ns, 1 * kSecond);
}

TEST_F(FlightRingTest, AnEmptyRingSnapshotsAsAnEmptyTrace) {
  FlightRing ring({});
  const auto s = ring.Take();
  EXPECT_TRUE(s.chunks.empty());
  EXPECT_EQ(s.first_time_ns, 0u);
  Trace t = WriteAndLoad(s);
  EXPECT_TRUE(t.kernels.empty());
}

TEST_F(FlightRingTest, TakeSinceLeavesOutTheChunksTakenBefore) {
  FlightRing ring({.span_ns = 100 * kSecond, .max_bytes = 1ull << 30});
  AddChunks(ring, 0, 6);
  const auto s = ring.Take(3 * kSecond);  // a chunk taken exactly then is in
  EXPECT_EQ(s.chunks.size(), 3u);
  EXPECT_EQ(s.first_time_ns, 3 * kSecond);
  Trace t = WriteAndLoad(s);
  ASSERT_EQ(t.kernels.size(), 6u);
  EXPECT_EQ(t.dict.kernel_name(t.kernels[0].signature), "k3");
  EXPECT_EQ(t.dict.kernel_name(t.kernels[1].signature), "common");  // defined in chunk 0, left out
  EXPECT_TRUE(ring.Take(3 * kSecond + 1).chunks.size() == 2u);
  EXPECT_TRUE(ring.Take(6 * kSecond).chunks.empty());
  EXPECT_EQ(ring.chunk_count(), 6u);  // taking keeps them
}

// Monitor mode's capture ring: it learns every definition while it keeps nothing, keeps a
// capture's chunks, and forgets them (not the definitions) once the capture is written.
TEST_F(FlightRingTest, ARingThatOnlyLearnedStillResolvesTheNamesOfItsLaterChunks) {
  FlightRing ring({.span_ns = UINT64_MAX, .max_bytes = 1ull << 30});
  AddChunks(ring, 0, 4, /*learn_only=*/true);
  EXPECT_EQ(ring.chunk_count(), 0u);
  EXPECT_TRUE(ring.Take().chunks.empty());
  AddChunks(ring, 4, 6);
  Trace t = WriteAndLoad(ring.Take());
  ASSERT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.dict.kernel_name(t.kernels[0].signature), "k4");
  EXPECT_EQ(t.dict.kernel_name(t.kernels[1].signature), "common");
  for (const auto& a : t.api_calls) EXPECT_EQ(t.dict.function_name(a.function), "cudaFunc211");
  EXPECT_EQ(ring.held_ns(), kSecond);

  ring.Clear();
  EXPECT_EQ(ring.chunk_count(), 0u);
  EXPECT_EQ(ring.bytes(), 0u);
  EXPECT_EQ(ring.held_ns(), 0u);
  AddChunks(ring, 6, 7);
  Trace after = WriteAndLoad(ring.Take());
  ASSERT_EQ(after.kernels.size(), 2u);
  EXPECT_EQ(after.dict.kernel_name(after.kernels[0].signature), "k6");
  EXPECT_EQ(after.dict.kernel_name(after.kernels[1].signature), "common");
}

}  // namespace
}  // namespace cuscope::core
