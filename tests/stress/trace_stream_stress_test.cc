// A trace read while it is written, and the collector's path from many producer threads through
// the buffer pool to one writer thread: every chunk a reader gets is complete and in order, and
// every record is either in the trace or counted as refused.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "lib/core/buffer_pool.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "lib/core/trace_reader.h"
#include "lib/core/trace_writer.h"

namespace cuscope::core {
namespace {

std::string ApiName(v1::ApiDomain, uint32_t cbid) { return absl::StrCat("cudaFunc", cbid); }

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name, "_", ::getpid(), ".cuscope");
}

constexpr const char* kNames[] = {"_Z4gemmv", "_Z6reducev", "_Z7stencilv"};

// Chunk `seq` holds KernelsIn(seq) kernels named by their index, correlation ids continuing from
// the previous chunk's.
int KernelsIn(uint64_t seq) { return static_cast<int>(seq % 7) * 500 + 1; }

uint64_t FirstCorrelation(uint64_t seq) {
  uint64_t corr = 1;
  for (uint64_t s = 0; s < seq; ++s) corr += KernelsIn(s);
  return corr;
}

// Checks one chunk a reader got against what the writer put in it.
std::string CheckChunk(const DecodedChunk& c, const Dictionary& dict, uint64_t expected_seq) {
  if (c.sequence != expected_seq) return absl::StrCat("chunk ", c.sequence, " where ", expected_seq, " was due");
  if (c.kernels.size() != static_cast<size_t>(KernelsIn(c.sequence))) {
    return absl::StrCat("chunk ", c.sequence, " has ", c.kernels.size(), " kernels of ", KernelsIn(c.sequence));
  }
  uint64_t corr = FirstCorrelation(c.sequence);
  for (size_t i = 0; i < c.kernels.size(); ++i, ++corr) {
    const KernelRow& k = c.kernels[i];
    if (k.correlation_id != corr || dict.kernel_name(k.signature) != kNames[corr % 3] || k.end - k.start != 100) {
      return absl::StrCat("chunk ", c.sequence, " row ", i, " differs from what was written");
    }
  }
  return "";
}

TEST(TraceStreamStressTest, ReadersOfAFileBeingWrittenGetOnlyCompleteChunksInOrder) {
  constexpr uint64_t kChunks = 300;
  constexpr int kReaders = 3;
  const std::string path = TempPath("stream");
  ::unlink(path.c_str());
  std::atomic<bool> header_written{false}, done{false};
  std::atomic<uint64_t> chunks_written{0};
  absl::Status writer_status;

  std::thread writer([&] {
    auto w = TraceWriter::Create(path, false);
    if (!w.ok()) {
      writer_status = w.status();
      header_written = done = true;
      return;
    }
    v1::Header h;
    h.mutable_session()->set_pid(1);
    writer_status = (*w)->WriteHeader(h);
    header_written = true;
    ChunkBuilder b(ApiName);
    v1::Chunk chunk;
    uint64_t t = 1'000'000, corr = 1;
    for (uint64_t seq = 0; seq < kChunks && writer_status.ok(); ++seq) {
      for (int i = 0; i < KernelsIn(seq); ++i, ++corr, t += 1000) {
        KernelActivity k;
        k.start = t;
        k.end = t + 100;
        k.correlation_id = corr;
        k.config.name = kNames[corr % 3];
        b.Add(k);
      }
      b.TakeChunk(&chunk);
      writer_status = (*w)->WriteChunk(chunk);
      chunks_written = seq + 1;
      // Let the readers catch up now and then, so reads land all along the file.
      if (seq % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (writer_status.ok()) writer_status = (*w)->Close();
    done = true;
  });

  std::vector<std::string> problems(kReaders);
  std::vector<uint64_t> reads(kReaders), cut_reads(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      while (!header_written) std::this_thread::yield();
      bool last = false;
      while (!last && problems[r].empty()) {
        last = done;
        const uint64_t written_before = chunks_written;
        auto reader = TraceReader::Open(path);
        if (!reader.ok()) {
          problems[r] = absl::StrCat("open: ", reader.status().ToString());
          break;
        }
        DecodedChunk c;
        uint64_t seq = 0;
        while (problems[r].empty()) {
          auto more = (*reader)->Next(&c);
          if (!more.ok()) {
            problems[r] = absl::StrCat("after ", seq, " chunks: ", more.status().ToString());
          } else if (!*more) {
            break;
          } else {
            problems[r] = CheckChunk(c, (*reader)->dictionary(), seq++);
          }
        }
        if (!problems[r].empty()) break;
        if (seq < written_before) problems[r] = absl::StrCat("read ", seq, " chunks of ", written_before, " written");
        if (last && (seq != kChunks || (*reader)->tail_bytes_dropped() != 0)) {
          problems[r] = absl::StrCat("final read: ", seq, " chunks, ", (*reader)->tail_bytes_dropped(), " bytes cut");
        }
        ++reads[r];
        if ((*reader)->tail_bytes_dropped() > 0) ++cut_reads[r];
      }
    });
  }
  writer.join();
  for (auto& th : readers) th.join();
  ASSERT_TRUE(writer_status.ok()) << writer_status;
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(problems[r], "") << "reader " << r;
    EXPECT_GT(reads[r], 0u);
    std::printf("reader %d: %lu reads while written, %lu ended in a partly written chunk\n", r,
                static_cast<unsigned long>(reads[r]), static_cast<unsigned long>(cut_reads[r]));
  }
  ::unlink(path.c_str());
}

