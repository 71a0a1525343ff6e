#include "examples/inference_server/load_generator.h"

#include <random>
#include <thread>

namespace inference_server {
namespace {
// Fixed, so that two runs see the same arrival pattern.
constexpr uint64_t kArrivalSeed = 0x5eed'a441'7a15ull;
}  // namespace

uint64_t GeneratePoissonArrivals(double rate, Clock::time_point start, Clock::time_point end,
                                 RequestQueue& queue) {
  std::mt19937_64 rng(kArrivalSeed);
  std::exponential_distribution<double> gap_seconds(rate);
  uint64_t id = 0;
  // Arrival times accumulate in double seconds from `start`: rounding each gap to the clock's
  // tick would bias the rate at high rates.
  double offset = gap_seconds(rng);
  for (;;) {
    const Clock::time_point arrival =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(offset));
    if (arrival >= end) break;
    std::this_thread::sleep_until(arrival);
    queue.Push(Request{id++, arrival});
    offset += gap_seconds(rng);
  }
  queue.Close();
  return id;
}

std::optional<Request> ClosedLoopSource::Next() {
  const Clock::time_point now = Clock::now();
  if (now >= end_) return std::nullopt;
  return Request{next_id_.fetch_add(1, std::memory_order_relaxed), now};
}

}  // namespace inference_server
