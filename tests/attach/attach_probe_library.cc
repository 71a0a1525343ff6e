// A library for the injector's tests: its entry writes "called ARGUMENT" to the file ARGUMENT.
#include <cstdio>

extern "C" __attribute__((visibility("default"))) int attach_probe_entry(const char* path) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return 1;
  std::fprintf(f, "called %s\n", path);
  std::fclose(f);
  return 42;
}
