"""Custom losses and metrics: vectorised ones next to the slow versions people write first."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def focal_loss(logits, targets, alpha=0.25, gamma=2.0, reduction="mean"):
    """Sigmoid focal loss, vectorised."""
    prob = logits.sigmoid()
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = prob * targets + (1 - prob) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


class DiceLoss(nn.Module):
    def __init__(self, smooth=1.0, ignore_index=None):
        super().__init__()
        self.smooth = smooth
        self.ignore_index = ignore_index

    def forward(self, logits, target):
        num_classes = logits.shape[1]
        probs = logits.softmax(dim=1)
        one_hot = F.one_hot(target.clamp(min=0), num_classes).permute(0, 3, 1, 2).to(probs.dtype)
        if self.ignore_index is not None:
            keep = (target != self.ignore_index).unsqueeze(1)
            probs = probs * keep
            one_hot = one_hot * keep
        dims = (0, 2, 3)
        intersection = (probs * one_hot).sum(dims)
        cardinality = probs.sum(dims) + one_hot.sum(dims)
        dice = (2 * intersection + self.smooth) / (cardinality + self.smooth)
        return 1 - dice.mean()


class MultiScaleLoss(nn.Module):
    """Deep supervision: the same loss on every decoder output, weighted per scale."""

    def __init__(self, weights=(1.0, 0.5, 0.25)):
        super().__init__()
        self.weights = weights
        self.register_buffer("class_weight", torch.tensor([1.0, 2.0, 5.0]))

    def forward(self, outputs, target):
        total = outputs[0].new_zeros(())
        for weight, out in zip(self.weights, outputs):
            resized = F.interpolate(target[:, None].float(), size=out.shape[-2:], mode="nearest")
            total = total + weight * F.cross_entropy(out, resized[:, 0].long(), weight=self.class_weight)
        return total


class WeightedCrossEntropy(nn.Module):
    def forward(self, logits, target):
        weight = torch.tensor([1.0, 2.0, 5.0], device=logits.device)  # expect: TL103
        return F.cross_entropy(logits, target, weight=weight)


class NormalizedL1(nn.Module):
    def forward(self, pred, target):
        mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).to(pred.device)  # expect: TL103
        return (pred - target).abs().div(mean).mean()


class InfoNCELoss(nn.Module):
    """Contrastive loss over a batch of paired embeddings."""

    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature

    def forward(self, z_a, z_b):
        z_a = F.normalize(z_a, dim=1)
        z_b = F.normalize(z_b, dim=1)
        logits = z_a @ z_b.t() / self.temperature
        labels = torch.arange(z_a.shape[0], device=z_a.device)
        return F.cross_entropy(logits, labels)


class InfoNCELossSlow(nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature

    def forward(self, z_a, z_b):
        z_a = F.normalize(z_a, dim=1)
        z_b = F.normalize(z_b, dim=1)
        b = z_a.shape[0]
        sim = z_a @ z_b.t() / self.temperature
        self_mask = torch.eye(b, dtype=torch.bool)  # expect: TL102
        sim = sim.masked_fill(self_mask, -1e4)
        labels = torch.arange(b)  # expect: TL102
        return F.cross_entropy(sim, labels)


class TripletLossSlow(nn.Module):
    def __init__(self, margin=0.2):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive):
        n = anchor.size(0)
        perm = torch.randperm(n)  # expect: TL102
        negative = positive[perm]
        losses = []
        for i in range(n):  # expect: TL202
            d_pos = (anchor[i] - positive[i]).pow(2).sum()
            d_neg = (anchor[i] - negative[i]).pow(2).sum()
            losses.append(F.relu(d_pos - d_neg + self.margin))
        return torch.stack(losses).mean()


def per_sample_l1_loss(pred, target):
    errors = []
    for i in range(pred.shape[0]):  # expect: TL202
        errors.append((pred[i] - target[i]).abs().mean().item())  # expect: TL201
    return sum(errors) / len(errors)


def masked_mse_loss(pred, target, mask):
    if mask.sum() == 0:  # expect: TL201
        return pred.sum() * 0.0
    diff = (pred - target) ** 2
    return (diff * mask).sum() / mask.sum()


def kl_loss(mu, logvar):
    """VAE KL term, batch mean."""
    return -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))


class GaussianNLLLoss(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.log_2pi = math.log(2 * math.pi)

    def forward(self, mean, var, target):
        assert mean.shape == target.shape, f"shape mismatch {mean.shape} vs {target.shape}"
        var = var.clamp(min=self.eps)
        return 0.5 * (torch.log(var) + (target - mean) ** 2 / var + self.log_2pi).mean()


class RunningAccuracy(nn.Module):
    """Accumulates on the device; `compute` is called once per epoch."""

    def __init__(self):
        super().__init__()
        self.register_buffer("correct", torch.zeros((), dtype=torch.long))
        self.register_buffer("total", torch.zeros((), dtype=torch.long))

    def update(self, preds, target):
        self.correct += (preds.argmax(dim=1) == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total.clamp(min=1)

    def reset(self):
        self.correct.zero_()
        self.total.zero_()


def iou_per_class(pred, target, num_classes):
    """Confusion-matrix IoU with one bincount."""
    k = (target >= 0) & (target < num_classes)
    hist = torch.bincount(num_classes * target[k] + pred[k], minlength=num_classes ** 2)
    hist = hist.reshape(num_classes, num_classes).float()
    return hist.diag() / (hist.sum(0) + hist.sum(1) - hist.diag()).clamp(min=1)


def build_loss(name):
    """Called once from the config: constants built here are built once."""
    if name == "focal":
        return lambda logits, target: focal_loss(logits, target)
    if name == "weighted_ce":
        weight = torch.tensor([1.0, 2.0, 5.0])
        return nn.CrossEntropyLoss(weight=weight)
    return nn.CrossEntropyLoss(label_smoothing=0.1)
