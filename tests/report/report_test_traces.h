// Synthetic runs for the report component's tests: a launch-bound loop and its fused twin, written
// as real trace files through tests/analysis/synthetic_trace.h.
#ifndef CUSCOPE_TESTS_REPORT_REPORT_TEST_TRACES_H_
#define CUSCOPE_TESTS_REPORT_REPORT_TEST_TRACES_H_

#include <algorithm>
#include <string>

#include "tests/analysis/synthetic_trace.h"

namespace cuscope::testing {

// `steps` launches of `kernel_us`-long kernels, each launched by a cudaLaunchKernel call that
// takes `launch_us`, with the kernel starting 1 us after its call returns: the GPU idles between
// kernels whenever launch_us > kernel_us (launch-bound).
inline void AddLaunchLoop(SyntheticTrace& t, int steps, double launch_us, double kernel_us,
                          const std::string& kernel = "_Z4stepPfi", double origin_us = 0) {
  double host = origin_us;
  double gpu_free = origin_us;
  for (int i = 0; i < steps; ++i) {
    const double start = std::max(host + launch_us + 1, gpu_free);
    t.Launch(kernel, host, launch_us, start, kernel_us);
    host += launch_us;
    gpu_free = start + kernel_us;
  }
  // The run ends when the GPU finishes: a final synchronize.
  t.Api("cudaDeviceSynchronize_v3020", host, std::max(1.0, gpu_free - host));
}

// The launch-bound loop: 400 kernels of 4 us, each launch 20 us (GPU busy ~20%).
inline std::string LaunchBoundRun(double launch_us = 20) {
  SyntheticTrace t;
  t.AddDevice(H200Device());
  AddLaunchLoop(t, 400, launch_us, 4);
  return t.Write();
}

// The same work fused: 20 launches of 80 us kernels (GPU busy ~80%+).
inline std::string FusedRun(double kernel_us = 80) {
  SyntheticTrace t;
  t.AddDevice(H200Device());
  AddLaunchLoop(t, 20, 20, kernel_us, "_Z5fusedPfi");
  return t.Write();
}

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_REPORT_REPORT_TEST_TRACES_H_
