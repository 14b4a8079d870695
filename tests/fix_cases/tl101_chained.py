"""TL101, the chained form: deterministic factories folded with the device only (safe)."""
import torch

device = torch.device("cuda")


def run():
    ones = torch.ones(4, 3).to(device)
    eye = torch.eye(3).cuda()
    mask = torch.zeros(2, 5).view(5, 2).to(device, non_blocking=True)
    steps = torch.arange(0, 10, 2).to(device)
    half = torch.zeros(3).to(device, torch.float16)
    ref = torch.zeros(2, dtype=torch.float64)
    like = torch.ones(2).type_as(ref)
    memory = (
        torch.zeros(2, 4)
        .float()
        .to(device)
    )  # the parentheses belong to the move
    return ones, eye, mask, steps, half, like, memory
