"""Evaluate a trained classifier: load a checkpoint, run the test set under no_grad,
report accuracy, a confusion matrix and latency."""

import argparse
import json
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


class FlipTTA(nn.Module):
    """Average the logits of an image and its mirror."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return (self.model(x) + self.model(torch.flip(x, dims=[3]))) / 2


class WeightedEnsemble(nn.Module):
    def __init__(self, members, weights):
        super().__init__()
        self.members = nn.ModuleList(members)
        self.weights = weights

    def forward(self, x):
        logits = torch.stack([m(x) for m in self.members])
        w = torch.tensor(self.weights, dtype=logits.dtype)  # known miss (TL102): `self.weights` may be a tensor
        return (logits * w.view(-1, 1, 1)).sum(0) / w.sum()


class RejectOption(nn.Module):
    def __init__(self, model, threshold=0.5):
        super().__init__()
        self.model = model
        self.threshold = threshold

    def forward(self, x):
        probs = self.model(x).softmax(dim=-1)
        if probs.max() < self.threshold:  # expect: TL201
            return None
        return probs


def load_model(path, num_classes, device):
    model = models.resnet50(num_classes=num_classes)
    state = torch.load(path, map_location="cpu")
    state = state.get("state_dict", state)
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    model.load_state_dict(state)
    return model.to(device).eval()


@torch.no_grad()
def evaluate(model, loader, device, num_classes):
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long, device=device)
    correct, seen = 0, 0
    all_probs = []
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        logits = model(images)
        preds = logits.argmax(dim=1)
        correct += (preds == targets).sum().item()
        seen += targets.numel()
        confusion += torch.bincount(targets * num_classes + preds, minlength=num_classes ** 2).view(
            num_classes, num_classes
        )
        all_probs.append(F.softmax(logits, dim=1).cpu())
    return correct / seen, confusion.cpu(), torch.cat(all_probs)


@torch.no_grad()
def evaluate_loss(model, loader, device):
    total, count = 0.0, 0
    for images, targets in loader:
        images, targets = images.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        loss = F.cross_entropy(model(images), targets, reduction="sum")
        total += loss.item()
        count += targets.numel()
    return total / count


def top_predictions(probs, classes, k=5):
    top = probs.topk(k, dim=1)
    return [
        [(classes[i], round(p, 4)) for p, i in zip(values.tolist(), indices.tolist())]
        for values, indices in zip(top.values, top.indices)
    ]


def measure_latency(model, device, batch_size=1, iters=100):
    x = torch.randn(batch_size, 3, 224, 224, device=device)
    with torch.no_grad():
        for _ in range(10):
            model(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            model(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters * 1000


def measure_latency_once(model, x):
    with torch.no_grad():
        start = time.perf_counter()
        out = model(x)
        elapsed = time.perf_counter() - start  # known miss (TL601): `x` is not known to be a tensor
    return out, elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("--data", default="./data")
    parser.add_argument("--tta", action="store_true")
    parser.add_argument("--out", default="eval.json")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transform = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    test_set = datasets.ImageFolder(args.data, transform=transform)
    loader = DataLoader(test_set, batch_size=256, num_workers=8, pin_memory=True)
    model = load_model(args.checkpoint, len(test_set.classes), device)
    if args.tta:
        model = FlipTTA(model)

    acc, confusion, probs = evaluate(model, loader, device, len(test_set.classes))
    per_class = (confusion.diag().float() / confusion.sum(1).clamp(min=1)).numpy()
    worst = np.argsort(per_class)[:5]
    print(f"top-1 accuracy {acc:.4f}")
    for c in worst:
        print(f"  {test_set.classes[c]}: {per_class[c]:.3f}")
    print(f"latency {measure_latency(model, device):.2f} ms/image")
    with open(args.out, "w") as f:
        json.dump({"accuracy": acc, "per_class": per_class.tolist(),
                   "examples": top_predictions(probs[:10], test_set.classes)}, f)


if __name__ == "__main__":
    main()
