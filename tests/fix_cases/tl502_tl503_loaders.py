"""TL502 and TL503: a loader with workers, iterated every epoch, batches moved to the device."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def run():
    data = TensorDataset(torch.arange(8.0).view(8, 1))
    loader = DataLoader(data, batch_size=4, num_workers=1)
    total = torch.zeros(1)
    for epoch in range(2):
        for (x,) in loader:
            total += x.to("cuda").sum()
    return total
