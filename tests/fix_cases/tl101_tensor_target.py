"""TL101: `.to(tensor)` takes that tensor's device and dtype; never folded into `device=`."""
import torch


def run():
    ranking = torch.arange(6, dtype=torch.float64)
    ones = torch.ones(6).to(ranking)
    return ones, ones.dtype
