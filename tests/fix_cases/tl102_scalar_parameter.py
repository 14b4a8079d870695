"""TL102 in a loss whose `eps` is a float: the fix must not name `eps.device`."""
import torch
import torch.nn.functional as F


def smoothed_loss(logp, target, eps):
    weight = eps * torch.ones(logp.shape[1])
    return F.nll_loss(logp, target, weight=weight + logp.new_ones(logp.shape[1]))


def run():
    logp = torch.log_softmax(torch.randn(4, 3), dim=1)
    return smoothed_loss(logp, torch.tensor([0, 1, 2, 0]), 0.1)
