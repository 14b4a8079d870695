"""Offline data preparation that stays on the CPU on purpose: decode, normalise, split, shard.

Nothing here runs per training step, so it must produce no findings."""

import argparse
import json
import os
import time
from collections import Counter

import cv2
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class RawImages(Dataset):
    def __init__(self, paths, size):
        self.paths = paths
        self.size = size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        img = cv2.imread(self.paths[index])[:, :, ::-1]
        img = cv2.resize(np.ascontiguousarray(img), (self.size, self.size), interpolation=cv2.INTER_AREA)
        return torch.from_numpy(img).permute(2, 0, 1)


class ToTensor:
    def __call__(self, sample):
        image, label = sample["image"], sample["label"]
        image = image.transpose((2, 0, 1))
        return {"image": torch.from_numpy(image), "label": torch.tensor(label, dtype=torch.long)}  # expect: TL302


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image):
        if np.random.rand() < self.p:
            return np.flip(image, axis=1).copy()
        return image


def channel_stats(paths, size=64, workers=8):
    """Per-channel mean and std over the whole dataset, in one pass."""
    loader = DataLoader(RawImages(paths, size), batch_size=256, num_workers=workers)
    total = torch.zeros(3, dtype=torch.float64)
    total_sq = torch.zeros(3, dtype=torch.float64)
    count = 0
    for batch in loader:
        batch = batch.double() / 255.0
        total += batch.sum(dim=(0, 2, 3))
        total_sq += (batch ** 2).sum(dim=(0, 2, 3))
        count += batch.shape[0] * batch.shape[2] * batch.shape[3]
    mean = total / count
    std = (total_sq / count - mean ** 2).sqrt()
    return mean.tolist(), std.tolist()


def encode_labels(label_names):
    classes = sorted(set(label_names))
    class_to_idx = {name: i for i, name in enumerate(classes)}
    labels = torch.tensor([class_to_idx[name] for name in label_names], dtype=torch.long)
    if (labels < 0).any():
        raise ValueError("negative label")
    counts = torch.bincount(labels, minlength=len(classes))
    for i in range(counts.shape[0]):
        if counts[i] == 0:
            print(f"warning: class {classes[i]} has no samples")
    weights = 1.0 / counts.clamp(min=1).float()
    return labels, classes, weights / weights.sum()


def class_histogram(labels):
    histogram = Counter()
    for label in labels:
        histogram[label.item()] += 1
    return dict(histogram)


def pad_sequences(sequences, pad_id=0):
    lengths = torch.tensor([len(s) for s in sequences])
    padded = torch.full((len(sequences), int(lengths.max())), pad_id, dtype=torch.long)
    for i, seq in enumerate(sequences):
        padded[i, : len(seq)] = seq
    return padded, lengths


def collate_fn(batch):
    tokens, labels = zip(*batch)
    padded, lengths = pad_sequences([torch.as_tensor(t) for t in tokens])
    return padded, lengths, torch.tensor(labels)


def token_lengths(token_ids, pad_id=0):
    return [int((row != pad_id).sum()) for row in token_ids]


def train_val_split(n, val_fraction=0.1, seed=0):
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    n_val = int(n * val_fraction)
    return perm[n_val:].tolist(), perm[:n_val].tolist()


def smooth_loss(losses, beta=0.98):
    """Bias-corrected exponential moving average of a recorded loss curve, for plotting."""
    avg, smoothed = 0.0, []
    for i, value in enumerate(losses):
        avg = beta * avg + (1 - beta) * value
        smoothed.append(avg / (1 - beta ** (i + 1)))
    return smoothed


def write_shards(images, labels, out_dir, shard_size=10000):
    os.makedirs(out_dir, exist_ok=True)
    images = torch.from_numpy(np.stack(images))
    for shard, start in enumerate(range(0, images.shape[0], shard_size)):
        chunk = images[start : start + shard_size]
        torch.save({"images": chunk.clone(), "labels": labels[start : start + shard_size].clone()},
                   os.path.join(out_dir, f"shard_{shard:05d}.pt"))
    for i in range(images.shape[0]):
        if images[i].float().mean() < 1.0:
            print(f"image {i} is almost black")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("index", help="JSON list of {path, label}")
    parser.add_argument("--out", default="prepared")
    parser.add_argument("--size", type=int, default=64)
    args = parser.parse_args()

    with open(args.index) as f:
        records = json.load(f)
    paths = [r["path"] for r in records]
    labels, classes, weights = encode_labels([r["label"] for r in records])

    start = time.perf_counter()
    mean, std = channel_stats(paths, args.size)
    print(f"stats in {time.perf_counter() - start:.1f}s: mean {mean} std {std}")

    start = time.perf_counter()
    images = [cv2.resize(cv2.imread(p), (args.size, args.size)) for p in paths]
    normalised = (torch.from_numpy(np.stack(images)).float() / 255.0 - torch.tensor(mean)) / torch.tensor(std)
    print(f"decoded {len(images)} images in {time.perf_counter() - start:.1f}s, max {normalised.max().item():.2f}")

    train_idx, val_idx = train_val_split(len(paths))
    write_shards([images[i] for i in train_idx], labels[train_idx], os.path.join(args.out, "train"))
    write_shards([images[i] for i in val_idx], labels[val_idx], os.path.join(args.out, "val"))
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"classes": classes, "weights": weights.tolist(), "mean": mean, "std": std}, f)
    print(class_histogram(labels))


if __name__ == "__main__":
    main()
