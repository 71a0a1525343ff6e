"""20,000 tiny elementwise kernels in a PyTorch loop, timed.

--mode plain           no profiler (run it under cuscope's injection for the cuscope figure)
--mode torch-profiler  the same loop inside torch.profiler with CUDA activities (the loop timed)
--mode torch-profiler-region
                       the same, timing the whole profiled region: entering torch.profiler, the
                       loop, and leaving it (where Kineto processes what it recorded); this is
                       the wall time a user waits for
Prints the wall time per repetition and the median.
"""
import argparse
import statistics
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["plain", "torch-profiler", "torch-profiler-region"], default="plain")
parser.add_argument("--kernels", type=int, default=20000)
parser.add_argument("--reps", type=int, default=5)
args = parser.parse_args()

x = torch.ones(1024, device="cuda")
for _ in range(200):
    x.add_(1.0)
torch.cuda.synchronize()


def loop():
    t0 = time.perf_counter()
    for _ in range(args.kernels):
        x.add_(1.0)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


times = []
for rep in range(args.reps):
    if args.mode == "torch-profiler":
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]):
            dt = loop()
    elif args.mode == "torch-profiler-region":
        t0 = time.perf_counter()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]):
            loop()
        dt = time.perf_counter() - t0
    else:
        dt = loop()
    times.append(dt)
    print(f"rep {rep}: {dt * 1e3:.1f} ms")
print(f"mode={args.mode} kernels={args.kernels} median_ms={statistics.median(times) * 1e3:.1f} "
      f"median_us_per_kernel={statistics.median(times) / args.kernels * 1e6:.3f}")
