#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "lib/core/chunk_builder.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/trace.h"
#include "lib/core/trace_reader.h"
#include "lib/core/trace_writer.h"
#include "tests/core/test_traces.h"

namespace cuscope::core {
namespace {

using testing::Api;
using testing::FakeApiName;
using testing::Kernel;
using testing::TraceBytes;

std::vector<v1::Chunk> ThreeChunks() {
  ChunkBuilder b(FakeApiName);
  std::vector<v1::Chunk> chunks(3);
  uint64_t corr = 1;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 50; ++i, ++corr) {
      b.Add(Api(10000 * c + 100 * i, 20, corr, 211));
      b.Add(Kernel(10000 * c + 100 * i + 30, 40, corr, c == 2 ? "third" : "first"));
    }
    b.TakeChunk(&chunks[c]);
    chunks[c].mutable_stats()->set_records_written(100 * (c + 1));
  }
  return chunks;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "_" + std::to_string(::getpid());
}

TEST(TraceRoundTripTest, WriterOutputReadsBackRecordForRecord) {
  const std::string path = TempPath("roundtrip.cuscope");
  ::unlink(path.c_str());
  auto w = TraceWriter::Create(path, false);
  ASSERT_TRUE(w.ok()) << w.status();
  v1::Header h;
  h.mutable_session()->set_pid(1234);
  h.add_devices()->set_name("NVIDIA H200");
  ASSERT_TRUE((*w)->WriteHeader(h).ok());
  for (const auto& c : ThreeChunks()) ASSERT_TRUE((*w)->WriteChunk(c).ok());
  ASSERT_TRUE((*w)->Close().ok());

  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header.session().pid(), 1234u);
  EXPECT_EQ(t->header.devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(t->chunks, 3u);
  EXPECT_EQ(t->kernels.size(), 150u);
  EXPECT_EQ(t->api_calls.size(), 150u);
  EXPECT_FALSE(t->truncated());
  ASSERT_TRUE(t->stats.has_value());
  EXPECT_EQ(t->stats->records_written(), 300u);
  EXPECT_EQ(t->dict.kernel_name(t->kernels.back().signature), "third");
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    EXPECT_EQ(t->kernels[i].correlation_id, t->api_calls[i].correlation_id);
    EXPECT_EQ(t->kernels[i].start, t->api_calls[i].start + 30);
  }
  ::unlink(path.c_str());
}

TEST(TraceRoundTripTest, FileCutAtAnyByteKeepsEveryCompleteChunk) {
  const std::string full = TraceBytes(ThreeChunks());
  // Offsets where each chunk ends, to know how many chunks a cut must keep.
  std::vector<size_t> chunk_ends;
  {
    auto r = TraceReader::FromBytes(full);
    ASSERT_TRUE(r.ok());
    DecodedChunk c;
    while (*(*r)->Next(&c)) chunk_ends.push_back((*r)->bytes_read());
    ASSERT_EQ(chunk_ends.size(), 3u);
  }
  size_t header_end = 0;
  {
    auto r = TraceReader::FromBytes(full);
    header_end = (*r)->bytes_read();
  }
  for (size_t cut = 0; cut < full.size(); ++cut) {
    auto t = LoadTraceFromBytes(full.substr(0, cut));
    if (cut < header_end) {
      EXPECT_FALSE(t.ok()) << "cut at " << cut;
      continue;
    }
    ASSERT_TRUE(t.ok()) << "cut at " << cut << ": " << t.status();
    const size_t complete = std::count_if(chunk_ends.begin(), chunk_ends.end(), [cut](size_t e) { return e <= cut; });
    EXPECT_EQ(t->chunks, complete) << "cut at " << cut;
    EXPECT_EQ(t->kernels.size(), 50 * complete) << "cut at " << cut;
    const size_t last_end = complete == 0 ? header_end : chunk_ends[complete - 1];
    EXPECT_EQ(t->tail_bytes_dropped, cut - last_end) << "cut at " << cut;
    EXPECT_FALSE(t->corruption.has_value());
  }
}

TEST(TraceRoundTripTest, NotATraceIsRefusedWithAClearError) {
  auto t = LoadTraceFromBytes("{\"traceEvents\": []}");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(t.status().message()).find("not a cuscope trace"), std::string::npos);
}

