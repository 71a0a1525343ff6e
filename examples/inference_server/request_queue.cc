#include "examples/inference_server/request_queue.h"

namespace inference_server {

void RequestQueue::Push(const Request& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
  }
  ready_.notify_one();
}

std::optional<Request> RequestQueue::Pop() {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock, [this] { return !requests_.empty() || closed_; });
  if (requests_.empty()) return std::nullopt;
  Request r = requests_.front();
  requests_.pop_front();
  return r;
}

void RequestQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  ready_.notify_all();
}

}  // namespace inference_server
