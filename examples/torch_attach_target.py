"""A PyTorch loop that starts without cuscope, for `cuscope attach`.

Runs GEMM + elementwise steps for --seconds, printing the steps of each second ("second N steps
K"), then a checksum of fixed work: the same with and without cuscope attached, as its exit code.

    python3 examples/torch_attach_target.py --seconds 14 &
    cuscope attach --pid $! --mode monitor
"""
import argparse
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=14)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--profiler", action="store_true",
                        help="run the loop inside torch.profiler (CUPTI taken: cuscope attach must say so)")
    args = parser.parse_args()
    if args.profiler:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            run(args)
    else:
        run(args)


def run(args):
    torch.manual_seed(0)
    x = torch.randn(args.size, args.size, device="cuda")
    w = torch.randn(args.size, args.size, device="cuda") / args.size**0.5
    print("ready", flush=True)
    start = time.monotonic()
    next_mark, in_second, steps = 1.0, 0, 0
    while True:
        y = torch.relu(x @ w)
        y = y * 0.5 + 0.1
        y.sum().item()  # a host read each step, as a training loop's loss
        steps += 1
        in_second += 1
        elapsed = time.monotonic() - start
        if elapsed >= next_mark:
            print(f"second {int(next_mark)} steps {in_second}", flush=True)
            in_second = 0
            next_mark += 1
        if elapsed >= args.seconds:
            break
    torch.manual_seed(1)
    z = torch.randn(512, 512, device="cuda")
    print(f"checksum {float((z @ z).sum().item()):.6f}", flush=True)


if __name__ == "__main__":
    main()
