# torch.profiler inside a process cuscope is injected into: both want CUPTI.
import torch

x = torch.ones(1 << 20, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        x = x * 1.5 + 1.0
    torch.cuda.synchronize()
print(f"sum={x.double().sum().item():.6e}")
