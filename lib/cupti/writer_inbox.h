// The writer's inbox: everything the collector's other rooms hand the writer thread, under one lock.
//
// In order, a queue of turns: CUPTI's completed buffers, and the turns that must come behind every
// buffer completed before them (the top-down's choice, a snapshot's take of the flight ring, a
// monitor-mode capture's first chunk). Beside the queue, taken whole at each chunk: capture windows,
// profiled launches, launch and graph-node stacks, and GPU counter batches. The writer waits here
// for a turn, counter samples, a batch of timed calls or the end; what it does with them is the
// pipeline's (trace_pipeline.h), which this room knows nothing of, the mode included.
//
// Launch stacks are bounded (kMaxQueuedLaunchStacks): past the bound one is dropped and counted, so
// a writer that falls behind cannot make memory grow without bound. Graph nodes' stacks and clones
// are never dropped: a node's stack is made once and every replay of the graph refers to it.
#ifndef CUSCOPE_LIB_CUPTI_WRITER_INBOX_H_
#define CUSCOPE_LIB_CUPTI_WRITER_INBOX_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/stack_interner.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::cupti {

// The writer's turns, in the order they were queued.
struct CompletedBuffer {  // a buffer CUPTI completed
  uint8_t* buffer = nullptr;  // null: no buffer, the timed calls queued so far alone
  size_t valid = 0;
};
struct ChooseHotKernelsTurn {  // the top-down's choice among the kernels recorded so far
  uint32_t kernels = 0;
  uint64_t launches_each = 0;
};
struct SnapshotTurn {};      // a snapshot takes the flight ring's contents
struct BeginCaptureTurn {};  // a monitor-mode capture's chunks are kept from here on
using WriterTurn = std::variant<CompletedBuffer, ChooseHotKernelsTurn, SnapshotTurn, BeginCaptureTurn>;

// A capture window's edge, for the next chunk.
struct QueuedWindow {
  bool open = false;  // true: a window starts, false: the open window ends
  uint64_t time = 0;
  std::string reason;
  v1::WindowKind kind = v1::WINDOW_KIND_UNKNOWN;
};

class WriterInbox {
 public:
  static constexpr size_t kMaxQueuedLaunchStacks = size_t{1} << 16;

  // ---- Any thread -------------------------------------------------------------------------------
  // A turn, counter batches, a batch of timed calls and the end wake the writer (Wait answers).
  // Windows, profiled launches and stacks ride with the next chunk: the next buffer's, the next
  // counter samples', or in monitor and flight modes the next tick's. Wake() is a nudge that
  // changes nothing of that: a waiting writer goes back to its wait with none of the above.
  void PushTurn(WriterTurn turn);
  void AddWindow(QueuedWindow window);
  void AddProfiled(ProfiledLaunch launch);
  // False when the launch stack was dropped at the bound (and counted).
  bool AddLaunchStack(QueuedStack stack);
  void AddGraphNodeStack(QueuedStack stack);  // a node's creating stack, or a clone's original
  void AddCounterBatches(std::vector<CounterBatch> batches);
  // A batch of timed calls is waiting (TimedCallQueue): the writer wakes for it once.
  void MarkTimedBatchReady();
  void Wake() { cv_.notify_one(); }
  // The writer runs every turn queued, then its wait answers `exit`.
  void RequestExit();
  uint64_t launch_stacks_dropped() const { return launch_stacks_dropped_.load(std::memory_order_relaxed); }

  // ---- The writer thread ------------------------------------------------------------------------
  struct Next {
    std::optional<WriterTurn> turn;  // the oldest turn, if any
    bool exit = false;               // no turn is left and the end was asked for
  };
  // Waits for a turn, counter batches, a batch of timed calls or the end; with `tick`, at most that
  // long (a wait that times out answers neither a turn nor the exit).
  Next Wait(std::optional<std::chrono::milliseconds> tick);
  // Whether a batch of timed calls was marked since the last call (and unmarks it).
  bool TakeTimedBatchReady() { return timed_batch_ready_.exchange(false); }
  std::vector<QueuedWindow> TakeWindows();
  std::vector<CounterBatch> TakeCounterBatches();
  std::vector<QueuedStack> TakeStacks();
  std::vector<ProfiledLaunch> TakeProfiled();
  // After a failed write: counter samples still arriving are let go, or the writer would wake for
  // them again and again.
  void DropCounterBatches();

 private:
  // What `queued` holds, taken under the lock (the vector left empty).
  template <typename T>
  std::vector<T> TakeAll(std::vector<T>& queued) {
    std::vector<T> taken;
    std::lock_guard<std::mutex> lock(mu_);
    taken.swap(queued);
    return taken;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WriterTurn> turns_;              // mu_
  bool exit_requested_ = false;               // mu_
  std::vector<QueuedWindow> windows_;         // mu_
  std::vector<ProfiledLaunch> profiled_;      // mu_
  std::vector<QueuedStack> stacks_;           // mu_
  size_t queued_launch_stacks_ = 0;           // mu_: of stacks_, launches' (graph nodes are never dropped)
  std::vector<CounterBatch> counter_batches_; // mu_
  std::atomic<bool> timed_batch_ready_{false};
  std::atomic<uint64_t> launch_stacks_dropped_{0};
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_WRITER_INBOX_H_