TEST(TraceRoundTripTest, NewerFormatVersionIsRefused) {
  auto t = LoadTraceFromBytes(TraceBytes({}, kFormatVersion + 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(t.status().message()).find("newer"), std::string::npos);
}

TEST(TraceRoundTripTest, DamagedBlockKeepsWhatCameBeforeIt) {
  std::string bytes = TraceBytes(ThreeChunks());
  size_t second_chunk_start = 0;
  {
    auto r = TraceReader::FromBytes(bytes);
    DecodedChunk c;
    ASSERT_TRUE(*(*r)->Next(&c));
    second_chunk_start = (*r)->bytes_read();
  }
  // A length prefix far beyond the limit in place of the second chunk.
  std::string damaged = bytes.substr(0, second_chunk_start) + std::string("\xff\xff\xff\xff\xff\x0f", 6) +
                        bytes.substr(second_chunk_start + 6);
  auto t = LoadTraceFromBytes(damaged);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->chunks, 1u);
  EXPECT_EQ(t->kernels.size(), 50u);
  ASSERT_TRUE(t->corruption.has_value());
  EXPECT_EQ(t->corruption->code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(t->truncated());
}

TEST(TraceRoundTripTest, ColumnsOfDifferentLengthAreCorruption) {
  auto chunks = ThreeChunks();
  chunks[0].mutable_kernels()->add_duration(5);
  auto t = LoadTraceFromBytes(TraceBytes(chunks));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->chunks, 0u);
  ASSERT_TRUE(t->corruption.has_value());
}

TEST(TraceRoundTripTest, CounterSamplesTopDownChoiceAndMetricShapesReadBack) {
  ChunkBuilder b(FakeApiName);
  b.EnableKernelTotals();
  b.Add(Kernel(1000, 400, 1, "gemm", 8));
  b.Add(Kernel(2000, 100, 2, "relu", 8));
  b.Add(Kernel(3000, 400, 3, "gemm", 8));
  KernelActivity replayed = Kernel(4000, 900, 4, "relu", 8);
  replayed.flags = v1::KERNEL_FLAG_REPLAYED;
  b.Add(replayed);  // a replay's time is not the program's: never counted
  auto chosen = SelectHotKernels(b.KernelTotals(), 1);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].name, "gemm");
  EXPECT_EQ(chosen[0].total_ns, 800u);
  EXPECT_EQ(b.total_kernel_ns(), 900u);
  b.AddTopDownSelection(5000, b.total_kernel_ns(), chosen);
  b.AddCounterSeries(0, v1::COUNTER_SOURCE_PM_SAMPLING, "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                     {{1000, 1100, 12.5}, {1100, 1200, 97.0}});
  b.AddCounterSeries(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {{1050, 1050, 310.0}, {1500, 1500, 655.5}});
  LaunchShape shape;
  shape.grid = {8, 2, 1};
  shape.block = {128, 1, 1};
  b.AddKernelMetrics(99, 0, "gemm", 9, v1::REPLAY_MODE_KERNEL, {{"sm__throughput", 80.0}}, &shape);
  std::vector<v1::Chunk> chunks(1);
  b.TakeChunk(&chunks[0]);

  auto t = LoadTraceFromBytes(TraceBytes(chunks));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE(t->corruption.has_value()) << *t->corruption;
  ASSERT_EQ(t->counter_samples.size(), 4u);
  const CounterSample& second = t->counter_samples[1];
  EXPECT_EQ(t->dict.str(second.name), "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(second.source, v1::COUNTER_SOURCE_PM_SAMPLING);
  EXPECT_EQ(second.start, 1100u);
  EXPECT_EQ(second.end, 1200u);
  EXPECT_DOUBLE_EQ(second.value, 97.0);
  const CounterSample& power = t->counter_samples[3];
  EXPECT_EQ(t->dict.str(power.name), "nvml.power_w");
  EXPECT_EQ(power.start, 1500u);
  EXPECT_EQ(power.end, 1500u);
  EXPECT_DOUBLE_EQ(power.value, 655.5);
  ASSERT_EQ(t->top_down.size(), 1u);
  ASSERT_EQ(t->top_down[0].kernels_size(), 1);
  EXPECT_EQ(t->dict.str(t->top_down[0].kernels(0).name()), "gemm");
  EXPECT_EQ(t->top_down[0].kernels(0).grid_x(), 8u);
  EXPECT_EQ(t->top_down[0].kernels(0).launches(), 2u);
  EXPECT_EQ(t->top_down[0].window_kernel_ns(), 900u);
  ASSERT_EQ(t->metrics.size(), 1u);
  EXPECT_EQ(t->metrics[0].grid, (std::array<uint32_t, 3>{8, 2, 1}));
  EXPECT_EQ(t->metrics[0].block, (std::array<uint32_t, 3>{128, 1, 1}));
}

TEST(TraceRoundTripTest, CounterColumnsOfDifferentLengthAreCorruption) {
  ChunkBuilder b(FakeApiName);
  b.AddCounterSeries(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {{10, 10, 1.0}, {20, 20, 2.0}});
  std::vector<v1::Chunk> chunks(1);
  b.TakeChunk(&chunks[0]);
  chunks[0].mutable_counter_series(0)->add_value(3.0);
  auto t = LoadTraceFromBytes(TraceBytes(chunks));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->corruption.has_value());
  EXPECT_TRUE(t->counter_samples.empty());
}

