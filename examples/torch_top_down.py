# A small transformer block in a loop, for the one-run top-down: attention (QKV projection,
# scaled dot-product attention, output projection), LayerNorm and a GELU MLP in half precision,
# run for a fixed number of steps. Prints the step count, the time per step and a checksum of the
# last output, so runs with and without profiling can be compared.
#
#   python3 examples/torch_top_down.py [--steps N] [--batch B] [--seq S] [--width D]
#   cuscope profile --top-down --duration 2 -- python3 examples/torch_top_down.py --steps 600
import argparse
import time

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=400)
parser.add_argument("--batch", type=int, default=16)
parser.add_argument("--seq", type=int, default=512)
parser.add_argument("--width", type=int, default=1024)
parser.add_argument("--heads", type=int, default=16)
args = parser.parse_args()

torch.manual_seed(0)
dev, dt = "cuda", torch.float16
d, h = args.width, args.heads
w_qkv = torch.randn(3 * d, d, device=dev, dtype=dt) / d**0.5
w_out = torch.randn(d, d, device=dev, dtype=dt) / d**0.5
w_up = torch.randn(4 * d, d, device=dev, dtype=dt) / d**0.5
w_down = torch.randn(d, 4 * d, device=dev, dtype=dt) / (4 * d) ** 0.5
ln1 = torch.nn.LayerNorm(d, device=dev, dtype=dt)
ln2 = torch.nn.LayerNorm(d, device=dev, dtype=dt)
x0 = torch.randn(args.batch, args.seq, d, device=dev, dtype=dt)


def block(x):
    b, s, _ = x.shape
    qkv = F.linear(ln1(x), w_qkv).view(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
    attn = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
    x = x + F.linear(attn.transpose(1, 2).reshape(b, s, d), w_out)
    return x + F.linear(F.gelu(F.linear(ln2(x), w_up)), w_down)


# The second half is timed on its own too: the first steps carry one-off costs (library loads,
# a profiler setting itself up), the second half shows the steady state.
half = args.steps // 2
with torch.no_grad():
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(args.steps):
        if i == half:
            torch.cuda.synchronize()
            t_half = time.perf_counter()
        y = block(x0)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
second_half = f" ms_per_step_second_half={1e3 * (t1 - t_half) / (args.steps - half):.3f}" if half else ""
print(f"torch_top_down steps={args.steps} ms_per_step={1e3 * (t1 - t0) / args.steps:.3f}{second_half}")
print(f"checksum={y.float().abs().sum().item():.6e}")
