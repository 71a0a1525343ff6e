// Exactly known work, printed as key=value lines, for comparing a trace against the truth.
//
// After setup, inside NVTX range "known_outer":
//   cudaMemcpy          1 MiB H2D from pageable memory
//   cudaMemcpyAsync     1 MiB H2D from pinned memory, stream A
//   cudaStreamSynchronize(A)                               (stream sync 1 of 3)
//   cudaMemset          4096 bytes
//   cudaDeviceSynchronize                                  (device sync 1 of 2)
//   nvtxMarkA("known_mark")
//   NVTX range "known_inner" around the launches:
//     --small N (default 1000) x known_small <<<(4,1,1), (128,1,1)>>> on stream A
//     --big M   (default 500)  x known_big   <<<(256,1,1), (256,1,1)>>>, 1024 B static shared
//                                            memory, on stream B
//   cudaStreamSynchronize(B), cudaStreamSynchronize(A)     (stream syncs 2 and 3)
//   cudaMemcpy          2 MiB D2H to pageable memory
//   cudaMemcpyAsync     2 MiB D2H to pinned memory, stream B
//   cudaDeviceSynchronize                                  (device sync 2 of 2)
// Streams A and B are cudaStreamNonBlocking. host_begin_ns / host_end_ns are CLOCK_REALTIME
// nanoseconds taken before the first copy and after the final sync.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

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

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kH2DBytes = kMiB, kD2HBytes = 2 * kMiB, kMemsetBytes = 4096;
constexpr int kSmallGrid = 4, kSmallBlock = 128, kBigGrid = 256, kBigBlock = 256;
constexpr size_t kWords = kD2HBytes / sizeof(unsigned);  // device buffer: 2 MiB
constexpr size_t kHalf = kH2DBytes / sizeof(unsigned);   // second MiB starts here

// Adds 1 to 512 words at the start of the second MiB (zeroed by the memset).
__global__ void known_small(unsigned* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1u; }

// Each block reverses its 256 words through shared memory and adds 1.
__global__ void known_big(unsigned* x) {
  __shared__ unsigned tile[kBigBlock];  // 1024 bytes
  unsigned* base = x + blockIdx.x * kBigBlock;
  tile[threadIdx.x] = base[threadIdx.x];
  __syncthreads();
  base[threadIdx.x] = tile[kBigBlock - 1 - threadIdx.x] + 1u;
}

static long long realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned pattern(size_t i) { return static_cast<unsigned>(i) * 2654435761u + 12345u; }