TEST(TraceWriterTest, RefusesToOverwriteUnlessAsked) {
  const std::string path = TempPath("exists.cuscope");
  { std::ofstream(path) << "user data"; }
  auto w = TraceWriter::Create(path, false);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(std::string(w.status().message()).find("--force-overwrite"), std::string::npos);
  auto w2 = TraceWriter::Create(path, true);
  ASSERT_TRUE(w2.ok());
  ASSERT_TRUE((*w2)->Close().ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  ::unlink(path.c_str());
}

TEST(TraceWriterTest, DoesNotFollowASymbolicLink) {
  const std::string target = TempPath("link_target");
  const std::string link = TempPath("link.cuscope");
  { std::ofstream(target) << "precious"; }
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto w = TraceWriter::Create(link, true);
  EXPECT_FALSE(w.ok());
  std::ifstream in(target);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  ::unlink(link.c_str());
  ::unlink(target.c_str());
}

// `capture -f` (and CUSCOPE_FORCE_OVERWRITE) truncate in place: a hard link at the path would carry
// the truncation to the other name. Refused, and both names keep their contents; a file with one
// link is still replaced.
TEST(TraceWriterTest, DoesNotWriteThroughAHardLink) {
  const std::string other = TempPath("hard_link_target");
  const std::string path = TempPath("hard_link.cuscope");
  ::unlink(other.c_str());
  ::unlink(path.c_str());
  { std::ofstream(other) << "precious"; }
  ASSERT_EQ(::link(other.c_str(), path.c_str()), 0);
  auto w = TraceWriter::Create(path, true);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("has 2 hard links"), std::string::npos) << w.status();
  std::string content;
  std::ifstream(other) >> content;
  EXPECT_EQ(content, "precious");
  ASSERT_EQ(::unlink(other.c_str()), 0);  // one link left: replaced as asked
  auto replaced = TraceWriter::Create(path, true);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_TRUE((*replaced)->Close().ok());
  ::unlink(path.c_str());
}

// The writer runs inside the profiled program: a FIFO at the output path (with or without a reader)
// or a device is refused at once, never blocked on or written to.
TEST(TraceWriterTest, FifoOrDeviceAtThePathIsRefusedWithoutBlocking) {
  const std::string fifo = TempPath("fifo.cuscope");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const bool overwrite : {true, false}) {
    auto w = TraceWriter::Create(fifo, overwrite);
    ASSERT_FALSE(w.ok());
  }
  // With a reader holding the FIFO open, the open succeeds but the file is still refused.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  auto w = TraceWriter::Create(fifo, true);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("not a regular file"), std::string::npos) << w.status();
  ::close(reader);
  ::unlink(fifo.c_str());
  auto null = TraceWriter::Create("/dev/null", true);
  ASSERT_FALSE(null.ok());
  EXPECT_NE(std::string(null.status().message()).find("not a regular file"), std::string::npos) << null.status();
}

TEST(TraceWriterTest, ForcedOverwriteOfARegularFileReplacesItsContents) {
  const std::string path = TempPath("overwrite.cuscope");
  { std::ofstream(path) << std::string(100000, 'x'); }
  auto w = TraceWriter::Create(path, true);
  ASSERT_TRUE(w.ok()) << w.status();
  w->reset();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  ::unlink(path.c_str());
}

TEST(TraceWriterTest, UnwritableDirectoryIsAnErrorNotACrash) {
  auto w = TraceWriter::Create("/nonexistent-dir/x.cuscope", false);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("/nonexistent-dir/x.cuscope"), std::string::npos);
}

TEST(TraceWriterTest, FilePermissionsFollowTheUmask) {
  const std::string path = TempPath("perm.cuscope");
  ::unlink(path.c_str());
  const mode_t old = ::umask(022);
  auto w = TraceWriter::Create(path, false);
  ::umask(old);
  ASSERT_TRUE(w.ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace cuscope::core
