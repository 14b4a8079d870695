"""TL102: a mask built on the host in forward, combined with the input (unsafe fix, device of the input)."""
import torch
from torch import nn


class Masked(nn.Module):
    def forward(self, x, lengths):
        mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        return x * mask[..., None]


def run():
    x = torch.randn(2, 5, 3)
    return Masked()(x, torch.tensor([2, 5]))
