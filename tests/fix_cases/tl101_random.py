"""TL101 on random factories and requires_grad: unsafe (another generator; a leaf tensor)."""
import torch

device = torch.device("cuda")


def run():
    torch.manual_seed(0)
    perm = torch.randperm(16).to(device)
    noise = torch.randn(3, 3, requires_grad=True).cuda()
    weights = torch.empty(4, 4).normal_().to(device)
    return perm.sort().values, noise.shape, noise.requires_grad, weights.shape
