# A cuBLAS GEMM from a real program: PyTorch multiplies two 8192 x 8192 half-precision matrices
# (tensor cores) and one pair in single precision, and prints a checksum of both results.
#
#   python3 examples/torch_gemm.py [--iterations N]
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=1)
args = parser.parse_args()

torch.manual_seed(0)
n = 8192
a16 = torch.randn(n, n, device="cuda", dtype=torch.float16)
b16 = torch.randn(n, n, device="cuda", dtype=torch.float16)
a32 = torch.randn(4096, 4096, device="cuda")
b32 = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
for _ in range(args.iterations):
    c16 = a16 @ b16
    c32 = a32 @ b32
torch.cuda.synchronize()
print(f"torch_gemm n={n} iterations={args.iterations}")
print(f"checksum_fp16={c16.float().abs().sum().item():.6e}")
print(f"checksum_fp32={c32.abs().sum().item():.6e}")
