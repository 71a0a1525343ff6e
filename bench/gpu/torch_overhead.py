"""20,000 tiny elementwise kernels in a PyTorch loop, timed.

--mode plain           no profiler (run it under cuscope's injection for the cuscope figure)
--mode torch-profiler  the same loop inside torch.profiler with CUDA activities (the loop timed)
--mode torch-profiler-region
                       the same, timing the whole profiled region: entering torch.profiler, the
                       loop, and leaving it (where Kineto processes what it recorded); this is
                       the wall time a user waits for
--window-after-warmup  cudaProfilerStart after the warm-up, cudaProfilerStop at the end
--mode windows         in one process, stretches of the loop alternate between plain and a
                       profiled arm, in a seeded random order per round: "window" opens a
                       cudaProfilerStart/Stop window around the stretch (for a collector injected
                       with its window on cudaProfilerStart: cuscope's CUSCOPE_CAPTURE_RANGE=
                       cudaProfilerApi, the bare collector's BARE_CUPTI_GATE=profiler);
                       "torch.profiler" profiles the stretch. Only the loop is timed; the process
                       rests --settle seconds after each stretch, for the collector's writer.
                       Prints each arm's median and the median of the per-round differences to
                       plain (added_us_per_kernel), which process placement and clock drift touch
                       alike
Prints the wall time per repetition and the median.
"""
import argparse
import contextlib
import random
import statistics
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["plain", "torch-profiler", "torch-profiler-region", "windows"], default="plain")
parser.add_argument("--arms", default="window", help="with --mode windows: window or torch.profiler")
parser.add_argument("--settle", type=float, default=0.3)
parser.add_argument("--window-after-warmup", action="store_true",
                    help="call cudaProfilerStart after the warm-up and cudaProfilerStop at the end: a "
                         "collector whose window opens on cudaProfilerStart then turns on with the "
                         "program's CUDA context already made, and stays on for every repetition")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--kernels", type=int, default=20000)
parser.add_argument("--reps", type=int, default=5)
parser.add_argument("--workload", choices=["tiny", "graph", "item", "large"], default="tiny",
                    help="tiny: one tiny elementwise kernel after another (the launch rate is the "
                         "host's); graph: a CUDA graph of 100 tiny kernels replayed; item: steps of "
                         "three tiny kernels, each step's result read back with .item(); large: "
                         "elementwise kernels over 64 Mi floats (the GPU's pace)")
args = parser.parse_args()

GRAPH_NODES = 100
x = torch.ones(1 << 26 if args.workload == "large" else 1024, device="cuda")
for _ in range(200):
    x.add_(1.0)
torch.cuda.synchronize()
graph = None
if args.workload == "graph":
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(GRAPH_NODES):
            x.add_(1.0)
    torch.cuda.synchronize()
kernels_launched = 200 + (3 if args.workload == "graph" else 0)


def loop():
    global kernels_launched
    t0 = time.perf_counter()
    if args.workload == "graph":
        for _ in range(args.kernels // GRAPH_NODES):
            graph.replay()
        kernels_launched += args.kernels // GRAPH_NODES * GRAPH_NODES
    elif args.workload == "item":
        total = 0.0
        for _ in range(args.kernels // 3):
            y = torch.tanh(x)
            y.mul_(0.5)
            total += y.sum().item()
        kernels_launched += args.kernels // 3 * 3
    else:
        for _ in range(args.kernels):
            x.add_(1.0)
        kernels_launched += args.kernels
    torch.cuda.synchronize()
    return time.perf_counter() - t0


@contextlib.contextmanager
def profiler_window():
    torch.cuda.profiler.start()  # cudaProfilerStart
    try:
        yield
    finally:
        torch.cuda.profiler.stop()  # cudaProfilerStop


def profiled(arm):
    if arm == "torch.profiler":
        return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
    if arm == "window":
        return profiler_window()
    raise SystemExit(f"torch_overhead.py: unknown arm {arm} (window or torch.profiler)")


if args.mode == "windows":
    arms = ["plain", args.arms]
    rng = random.Random(args.seed)
    with profiled(args.arms):  # the first window's set-up is not timed
        loop()
    time.sleep(args.settle)
    per_arm = {a: [] for a in arms}
    added = []
    for rnd in range(args.reps):
        order = arms[:]
        rng.shuffle(order)
        this_round = {}
        for arm in order:
            if arm == "plain":
                dt = loop()
            else:
                with profiled(arm):
                    dt = loop()
            time.sleep(args.settle)
            this_round[arm] = dt / args.kernels * 1e6
            per_arm[arm].append(this_round[arm])
        added.append(this_round[args.arms] - this_round["plain"])
        print(f"round {rnd}: " + " ".join(f"{a}={this_round[a]:.3f}" for a in arms))
    med = {a: statistics.median(v) for a, v in per_arm.items()}
    print(f"mode=windows arm={args.arms} kernels={args.kernels} rounds={args.reps} "
          f"plain_us_per_kernel={med['plain']:.3f} arm_us_per_kernel={med[args.arms]:.3f} "
          f"added_us_per_kernel={statistics.median(added):.3f} "
          f"added_min={min(added):.3f} added_max={max(added):.3f}")
    raise SystemExit(0)

if args.window_after_warmup:
    torch.cuda.profiler.start()
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
if args.window_after_warmup:
    torch.cuda.profiler.stop()
print(f"mode={args.mode} workload={args.workload} kernels={args.kernels} median_ms={statistics.median(times) * 1e3:.1f} "
      f"median_us_per_kernel={statistics.median(times) / args.kernels * 1e6:.3f} kernels_launched={kernels_launched}")
