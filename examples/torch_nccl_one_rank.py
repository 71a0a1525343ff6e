# NCCL's collectives on a one-rank communicator (one process, one GPU): what NCCL launches and
# what it marks with NVTX when there is no peer. NCCL copies (or, in place, does nothing) instead of
# launching a kernel; its NVTX ranges ("NCCL" domain) and their payloads (communicator, bytes) are
# still there, and `cuscope stats --report nccl_sum` counts the calls.
#
#   NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL cuscope profile -o one_rank -- python3 examples/torch_nccl_one_rank.py
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--elements", type=int, default=1 << 20)
args = parser.parse_args()

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1)
device = torch.device("cuda", 0)
torch.cuda.set_device(device)
x = torch.ones(args.elements, device=device)
out = torch.empty(args.elements, device=device)
for step in range(args.steps):
    torch.cuda.nvtx.range_push("step")
    dist.all_reduce(x)                          # in place
    dist.all_gather_into_tensor(out, x)         # out of place: a copy
    dist.reduce_scatter_tensor(out, x)
    dist.broadcast(x, src=0)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}: {args.steps} steps of 4 collectives on a "
      f"one-rank communicator, x[0] {x[0].item():.1f}")
dist.destroy_process_group()
