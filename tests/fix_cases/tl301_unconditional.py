"""TL301: a BGR image reversed on every path (safe: the call raised before the fix)."""
import numpy as np
import torch

ORIGINAL_RAISES = ValueError  # from_numpy rejects the negative stride: what the fix is for


def load(img):
    img = img[:, :, ::-1]
    return torch.from_numpy(img)


def run():
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    return load(img)
