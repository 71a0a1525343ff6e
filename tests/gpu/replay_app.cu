// Kernels whose results depend on each launch running exactly once: atomics, in-place updates
// (each thread reads what it wrote last launch) and accumulation across launches. The program
// prints a bit-exact hash of every result, so a test can compare runs with and without kernel
// replay.
//   replay_app [--iterations N] [--window K] [--pause-ms P] [--hold-ms H] [--before-ms B]
// With --window K the first K iterations run between cudaProfilerStart and cudaProfilerStop (a
// top-down's timeline window) and the rest after it, P ms later (the top-down chooses its kernels
// within a fraction of a second of the window's end). --hold-ms H keeps the window open H ms
// before its first launch, the GPU idle; --before-ms B waits B ms between the program's set-up and
// cudaProfilerStart (time for GPU counter sampling to be prepared before the window).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

constexpr int kN = 1 << 22;
constexpr int kBins = 256;

// Every element lands in a bin through an atomic: replayed without restoring, bins would grow.
__global__ void replay_histogram(const uint32_t* in, uint32_t* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&bins[in[i] % kBins], 1u);
  }
}

// Reads the value the previous launch wrote and overwrites it.
__global__ void replay_inplace(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 1.0001f + 0.5f;
}

// Accumulates across launches in double precision.
__global__ void replay_accumulate(const float* in, double* acc, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += static_cast<double>(in[i]) * 0.25;
}

// One global counter that every thread bumps.
__global__ void replay_counter(unsigned long long* counter) { atomicAdd(counter, 1ull); }

uint64_t Fnv1a(const void* data, size_t bytes, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T>
uint64_t DeviceHash(const T* d, size_t count) {
  std::vector<T> h(count);
  CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return Fnv1a(h.data(), count * sizeof(T));
}

int main(int argc, char** argv) {
  int iterations = 6;
  int window = -1;
  int pause_ms = 0;
  int hold_ms = 0;
  int before_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--window") == 0) window = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--pause-ms") == 0) pause_ms = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--hold-ms") == 0) hold_ms = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--before-ms") == 0) before_ms = std::atoi(argv[i + 1]);
  }
  std::vector<uint32_t> h_in(kN);
  std::vector<float> h_x(kN);
  uint32_t state = 12345;
  for (int i = 0; i < kN; ++i) {
    state = state * 1664525u + 1013904223u;
    h_in[i] = state >> 8;
    h_x[i] = static_cast<float>(state % 1000) / 1000.0f;
  }
  uint32_t *in = nullptr, *bins = nullptr;
  float* x = nullptr;
  double* acc = nullptr;
  unsigned long long* counter = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(uint32_t)));
  CHECK(cudaMalloc(&bins, kBins * sizeof(uint32_t)));
  CHECK(cudaMalloc(&x, kN * sizeof(float)));
  CHECK(cudaMalloc(&acc, kN * sizeof(double)));
  CHECK(cudaMalloc(&counter, sizeof(unsigned long long)));
  CHECK(cudaMemcpy(in, h_in.data(), kN * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, h_x.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(bins, 0, kBins * sizeof(uint32_t)));
  CHECK(cudaMemset(acc, 0, kN * sizeof(double)));
  CHECK(cudaMemset(counter, 0, sizeof(unsigned long long)));
  CHECK(cudaDeviceSynchronize());

  if (window >= 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(before_ms));
    CHECK(cudaProfilerStart());
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  }
  const int threads = 256, blocks = (kN + threads - 1) / threads;
  for (int it = 0; it < iterations; ++it) {
    if (it == window) {
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaProfilerStop());
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    }
    replay_histogram<<<264, 512>>>(in, bins, kN);
    replay_inplace<<<blocks, threads>>>(x, kN);
    replay_accumulate<<<blocks, threads>>>(x, acc, kN);
    replay_counter<<<132, 128>>>(counter);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  if (window >= iterations) CHECK(cudaProfilerStop());
  std::printf("hash_histogram=%016llx\n", static_cast<unsigned long long>(DeviceHash(bins, kBins)));
  std::printf("hash_inplace=%016llx\n", static_cast<unsigned long long>(DeviceHash(x, kN)));
  std::printf("hash_accumulate=%016llx\n", static_cast<unsigned long long>(DeviceHash(acc, kN)));
  unsigned long long count = 0;
  CHECK(cudaMemcpy(&count, counter, sizeof(count), cudaMemcpyDeviceToHost));
  std::printf("counter=%llu\n", count);
  std::printf("iterations=%d\n", iterations);
  return 0;
}