int main(int argc, char** argv) {
  int n_small = 1000, n_big = 500;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--small") && a + 1 < argc) {
      n_small = std::atoi(argv[++a]);
    } else if (!std::strcmp(argv[a], "--big") && a + 1 < argc) {
      n_big = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--small N] [--big M]\n", argv[0]);
      return 2;
    }
  }
  if (n_small < 0) n_small = 0;
  if (n_big < 0) n_big = 0;
  std::printf("example known_work (exact known work for checking a trace)\n");

  // ---- setup (outside every NVTX range) ----
  cudaStream_t sa, sb;
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  unsigned* d = nullptr;
  CK(cudaMalloc(&d, kWords * sizeof(unsigned)));
  unsigned* pageable_in = static_cast<unsigned*>(std::malloc(kH2DBytes));
  unsigned* pageable_out = static_cast<unsigned*>(std::malloc(kD2HBytes));
  unsigned *pinned_in = nullptr, *pinned_out = nullptr;
  CK(cudaMallocHost(&pinned_in, kH2DBytes));
  CK(cudaMallocHost(&pinned_out, kD2HBytes));
  if (!pageable_in || !pageable_out) {
    std::fprintf(stderr, "out of host memory\n");
    return 1;
  }
  for (size_t i = 0; i < kHalf; ++i) {
    pageable_in[i] = pattern(i);
    pinned_in[i] = pattern(kHalf + i);
  }

  // ---- known work ----
  const long long host_begin = realtime_ns();
  std::printf("host_begin_ns=%lld\n", host_begin);
  nvtxRangePushA("known_outer");
  CK(cudaMemcpy(d, pageable_in, kH2DBytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpyAsync(d + kHalf, pinned_in, kH2DBytes, cudaMemcpyHostToDevice, sa));
  CK(cudaStreamSynchronize(sa));
  CK(cudaMemset(d + kHalf, 0, kMemsetBytes));
  CK(cudaDeviceSynchronize());
  nvtxMarkA("known_mark");

  nvtxRangePushA("known_inner");
  for (int i = 0; i < n_small || i < n_big; ++i) {
    if (i < n_small) known_small<<<dim3(kSmallGrid, 1, 1), dim3(kSmallBlock, 1, 1), 0, sa>>>(d + kHalf);
    if (i < n_big) known_big<<<dim3(kBigGrid, 1, 1), dim3(kBigBlock, 1, 1), 0, sb>>>(d);
  }
  nvtxRangePop();
  CK(cudaGetLastError());

  CK(cudaStreamSynchronize(sb));
  CK(cudaStreamSynchronize(sa));
  CK(cudaMemcpy(pageable_out, d, kD2HBytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpyAsync(pinned_out, d, kD2HBytes, cudaMemcpyDeviceToHost, sb));
  CK(cudaDeviceSynchronize());
  nvtxRangePop();
  const long long host_end = realtime_ns();

  // ---- report ----
  std::printf("launches_known_small=%d\n", n_small);
  std::printf("known_small_grid=%d,1,1\n", kSmallGrid);
  std::printf("known_small_block=%d,1,1\n", kSmallBlock);
  std::printf("known_small_static_smem_bytes=0\n");
  std::printf("known_small_stream=A\n");
  std::printf("launches_known_big=%d\n", n_big);
  std::printf("known_big_grid=%d,1,1\n", kBigGrid);
  std::printf("known_big_block=%d,1,1\n", kBigBlock);
  std::printf("known_big_static_smem_bytes=%zu\n", kBigBlock * sizeof(unsigned));
  std::printf("known_big_stream=B\n");
  std::printf("launches_total=%d\n", n_small + n_big);
  std::printf("memcpy_h2d_pageable_count=1\n");
  std::printf("memcpy_h2d_pageable_bytes=%zu\n", kH2DBytes);
  std::printf("memcpy_h2d_pinned_count=1\n");
  std::printf("memcpy_h2d_pinned_bytes=%zu\n", kH2DBytes);
  std::printf("memcpy_d2h_pageable_count=1\n");
  std::printf("memcpy_d2h_pageable_bytes=%zu\n", kD2HBytes);
  std::printf("memcpy_d2h_pinned_count=1\n");
  std::printf("memcpy_d2h_pinned_bytes=%zu\n", kD2HBytes);
  std::printf("memset_count=1\n");
  std::printf("memset_bytes=%zu\n", kMemsetBytes);
  std::printf("stream_synchronize_calls=3\n");
  std::printf("device_synchronize_calls=2\n");
  std::printf("nvtx_range_outer=known_outer\n");
  std::printf("nvtx_range_inner=known_inner\n");
  std::printf("nvtx_mark=known_mark\n");
  std::printf("host_end_ns=%lld\n", host_end);

  // ---- check both read-backs ----
  bool ok = std::memcmp(pageable_out, pinned_out, kD2HBytes) == 0;
  for (size_t i = 0; i < kWords && ok; ++i) {
    unsigned expect;
    if (i < size_t(kBigGrid) * kBigBlock) {  // known_big: reversed n_big times, +1 each time
      const size_t t = i % kBigBlock, base = i - t;
      expect = pattern(base + (n_big % 2 ? kBigBlock - 1 - t : t)) + static_cast<unsigned>(n_big);
    } else if (i < kHalf) {
      expect = pattern(i);
    } else if (i < kHalf + size_t(kSmallGrid) * kSmallBlock) {
      expect = static_cast<unsigned>(n_small);
    } else if (i < kHalf + kMemsetBytes / sizeof(unsigned)) {
      expect = 0;
    } else {
      expect = pattern(i);
    }
    ok = pageable_out[i] == expect;
  }

  CK(cudaFreeHost(pinned_in));
  CK(cudaFreeHost(pinned_out));
  std::free(pageable_in);
  std::free(pageable_out);
  CK(cudaFree(d));
  CK(cudaStreamDestroy(sa));
  CK(cudaStreamDestroy(sb));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
