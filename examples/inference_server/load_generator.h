// Where requests come from. Open loop: a Poisson process at a fixed rate, independent of how fast
// the server answers (the load of many independent clients), fed through a RequestQueue. Closed
// loop: each worker takes the next request as soon as it finishes one (the server's capacity).
// Both number requests 0, 1, 2, ... and draw from fixed seeds, so runs are comparable.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "examples/inference_server/request_queue.h"

namespace inference_server {

// Pushes requests into `queue` at Poisson arrival times (exponential gaps of mean 1/`rate`
// seconds, from a fixed seed) from `start` until `end`, then closes the queue. Runs on the calling
// thread, sleeping until each arrival. Returns how many requests it pushed.
uint64_t GeneratePoissonArrivals(double rate, Clock::time_point start, Clock::time_point end,
                                 RequestQueue& queue);

// Closed loop: every call hands out the next request, arriving now, until `end`. Shared by all
// workers (thread-safe). Ids count up from `first_id`, so that two sources (two routes) can hand
// out ids that never meet.
class ClosedLoopSource {
 public:
  explicit ClosedLoopSource(Clock::time_point end, uint64_t first_id = 0) : end_(end), next_id_(first_id) {}
  std::optional<Request> Next();

 private:
  const Clock::time_point end_;
  std::atomic<uint64_t> next_id_;
};

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_