// The collector's shape: producer threads take buffers from a capped pool, fill them and queue
// them; one writer thread turns each into a chunk, writes it and returns the buffer.
TEST(TraceStreamStressTest, ProducersThroughACappedPoolToOneWriterLoseNothingUncounted) {
  constexpr int kProducers = 8;
  constexpr int kBuffersEach = 400;
  constexpr size_t kRecordsPerBuffer = 32;
  struct Slot {
    uint64_t start, correlation_id;
    uint32_t producer;
  };
  const std::string path = TempPath("pipeline");
  ::unlink(path.c_str());
  BufferPool pool(kRecordsPerBuffer * sizeof(Slot), 3 * kRecordsPerBuffer * sizeof(Slot));

  std::mutex mu;
  std::condition_variable cv;
  std::deque<uint8_t*> queue;
  bool producers_done = false;
  std::atomic<uint64_t> refused_records{0};

  auto w = TraceWriter::Create(path, false);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->WriteHeader(v1::Header()).ok());
  absl::Status write_status;
  std::thread writer([&] {
    ChunkBuilder b(ApiName);
    v1::Chunk chunk;
    while (true) {
      uint8_t* buf = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || producers_done; });
        if (queue.empty()) break;
        buf = queue.front();
        queue.pop_front();
      }
      Slot slots[kRecordsPerBuffer];
      std::memcpy(slots, buf, sizeof(slots));
      pool.Release(buf);
      for (const Slot& s : slots) {
        KernelActivity k;
        k.start = s.start;
        k.end = s.start + 10;
        k.correlation_id = s.correlation_id;
        k.stream = s.producer;
        k.config.name = kNames[s.producer % 3];
        b.Add(k);
      }
      b.TakeChunk(&chunk);
      if (write_status.ok()) write_status = (*w)->WriteChunk(chunk);
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kBuffersEach; ++i) {
        uint8_t* buf = pool.Acquire();
        if (buf == nullptr) {
          refused_records += kRecordsPerBuffer;
          std::this_thread::yield();
          continue;
        }
        Slot slots[kRecordsPerBuffer];
        for (size_t r = 0; r < kRecordsPerBuffer; ++r) {
          slots[r] = {1'000'000 + static_cast<uint64_t>(i) * 1000 + r, static_cast<uint64_t>(p) << 32 | (i * kRecordsPerBuffer + r),
                      static_cast<uint32_t>(p)};
        }
        std::memcpy(buf, slots, sizeof(slots));
        {
          std::lock_guard<std::mutex> lock(mu);
          queue.push_back(buf);
        }
        cv.notify_one();
      }
    });
  }
  for (auto& th : producers) th.join();
  {
    std::lock_guard<std::mutex> lock(mu);
    producers_done = true;
  }
  cv.notify_one();
  writer.join();
  ASSERT_TRUE(write_status.ok()) << write_status;
  ASSERT_TRUE((*w)->Close().ok());

  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->truncated());
  const uint64_t total = uint64_t{kProducers} * kBuffersEach * kRecordsPerBuffer;
  EXPECT_EQ(t->kernels.size() + refused_records.load(), total);
  EXPECT_EQ(pool.refused() * kRecordsPerBuffer, refused_records.load());
  EXPECT_EQ(pool.in_use(), 0u);
  // No record doubled: every (producer, index) correlation id appears once.
  std::vector<uint64_t> ids;
  for (const KernelRow& k : t->kernels) ids.push_back(k.correlation_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace cuscope::core
