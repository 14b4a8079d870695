"""TL301 with a conditional flip: on the other path the tensor shares the caller's array (unsafe)."""
import torch


def to_tensor(img, hflip):
    import numpy as np  # only here: a fix may not use `np` at module level

    if hflip:
        img = img[:, ::-1]
    t = torch.from_numpy(img.transpose(2, 0, 1))
    t.mul_(2)
    return t


def run():
    import numpy as np

    img = np.ones((2, 3, 3), dtype=np.float32)
    flipped = to_tensor(img.copy(), True)
    shared = img.copy()
    kept = to_tensor(shared, False)
    return flipped, kept, float(shared.sum())
