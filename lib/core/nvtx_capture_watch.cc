#include "lib/core/nvtx_capture_watch.h"

namespace cuscope::core {

NvtxCaptureWatch::Edge NvtxCaptureWatch::Push(uint64_t thread, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kWaiting && message == name_) {
    state_ = State::kInPush;
    thread_ = thread;
    depth_ = 0;
    return Edge::kOpen;
  }
  if (state_ == State::kInPush && thread == thread_) ++depth_;
  return Edge::kNone;
}

NvtxCaptureWatch::Edge NvtxCaptureWatch::Pop(uint64_t thread) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kInPush || thread != thread_) return Edge::kNone;
  if (depth_ > 0) {
    --depth_;
    return Edge::kNone;
  }
  state_ = State::kDone;
  return Edge::kClose;
}

NvtxCaptureWatch::Edge NvtxCaptureWatch::Start(std::string_view message, uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kWaiting || message != name_) return Edge::kNone;
  state_ = State::kInStart;
  id_ = id;
  return Edge::kOpen;
}

NvtxCaptureWatch::Edge NvtxCaptureWatch::End(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kInStart || id_ == 0 || id != id_) return Edge::kNone;
  state_ = State::kDone;
  return Edge::kClose;
}

bool NvtxCaptureWatch::opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ != State::kWaiting;
}

bool NvtxCaptureWatch::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::kDone;
}

}  // namespace cuscope::core
