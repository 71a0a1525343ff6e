/* What the CUDA driver does at cuInit when CUDA_INJECTION64_PATH is set: loads that library and
   calls its InitializeInjection. Lets tests on a machine without a GPU reach the moment an
   injected or preloaded cuscope starts. Then runs `sh -c ARG` if given, and exits with its code. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const char* path = getenv("CUDA_INJECTION64_PATH");
  void* library;
  int (*initialize)(void);
  if (path == NULL || path[0] == '\0') {
    printf("no injection path\n");
  } else if ((library = dlopen(path, RTLD_NOW)) == NULL) {
    printf("cannot load %s\n", path);
  } else if ((*(void**)&initialize = dlsym(library, "InitializeInjection")) == NULL) {
    printf("no InitializeInjection in %s\n", path);
  } else {
    printf("InitializeInjection returned %d\n", initialize());
  }
  fflush(stdout);
  return argc > 1 ? system(argv[1]) >> 8 : 0;
}
