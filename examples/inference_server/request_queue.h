// Requests waiting for a worker: the load generator pushes, every worker pops, and Close ends the
// stream once the generator is done (workers drain what is left, then stop).
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_QUEUE_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace inference_server {

using Clock = std::chrono::steady_clock;

struct Request {
  uint64_t id = 0;  // also the seed of the request's input
  // When the request arrived: its scheduled time under open-loop load, so that time spent queued
  // behind a busy server (or a late generator) counts in its latency.
  Clock::time_point arrival;
};

class RequestQueue {
 public:
  void Push(const Request& request);
  // The oldest request; waits while the queue is empty and open. Nothing once closed and empty.
  std::optional<Request> Pop();
  void Close();

 private:
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Request> requests_;
  bool closed_ = false;
};

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_QUEUE_H_
