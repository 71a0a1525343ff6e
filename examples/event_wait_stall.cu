// Symptom: an event wait that stalls a stream. Each round, stream A runs a small producer kernel
// and then a long independent kernel; stream B's consumer needs only the producer's output, but
// the event it waits on is recorded after the long kernel, so B idles behind work it doesn't need.
//   (default)  event recorded on A after the long kernel
//   --fixed    event recorded on A right after the producer: B's consumer runs beside the long
//              kernel
// Before overwriting the shared buffer, the next round's producer waits for the consumer (a real
// dependency in both variants). Each big kernel uses about half of the SMs.
// Options: --rounds N (default 300).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,         \
                   cudaGetErrorString(err_));                                           \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr unsigned kMul = 1664525u, kAdd = 1013904223u;
constexpr int kLongIters = 24000;      // long kernel on A: ~1 ms on an H200
constexpr int kConsumeIters = 180000;  // consumer on B (1 element per thread): ~0.5 ms

struct Affine {  // v -> mul * v + add (mod 2^32): k LCG steps in one map
  unsigned mul = 1, add = 0;
  explicit Affine(long long steps) {
    for (long long k = 0; k < steps; ++k) {
      mul *= kMul;
      add = add * kMul + kAdd;
    }
  }
  unsigned operator()(unsigned v) const { return mul * v + add; }
};

__host__ __device__ inline unsigned produced(size_t i, int round) {
  return static_cast<unsigned>(i) * 2654435761u + static_cast<unsigned>(round);
}

__global__ void producer(unsigned* p, size_t n, int round) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = produced(i, round);
}

__global__ void long_kernel(unsigned* x, size_t n, int iters) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = x[i];
    for (int k = 0; k < iters; ++k) v = v * kMul + kAdd;
    x[i] = v;
  }
}

__global__ void consumer(const unsigned* p, unsigned* out, size_t n, int iters) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = p[i];
    for (int k = 0; k < iters; ++k) v = v * kMul + kAdd;
    out[i] += v;
  }
}

int main(int argc, char** argv) {
  bool fixed = false;
  int rounds = 300;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--fixed")) {
      fixed = true;
    } else if (!std::strcmp(argv[a], "--rounds") && a + 1 < argc) {
      rounds = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixed] [--rounds N]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;

  if (fixed)
    std::printf("example event_wait_stall --fixed (fixed: event recorded after the producer, "
                "consumer overlaps the long kernel, %d rounds)\n", rounds);
  else
    std::printf("example event_wait_stall (symptom: stream B waits on an event recorded after "
                "an unrelated long kernel, %d rounds)\n", rounds);

  const size_t n_long = size_t(1) << 20, n_shared = size_t(1) << 16;
  int device = 0, sms = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int block = 1024, half_grid = sms / 2 > 0 ? sms / 2 : 1;

  nvtxRangePushA("setup");
  cudaStream_t sa, sb;
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  cudaEvent_t ready, consumed;
  CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
  unsigned *d_long = nullptr, *d_shared = nullptr, *d_out = nullptr;
  unsigned *h_long = nullptr, *h_out = nullptr;
  CK(cudaMalloc(&d_long, n_long * sizeof(unsigned)));
  CK(cudaMalloc(&d_shared, n_shared * sizeof(unsigned)));
  CK(cudaMalloc(&d_out, n_shared * sizeof(unsigned)));
  CK(cudaMallocHost(&h_long, n_long * sizeof(unsigned)));
  CK(cudaMallocHost(&h_out, n_shared * sizeof(unsigned)));
  CK(cudaMemsetAsync(d_long, 0, n_long * sizeof(unsigned), sa));
  CK(cudaMemsetAsync(d_out, 0, n_shared * sizeof(unsigned), sa));
  CK(cudaStreamSynchronize(sa));
  nvtxRangePop();

  nvtxRangePushA("work");
  for (int r = 0; r < rounds; ++r) {
    // The producer overwrites d_shared: it must wait until the previous consumer has read it.
    if (r > 0) CK(cudaStreamWaitEvent(sa, consumed, 0));
    producer<<<4 * sms, 256, 0, sa>>>(d_shared, n_shared, r);
    if (fixed) CK(cudaEventRecord(ready, sa));
    long_kernel<<<half_grid, block, 0, sa>>>(d_long, n_long, kLongIters);
    if (!fixed) CK(cudaEventRecord(ready, sa));  // too late: B now waits for long_kernel too

    CK(cudaStreamWaitEvent(sb, ready, 0));
    consumer<<<half_grid, block, 0, sb>>>(d_shared, d_out, n_shared, kConsumeIters);
    CK(cudaEventRecord(consumed, sb));
  }
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(sa));
  CK(cudaStreamSynchronize(sb));
  nvtxRangePop();

  nvtxRangePushA("check");
  CK(cudaMemcpyAsync(h_long, d_long, n_long * sizeof(unsigned), cudaMemcpyDeviceToHost, sa));
  CK(cudaMemcpyAsync(h_out, d_out, n_shared * sizeof(unsigned), cudaMemcpyDeviceToHost, sa));
  CK(cudaStreamSynchronize(sa));
  const Affine long_map(static_cast<long long>(rounds) * kLongIters), consume_map(kConsumeIters);
  bool ok = true;
  for (size_t i = 0; i < n_long && ok; ++i) ok = h_long[i] == long_map(0u);
  for (size_t i = 0; i < n_shared && ok; ++i) {
    unsigned expect = 0;
    for (int r = 0; r < rounds; ++r) expect += consume_map(produced(i, r));
    ok = h_out[i] == expect;
  }
  nvtxRangePop();

  CK(cudaFreeHost(h_long));
  CK(cudaFreeHost(h_out));
  CK(cudaFree(d_long));
  CK(cudaFree(d_shared));
  CK(cudaFree(d_out));
  CK(cudaEventDestroy(ready));
  CK(cudaEventDestroy(consumed));
  CK(cudaStreamDestroy(sa));
  CK(cudaStreamDestroy(sb));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
