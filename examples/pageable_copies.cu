// Symptom: large cudaMemcpyAsync copies from/to pageable host memory, on the same stream as the
// kernels: the driver stages every byte through a bounce buffer, the calls block the host, and
// copies never overlap compute.
//   (default)  pageable buffer; per chunk: H2D, kernel, D2H, all on one stream
//   --fixed    pinned buffer (cudaMallocHost); double-buffered pipeline: H2D on one stream,
//              kernels on another, D2H on a third, ordered by events, so copies overlap compute
// Options: --chunks N (default 8 chunks of 64 MiB).
#include <cstdint>
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
constexpr int kIters = 2000;  // LCG steps per element: ~1.3 ms per chunk on an H200, about as long as its copy

__global__ void process(unsigned* x, size_t n, int iters) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = x[i];
    for (int k = 0; k < iters; ++k) v = v * kMul + kAdd;
    x[i] = v;
  }
}

int main(int argc, char** argv) {
  bool fixed = false;
  int chunks = 8;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--fixed")) {
      fixed = true;
    } else if (!std::strcmp(argv[a], "--chunks") && a + 1 < argc) {
      chunks = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixed] [--chunks N]\n", argv[0]);
      return 2;
    }
  }
  if (chunks < 1) chunks = 1;

  const size_t chunk_elems = (size_t(64) << 20) / sizeof(unsigned);
  const size_t chunk_bytes = chunk_elems * sizeof(unsigned);
  const size_t total = chunk_elems * chunks;
  if (fixed)
    std::printf("example pageable_copies --fixed (fixed: pinned memory, %d x 64 MiB chunks, "
                "copies overlapped with compute on their own streams)\n", chunks);
  else
    std::printf("example pageable_copies (symptom: %d x 64 MiB pageable async copies "
                "serialized with kernels on one stream)\n", chunks);

  int device = 0, sms = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int block = 256, grid = 8 * sms;

  nvtxRangePushA("setup");
  unsigned* host = nullptr;
  if (fixed)
    CK(cudaMallocHost(&host, total * sizeof(unsigned)));
  else
    host = static_cast<unsigned*>(std::malloc(total * sizeof(unsigned)));
  if (!host) {
    std::fprintf(stderr, "out of host memory\n");
    return 1;
  }
  for (size_t i = 0; i < total; ++i) host[i] = static_cast<unsigned>(i) * 2654435761u;

  unsigned* dev[2] = {nullptr, nullptr};
  cudaStream_t h2d, compute, d2h;
  cudaEvent_t h2d_done[2], compute_done[2], d2h_done[2];
  CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CK(cudaMalloc(&dev[0], chunk_bytes));
  if (fixed) {
    CK(cudaMalloc(&dev[1], chunk_bytes));
    CK(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
      CK(cudaEventCreateWithFlags(&h2d_done[b], cudaEventDisableTiming));
      CK(cudaEventCreateWithFlags(&compute_done[b], cudaEventDisableTiming));
      CK(cudaEventCreateWithFlags(&d2h_done[b], cudaEventDisableTiming));
    }
  }
  nvtxRangePop();

  nvtxRangePushA("work");
  for (int c = 0; c < chunks; ++c) {
    unsigned* h = host + size_t(c) * chunk_elems;
    if (!fixed) {
      CK(cudaMemcpyAsync(dev[0], h, chunk_bytes, cudaMemcpyHostToDevice, compute));
      process<<<grid, block, 0, compute>>>(dev[0], chunk_elems, kIters);
      CK(cudaMemcpyAsync(h, dev[0], chunk_bytes, cudaMemcpyDeviceToHost, compute));
      continue;
    }
    const int b = c % 2;
    // Buffer b is free again once the D2H of chunk c-2 has finished.
    if (c >= 2) CK(cudaStreamWaitEvent(h2d, d2h_done[b], 0));
    CK(cudaMemcpyAsync(dev[b], h, chunk_bytes, cudaMemcpyHostToDevice, h2d));
    CK(cudaEventRecord(h2d_done[b], h2d));

    CK(cudaStreamWaitEvent(compute, h2d_done[b], 0));
    process<<<grid, block, 0, compute>>>(dev[b], chunk_elems, kIters);
    CK(cudaEventRecord(compute_done[b], compute));

    CK(cudaStreamWaitEvent(d2h, compute_done[b], 0));
    CK(cudaMemcpyAsync(h, dev[b], chunk_bytes, cudaMemcpyDeviceToHost, d2h));
    CK(cudaEventRecord(d2h_done[b], d2h));
  }
  CK(cudaGetLastError());
  if (fixed) CK(cudaStreamSynchronize(d2h));
  CK(cudaStreamSynchronize(compute));
  nvtxRangePop();

  nvtxRangePushA("check");
  // kIters LCG steps compose to one affine map v -> mul * v + add (mod 2^32).
  unsigned mul = 1, add = 0;
  for (int k = 0; k < kIters; ++k) {
    mul *= kMul;
    add = add * kMul + kAdd;
  }
  bool ok = true;
  for (size_t i = 0; i < total && ok; ++i)
    ok = host[i] == mul * (static_cast<unsigned>(i) * 2654435761u) + add;
  nvtxRangePop();

  if (fixed) {
    for (int b = 0; b < 2; ++b) {
      CK(cudaEventDestroy(h2d_done[b]));
      CK(cudaEventDestroy(compute_done[b]));
      CK(cudaEventDestroy(d2h_done[b]));
    }
    CK(cudaStreamDestroy(h2d));
    CK(cudaStreamDestroy(d2h));
    CK(cudaFree(dev[1]));
    CK(cudaFreeHost(host));
  } else {
    std::free(host);
  }
  CK(cudaFree(dev[0]));
  CK(cudaStreamDestroy(compute));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
