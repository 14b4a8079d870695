"""TL101 with a dtype: made in another dtype, these give other values or fail (no fix)."""
import torch

device = torch.device("cuda")


def run():
    quarters = torch.arange(0, 1, 0.25).to(device, torch.long)
    perm = torch.randperm(5000).to(device, torch.float16)
    noise = torch.randn(2, 3).to(device, torch.long)
    return quarters, perm.sort().values, noise.shape
