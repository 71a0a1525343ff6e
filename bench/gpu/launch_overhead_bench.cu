// Back-to-back tiny kernel launches, timed per launch. Three ways to run it:
//   --mode plain        no profiler (or under cuscope's injection: same program, same mode)
//   --mode bare-cupti   a bare CUPTI collector: the same activity kinds as cuscope enables, with
//                       buffers discarded unread. The floor any CUPTI-based tool pays.
//   --window-after-warmup  with plain: cudaProfilerStart after the warm-up, cudaProfilerStop at
//                       the end (a collector with its window on cudaProfilerStart turns on late)
//   --mode windows      in one process, stretches of --launches alternate between plain and a
//                       cudaProfilerStart/Stop window (a collector injected with its window on
//                       cudaProfilerStart), in a seeded random order per repetition, 0.3 s apart;
//                       prints each arm's median and the median of the per-repetition
//                       differences (added_ns_per_launch)
// Prints one line per repetition and the median in ns per launch.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define CHECK_CUDA(call)                                                                       \
  do {                                                                                         \
    cudaError_t e = (call);                                                                    \
    if (e != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

__global__ void tiny(int* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && p[0] < 0) p[1] = 1;
}

static void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 4 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
static void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

static int EnableBareCupti() {
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) return 1;
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                      CUPTI_ACTIVITY_KIND_MARKER,            CUPTI_ACTIVITY_KIND_MEMORY2,
                                      CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (auto k : kinds) {
    if (cuptiActivityEnable(k) != CUPTI_SUCCESS) return 1;
  }
  cuptiActivityFlushPeriod(500);
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = "plain";
  long launches = 100000;
  int reps = 5;
  bool window_after_warmup = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mode") && i + 1 < argc) mode = argv[++i];
    else if (!std::strcmp(argv[i], "--launches") && i + 1 < argc) launches = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--window-after-warmup")) window_after_warmup = true;
    else {
      std::fprintf(stderr, "usage: %s [--mode plain|bare-cupti|windows] [--launches N] [--reps R] [--window-after-warmup]\n", argv[0]);
      return 2;
    }
  }
  if (mode == "bare-cupti" && EnableBareCupti() != 0) {
    std::fprintf(stderr, "bare CUPTI collector could not start\n");
    return 1;
  }
  int* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 16));
  CHECK_CUDA(cudaMemset(d, 0, 16));
  for (int i = 0; i < 2000; ++i) tiny<<<1, 32>>>(d);
  CHECK_CUDA(cudaDeviceSynchronize());
  // Inside the lambdas below an error ends the process (CHECK_CUDA returns from main).
  const auto check = [](cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  };
  const auto stretch = [&]() -> double {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < launches; ++i) tiny<<<1, 32>>>(d);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / launches;
  };
  if (mode == "windows") {
    const auto windowed = [&]() -> double {
      check(cudaProfilerStart(), "cudaProfilerStart");
      const double ns = stretch();
      check(cudaProfilerStop(), "cudaProfilerStop");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the collector's writer
      return ns;
    };
    windowed();  // the first window's set-up is not timed
    std::mt19937 rng(1);
    std::vector<double> plain, window, added;
    for (int r = 0; r < reps; ++r) {
      double p = 0, w = 0;
      if (rng() % 2 == 0) {
        p = stretch();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        w = windowed();
      } else {
        w = windowed();
        p = stretch();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
      plain.push_back(p);
      window.push_back(w);
      added.push_back(w - p);
      std::printf("rep %d: plain %.1f window %.1f ns/launch\n", r, p, w);
    }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    CHECK_CUDA(cudaFree(d));
    std::printf("mode=windows launches=%ld reps=%d plain_ns_per_launch=%.1f window_ns_per_launch=%.1f "
                "added_ns_per_launch=%.1f added_min=%.1f added_max=%.1f\n",
                launches, reps, median(plain), median(window), median(added),
                *std::min_element(added.begin(), added.end()), *std::max_element(added.begin(), added.end()));
    return 0;
  }
  // A collector whose window opens on cudaProfilerStart turns on here, the context made.
  if (window_after_warmup) CHECK_CUDA(cudaProfilerStart());
  std::vector<double> per_launch;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < launches; ++i) tiny<<<1, 32>>>(d);
    CHECK_CUDA(cudaDeviceSynchronize());
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    per_launch.push_back(ns / launches);
    std::printf("rep %d: %.1f ns/launch\n", r, per_launch.back());
  }
  if (window_after_warmup) CHECK_CUDA(cudaProfilerStop());
  CHECK_CUDA(cudaFree(d));
  std::sort(per_launch.begin(), per_launch.end());
  std::printf("mode=%s launches=%ld median_ns_per_launch=%.1f\n", mode.c_str(), launches, per_launch[per_launch.size() / 2]);
  return 0;
}
