// A kernel launched with <<<...>>>, compiled by nvcc with line tables: the host code nvcc writes
// around the launch (the kernel's stub, the inlined launch helper of crt/device_functions.h) is
// what launch_glue_test walks through. Linked against a fake runtime, never run on a GPU.
__global__ void probe_kernel(int* out, int value) {
  if (out != nullptr) *out = value;
}

extern "C" {
int g_probe_launch_line = 0;
}

extern "C" __attribute__((noinline)) void LaunchProbe(int* out) {
  g_probe_launch_line = __LINE__; probe_kernel<<<1, 1>>>(out, 7);
  asm volatile("" ::: "memory");  // the launch is not the function's last instruction
}
