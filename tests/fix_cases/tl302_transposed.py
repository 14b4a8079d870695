"""TL302: an HWC array transposed for from_numpy (unsafe: the tensor no longer shares the array)."""
import numpy as np
import torch


def run():
    img = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
    t = torch.from_numpy(img.transpose(2, 0, 1))
    return t, t.shape
