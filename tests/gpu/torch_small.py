# A small PyTorch program with a GEMM and elementwise kernels; prints a deterministic checksum.
import torch

torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
for _ in range(5):
    c = torch.relu(a @ b) * 0.5 + 1.0
torch.cuda.synchronize()
print(f"checksum={c.double().sum().item():.6e}")
