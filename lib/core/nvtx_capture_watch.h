// `-c nvtx --nvtx-capture NAME`: the timeline window opens when the first NVTX range named NAME
// starts and closes when that range ends, as Nsight Systems' NVTX capture range does (its default
// end: the first range only).
//
// The collector sees NVTX calls as they happen (CUPTI's NVTX callbacks) and hands each here:
// a push or a start with the range's message, a pop on a thread, an end with the id a start
// returned. A push range ends at the pop that balances it on the thread that pushed it; a
// start/end range ends at the end of its id, on any thread. Ranges of other names, and pops on
// other threads, change nothing. Thread-safe: NVTX calls come from every thread of the program.
#ifndef CUSCOPE_LIB_CORE_NVTX_CAPTURE_WATCH_H_
#define CUSCOPE_LIB_CORE_NVTX_CAPTURE_WATCH_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace cuscope::core {

class NvtxCaptureWatch {
 public:
  enum class Edge {
    kNone,
    kOpen,   // the watched range started: open the window
    kClose,  // it ended: close the window
  };

  explicit NvtxCaptureWatch(std::string name) : name_(std::move(name)) {}

  // nvtxRangePush*: a range named `message` pushed on `thread`.
  Edge Push(uint64_t thread, std::string_view message);
  // nvtxRangePop on `thread`.
  Edge Pop(uint64_t thread);
  // nvtxRangeStart*: a range named `message` that nvtxRangeEnd(`id`) will end; id 0 when the
  // call's id is unknown (its end then cannot be told apart: the window stays open to the end).
  Edge Start(std::string_view message, uint64_t id);
  // nvtxRangeEnd(`id`).
  Edge End(uint64_t id);

  const std::string& name() const { return name_; }
  // Whether the watched range has started, and ended.
  bool opened() const;
  bool closed() const;

 private:
  enum class State { kWaiting, kInPush, kInStart, kDone };

  const std::string name_;
  mutable std::mutex mu_;
  State state_ = State::kWaiting;
  uint64_t thread_ = 0;  // kInPush: the thread that pushed the watched range
  uint64_t depth_ = 0;   // kInPush: ranges pushed above it on that thread, not yet popped
  uint64_t id_ = 0;      // kInStart: the watched range's id
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_NVTX_CAPTURE_WATCH_H_
