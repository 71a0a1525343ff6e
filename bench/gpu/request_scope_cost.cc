// What a request scope costs the thread that opens it (include/cuscope/request.h): begin/end pairs
// timed in a loop, without a session, in monitor mode, and in trace mode, each variant in rounds
// interleaved with the others; medians of the rounds, ns per pair. A pair is two reads of CUPTI's
// clock and two records queued; the target is under 1 us. The scopes hold no CUDA call: their cost
// alone.
//
//   request_scope_cost [pairs per round (default 200000)] [rounds (default 7)]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuscope/request.h"
#include "cuscope/session.h"

namespace {

double NsPerPair(long pairs) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    cuscope::RequestScope scope(static_cast<uint64_t>(i), (i & 1) != 0 ? "chat" : "embed");
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         static_cast<double>(pairs);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 200000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "request_scope_cost: no CUDA device\n");
    return 77;
  }
  const char* modes[] = {"none", "monitor", "trace"};
  std::vector<double> results[3];
  for (int round = 0; round < rounds; ++round) {
    for (int m = 0; m < 3; ++m) {
      const int mode = (m + round) % 3;  // a different order each round
      cuscope::SessionOptions options;
      options.quiet = true;
      options.force_overwrite = true;
      options.mode = mode == 2 ? "trace" : "monitor";
      options.output = mode == 2 ? "/tmp/request_scope_cost.cuscope" : "";
      cuscope::Session session(options);
      if (mode != 0 && !session.Start()) {
        std::fprintf(stderr, "request_scope_cost: %s\n", session.error().c_str());
        return 1;
      }
      results[mode].push_back(NsPerPair(pairs));
      if (mode != 0) session.Stop();
    }
  }
  for (int m = 0; m < 3; ++m) {
    std::printf("request_scope_cost: %-8s %.1f ns per begin/end pair (median of %d rounds of %ld; min %.1f, max %.1f)\n",
                modes[m], Median(results[m]), rounds, pairs, *std::min_element(results[m].begin(), results[m].end()),
                *std::max_element(results[m].begin(), results[m].end()));
  }
  return 0;
}
