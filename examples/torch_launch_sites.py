# Where each kernel came from: three Python functions, each launching its own kind of kernel, so a
# profile with call stacks (`cuscope profile --stacks first:20 -- python3 examples/torch_launch_sites.py`)
# names each kernel's function and line in `cuscope stats --report cuda_kern_stack_sum`.
# --threads N runs the loop on N Python threads at once (launches from many threads, one GIL).
# --graph captures one step into a CUDA graph (inside the NVTX range "step") and replays it: the
# replayed kernels are attributed through the graph nodes their capture created.
#
#   python3 examples/torch_launch_sites.py [--steps N] [--threads N] [--graph]
import argparse
import threading

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--graph", action="store_true")
args = parser.parse_args()


def scale(x):
    return x * 3.0  # a multiply kernel


def shift(x):
    return x + 1.0  # an add kernel


def total(x):
    return x.sum()  # a reduction kernel


def step(x):
    return total(shift(scale(x)))


def run(seed):
    x = torch.full((1 << 16,), float(seed), device="cuda")
    s = torch.zeros((), device="cuda")
    for _ in range(args.steps):
        with torch.cuda.nvtx.range("step"):
            s += step(x)
    torch.cuda.synchronize()
    return s.item()


def run_graph():
    x = torch.full((1 << 16,), 1.0, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture, as CUDA graphs want
        for _ in range(3):
            step(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.nvtx.range("step"):
        with torch.cuda.graph(graph):
            out = step(x)
    for _ in range(args.steps):
        graph.replay()
    torch.cuda.synchronize()
    return out.item()


if args.graph:
    result = run_graph()
else:
    threads = [threading.Thread(target=run, args=(i,)) for i in range(args.threads - 1)]
    for t in threads:
        t.start()
    result = run(args.threads - 1)
    for t in threads:
        t.join()
print(f"done: {args.threads} threads x {args.steps} steps{' (graph replays)' if args.graph else ''}, "
      f"last sum {result:.1f}")
