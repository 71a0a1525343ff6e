// A program that ends badly on purpose, for the collector's fault tests. Each mode prints what it
// did as key=value lines before it ends, so a test can compare with the trace.
//   exit-from-thread  another thread calls exit(0) while kernels run and main waits on them
//   return-in-flight  main returns with launched kernels not yet synchronized
//   abort | segv      launches, waits past two flush periods, then abort() / a null write
//   fork              launches, forks a child that prints and exits, launches more
//   threads           16 threads x LAUNCHES launches over 4 streams
//   storm             LAUNCHES launches as fast as possible (run it with a tiny buffer cap)
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

__global__ void fault_tick(int* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(p, 1);
}

__global__ void fault_spin(int* p, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0) atomicAdd(p, 1);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODE [LAUNCHES]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long launches = argc > 2 ? std::atol(argv[2]) : 1000;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, sizeof(int)));
  CHECK(cudaMemset(d, 0, sizeof(int)));
  CHECK(cudaDeviceSynchronize());

  if (mode == "exit-from-thread") {
    // About 0.2 s of queued kernels; the other thread exits while they still run and the main
    // thread waits in a synchronization call.
    for (long i = 0; i < 10000; ++i) fault_spin<<<1, 32>>>(d, 40000);
    std::thread killer([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::printf("exiting_from_thread=1\n");
      std::fflush(stdout);
      std::exit(0);
    });
    killer.detach();
    cudaDeviceSynchronize();
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 1;
  }
  if (mode == "return-in-flight") {
    for (long i = 0; i < launches; ++i) fault_spin<<<1, 32>>>(d, 20000);
    std::printf("launched=%ld\n", launches);
    return 0;  // no synchronization: the work is still in flight
  }
  if (mode == "abort" || mode == "segv") {
    for (long i = 0; i < launches; ++i) fault_tick<<<1, 32>>>(d);
    CHECK(cudaDeviceSynchronize());
    std::printf("launched=%ld\n", launches);
    std::fflush(stdout);
    // Two flush periods (500 ms each by default): everything above reaches the file.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    if (mode == "abort") std::abort();
    volatile int* null = nullptr;
    *null = 1;
    return 0;
  }
  if (mode == "fork") {
    for (long i = 0; i < launches; ++i) fault_tick<<<1, 32>>>(d);
    CHECK(cudaDeviceSynchronize());
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      std::printf("child=1\n");
      std::fflush(stdout);
      std::exit(0);  // runs the child's exit handlers, ours among them
    }
    int status = 0;
    waitpid(child, &status, 0);
    for (long i = 0; i < launches; ++i) fault_tick<<<1, 32>>>(d);
    CHECK(cudaDeviceSynchronize());
    std::printf("launched=%ld\nchild_status=%d\n", 2 * launches, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
  }
  if (mode == "threads") {
    cudaStream_t streams[4];
    for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<std::thread> threads;
    std::atomic<long> total{0};
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&, t] {
        for (long i = 0; i < launches; ++i) {
          fault_tick<<<1, 32, 0, streams[t % 4]>>>(d);
          total.fetch_add(1);
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(cudaDeviceSynchronize());
    int counted = 0;
    CHECK(cudaMemcpy(&counted, d, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("launched=%ld\ndevice_count=%d\n", total.load(), counted);
    return 0;
  }
  if (mode == "storm") {
    for (long i = 0; i < launches; ++i) fault_tick<<<1, 32>>>(d);
    CHECK(cudaDeviceSynchronize());
    std::printf("launched=%ld\n", launches);
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
