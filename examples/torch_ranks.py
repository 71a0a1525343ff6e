# The ranks of a data-parallel job: each step a few matrix products and an all-reduce of a gradient
# buffer, inside an NVTX range "step"; one rank can be delayed by a known amount of GPU work before
# each all-reduce (torch.cuda._sleep, a kernel that spins for a number of clock cycles, calibrated
# against CUDA events first), the straggler `cuscope analyze rank_*.cuscope` must name.
#
#   cuscope profile -o rank_%r -- python3 -m torch.distributed.run --standalone --nproc_per_node=2 \
#       examples/torch_ranks.py --backend gloo --delay-ms 20 --delay-rank 1
#   cuscope analyze rank_0.cuscope rank_1.cuscope
#
# With gloo several ranks share one GPU; with NCCL each needs its own (NCCL refuses two ranks on one
# device). --seconds keeps it running at least that long (for monitor mode and a scrape).
import argparse
import os
import time

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--backend", default="gloo")
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--size", type=int, default=2048)
parser.add_argument("--delay-ms", type=float, default=0)
parser.add_argument("--delay-rank", type=int, default=1)
parser.add_argument("--seconds", type=float, default=0)
args = parser.parse_args()

dist.init_process_group(args.backend)
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
torch.cuda.set_device(device)
torch.manual_seed(rank)
a = torch.randn(args.size, args.size, device=device)
b = torch.randn(args.size, args.size, device=device)
grad = torch.zeros(1 << 20, device=device)

# Clock cycles per millisecond of the spin kernel, measured: the delay is then known in time.
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda._sleep(1_000_000)  # warm-up: the kernel loads
start.record()
torch.cuda._sleep(20_000_000)
end.record()
torch.cuda.synchronize()
cycles_per_ms = 20_000_000 / start.elapsed_time(end)
delay_cycles = int(args.delay_ms * cycles_per_ms)

began = time.monotonic()
step = 0
while step < args.steps or time.monotonic() - began < args.seconds:
    torch.cuda.nvtx.range_push("step")
    for _ in range(4):
        c = a @ b
    if rank == args.delay_rank and delay_cycles > 0:
        torch.cuda._sleep(delay_cycles)
    grad.add_(c[0, :1].sum())
    dist.all_reduce(grad)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    step += 1

print(f"rank {rank} of {world} ({args.backend}): {step} steps, delay {args.delay_ms} ms "
      f"({delay_cycles} cycles at {cycles_per_ms:.0f}/ms) on rank {args.delay_rank}; grad[0] {grad[0].item():.3f}")
dist.destroy_process_group()
