// A program to attach to: `attach_target sleep N` waits 1 ms N times and prints a checksum of the
// iterations (the same whatever happens to its timing); `attach_target read` prints what it reads
// from stdin. Each prints "ready" first, so a test knows when it runs.
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::printf("ready\n");
  std::fflush(stdout);
  if (std::strcmp(argv[1], "sleep") == 0 && argc == 3) {
    const long n = std::atol(argv[2]);
    uint64_t sum = 1469598103934665603ull;
    double x = 1.0;  // floating-point state that must survive an attach
    for (long i = 0; i < n; ++i) {
      const timespec ms{0, 1'000'000};
      nanosleep(&ms, nullptr);
      sum = (sum ^ static_cast<uint64_t>(i)) * 1099511628211ull;
      x = x * 1.0000001 + 0.5;
    }
    std::printf("sum=%llu x=%.6f\n", static_cast<unsigned long long>(sum), x);
    return 0;
  }
  if (std::strcmp(argv[1], "read") == 0) {
    char buffer[256];
    const ssize_t n = read(0, buffer, sizeof buffer - 1);
    if (n < 0) {
      std::perror("read");
      return 1;
    }
    buffer[n] = '\0';
    std::printf("read=%s\n", buffer);
    return 0;
  }
  return 2;
}
