// Symptom: many tiny kernels launched back-to-back; the GPU waits on the launch path.
//   (default)       STEPS launches of a small elementwise kernel
//   --fixed=fused   the same STEPS updates fused into one kernel
//   --fixed=graph   the same STEPS launches captured once into a CUDA Graph, launched as one graph
// Options: --steps N (default 20000).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// One step of an LCG per element, with a step-dependent increment: exact in integers.
__host__ __device__ inline unsigned step_value(unsigned v, int step) {
  return v * 1664525u + 1013904223u + static_cast<unsigned>(step);
}

__global__ void init_kernel(unsigned* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<unsigned>(i);
}

__global__ void tiny_step(unsigned* x, int n, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = step_value(x[i], step);
}

__global__ void fused_steps(unsigned* x, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = x[i];
  for (int s = 0; s < steps; ++s) v = step_value(v, s);
  x[i] = v;
}

int main(int argc, char** argv) {
  enum class Mode { Tiny, Fused, Graph } mode = Mode::Tiny;
  int steps = 20000;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--fixed") || !std::strcmp(argv[a], "--fixed=fused")) {
      mode = Mode::Fused;
    } else if (!std::strcmp(argv[a], "--fixed=graph")) {
      mode = Mode::Graph;
    } else if (!std::strcmp(argv[a], "--steps") && a + 1 < argc) {
      steps = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixed=fused|--fixed=graph] [--steps N]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1) steps = 1;

  if (mode == Mode::Tiny)
    std::printf("example launch_overhead (symptom: %d tiny kernels, launch-bound)\n", steps);
  else if (mode == Mode::Fused)
    std::printf("example launch_overhead --fixed=fused (fixed: %d steps fused into 1 kernel)\n", steps);
  else
    std::printf("example launch_overhead --fixed=graph (fixed: %d tiny kernels in 1 CUDA Graph launch)\n",
                steps);

  const int n = 1 << 14;  // 64 KiB: each launch does almost nothing
  const int block = 256, grid = (n + block - 1) / block;

  nvtxRangePushA("setup");
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned* d_x = nullptr;
  unsigned* h_x = nullptr;
  CK(cudaMalloc(&d_x, n * sizeof(unsigned)));
  CK(cudaMallocHost(&h_x, n * sizeof(unsigned)));
  init_kernel<<<grid, block, 0, stream>>>(d_x, n);
  CK(cudaGetLastError());

  cudaGraphExec_t graph_exec = nullptr;
  if (mode == Mode::Graph) {
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int s = 0; s < steps; ++s) tiny_step<<<grid, block, 0, stream>>>(d_x, n, s);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));
    CK(cudaGraphDestroy(graph));
    CK(cudaGraphUpload(graph_exec, stream));
  }
  CK(cudaStreamSynchronize(stream));
  nvtxRangePop();

  nvtxRangePushA("work");
  switch (mode) {
    case Mode::Tiny:
      for (int s = 0; s < steps; ++s) tiny_step<<<grid, block, 0, stream>>>(d_x, n, s);
      CK(cudaGetLastError());
      break;
    case Mode::Fused:
      fused_steps<<<grid, block, 0, stream>>>(d_x, n, steps);
      CK(cudaGetLastError());
      break;
    case Mode::Graph:
      CK(cudaGraphLaunch(graph_exec, stream));
      break;
  }
  CK(cudaMemcpyAsync(h_x, d_x, n * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  nvtxRangePop();

  nvtxRangePushA("check");
  bool ok = true;
  for (int i = 0; i < n && ok; i += 97) {
    unsigned v = static_cast<unsigned>(i);
    for (int s = 0; s < steps; ++s) v = step_value(v, s);
    ok = (h_x[i] == v);
  }
  nvtxRangePop();

  if (graph_exec) CK(cudaGraphExecDestroy(graph_exec));
  CK(cudaFreeHost(h_x));
  CK(cudaFree(d_x));
  CK(cudaStreamDestroy(stream));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
