# Syncs that each cost little: a PyTorch step loop that reads its loss back with .item() after
# every step of three small kernels. Each read-back waits only for those three kernels, but then
# the GPU sits idle until the host has launched the next step: the queue drains at every step.
# The fixed twin (--fixed) accumulates the loss on the GPU and reads it back once every --every
# steps (the advice of cuscope's sync.points). Both print the summed loss (the twin sums in float32
# on the GPU, so the last digits differ).
#
#   python3 examples/torch_item_sync.py [--steps N] [--fixed] [--every N]
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=2200)
parser.add_argument("--fixed", action="store_true")
parser.add_argument("--every", type=int, default=100)
args = parser.parse_args()

torch.manual_seed(0)
x = torch.randn(1 << 16, device="cuda")
w = torch.randn(1 << 16, device="cuda")


def step(x):
    x = torch.addcmul(x, x, w, value=-1e-3)  # kernel 1
    x = torch.tanh(x)                         # kernel 2
    return x, x.sum()                         # kernel 3: the loss


for _ in range(20):  # warm-up: the kernels load once
    x, loss = step(x)
torch.cuda.synchronize()

total = 0.0
if args.fixed:
    on_gpu = torch.zeros((), device="cuda")
    for i in range(args.steps):
        x, loss = step(x)
        on_gpu += loss
        if (i + 1) % args.every == 0 or i + 1 == args.steps:
            total += on_gpu.item()  # one read-back per --every steps
            on_gpu.zero_()
else:
    for i in range(args.steps):
        x, loss = step(x)
        total += loss.item()  # a synchronizing read-back every step
torch.cuda.synchronize()
print(f"torch_item_sync steps={args.steps} fixed={args.fixed} loss_sum={total:.6e}")
