"""Context beyond one function: every case the recall issue listed is found, and every false
positive it listed is gone. Each snippet is linted with the rules on by default (preview
rules off, as a user runs it); the expected findings are marked in it with ``# expect: TLnnn`` (as in tests/realistic)."""

import textwrap

import pytest

from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES
from torchlint.rules.base import expected_findings

DEFAULT_RULES = [rule for rule in ALL_RULES if not rule.preview]


def findings(code, hot_functions=frozenset()):
    result = lint_text(textwrap.dedent(code), "train.py", DEFAULT_RULES, frozenset(hot_functions))
    assert result.parsed and not result.errors
    return {(d.line, d.code) for d in result.diagnostics}


def check(code, hot_functions=frozenset()):
    assert findings(code, hot_functions) == expected_findings(textwrap.dedent(code))


FOUND = {
    "per-element syncs in a training loop": """
        import torch.nn.functional as F

        def train(model, loader, opt):
            correct = 0
            for xb, yb in loader:
                logits = model(xb)
                loss = F.cross_entropy(logits, yb); loss.backward(); opt.step()
                for i in range(logits.shape[0]):  # expect: TL202
                    correct += int(logits[i].argmax().item() == yb[i].item())  # expect: TL201
    """,
    "per-element syncs in a comprehension": """
        import torch.nn.functional as F

        def train(model, loader, opt):
            for xb, yb in loader:
                logits = model(xb)
                F.cross_entropy(logits, yb).backward()
                opt.step()
                hits = [p.item() for p in logits.argmax(1)]  # expect: TL201 TL202
    """,
    "per-element syncs in a Lightning training_step": """
        import torch.nn.functional as F
        import pytorch_lightning as pl

        class Net(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                x, y = batch
                logits = self.net(x)
                for i in range(len(y)):  # expect: TL202
                    self.hits += int(logits[i].argmax() == y[i])  # expect: TL201
                return F.cross_entropy(logits, y)
    """,
    "per-element syncs in a helper called from the loop": """
        import torch.nn.functional as F

        def count_correct(logits, y):
            correct = 0
            for i in range(logits.shape[0]):  # expect: TL202
                correct += int(logits[i].argmax().item() == y[i].item())  # expect: TL201
            return correct

        def train(model, loader, opt):
            for x, y in loader:
                logits = model(x)
                F.cross_entropy(logits, y).backward()
                opt.step()
                count_correct(logits, y)
    """,
    "a loader built at module level and iterated in train(epoch)": """
        import torch
        from torch.utils.data import DataLoader

        device = "cuda" if torch.cuda.is_available() else "cpu"
        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)  # expect: TL502 TL503

        def train(epoch):
            for x, y in loader:
                x, y = x.to(device), y.to(device)

        for epoch in range(10):
            train(epoch)
    """,
    "a loader built in main() and passed to train(loader)": """
        import torch
        from torch.utils.data import DataLoader

        def train(model, loader):
            for x, y in loader:
                model(x.cuda(), y.cuda())

        def main(model, dataset):
            loader = DataLoader(dataset, batch_size=64, num_workers=4)  # expect: TL502 TL503
            for epoch in range(10):
                train(model, loader)
    """,
    "a loader returned by Lightning hooks": """
        import pytorch_lightning as pl
        from torch.utils.data import DataLoader

        class Data(pl.LightningDataModule):
            def train_dataloader(self):
                return DataLoader(self.train_set, batch_size=64, shuffle=True, num_workers=8)  # expect: TL502 TL503

            def val_dataloader(self):
                return DataLoader(self.val_set, batch_size=64, num_workers=8, pin_memory=True)  # expect: TL502
    """,
    "a loader built from a kwargs dict": """
        from torch.utils.data import DataLoader

        def main(dataset, model):
            loader_args = dict(batch_size=64, num_workers=4, pin_memory=True)
            loader = DataLoader(dataset, shuffle=True, **loader_args)  # expect: TL502
            for epoch in range(10):
                for batch in loader:
                    model(batch)
    """,
    "a kwargs dict changed after it is built, as in the MNIST example": """
        import torch
        import torch.nn.functional as F

        def train(model, device, train_loader, optimizer):
            for data, target in train_loader:
                data, target = data.to(device), target.to(device)  # expect: TL503
                F.nll_loss(model(data), target).backward()
                optimizer.step()

        def main(dataset):
            use_cuda = torch.cuda.is_available()
            device = torch.device("cuda" if use_cuda else "cpu")
            train_kwargs = {"batch_size": 64}
            if use_cuda:
                cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
                train_kwargs.update(cuda_kwargs)
            train_loader = torch.utils.data.DataLoader(dataset, **train_kwargs)  # expect: TL502
            for epoch in range(1, 15):
                train(model, device, train_loader, optimizer)
    """,
    "a kwargs dict chosen by a conditional expression, as in the VAE example": """
        import torch

        cuda = torch.cuda.is_available()
        device = torch.device("cuda" if cuda else "cpu")
        kwargs = {"num_workers": 1, "pin_memory": True} if cuda else {}
        train_loader = torch.utils.data.DataLoader(dataset, batch_size=128, shuffle=True, **kwargs)  # expect: TL502

        def train(epoch):
            for data, _ in train_loader:
                data = data.to(device)  # expect: TL503
                model(data).sum().backward()
                optimizer.step()

        for epoch in range(1, 11):
            train(epoch)
    """,
    "a loader walked through MetricLogger.log_every, as in torchvision's reference scripts": """
        import torch

        def train_one_epoch(model, optimizer, data_loader, device, metric_logger):
            for image, target in metric_logger.log_every(data_loader, 10, "train"):
                image = image.to(device)  # expect: TL503
                model(image, target).backward()
                optimizer.step()

        def main(dataset, model, optimizer, device, epochs):
            data_loader = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=8, pin_memory=True)  # expect: TL502
            for epoch in range(epochs):
                train_one_epoch(model, optimizer, data_loader, device, MetricLogger())
    """,
    "loss code known by its base class, also from another file": """
        from torch.nn.modules.loss import _Loss
        from .losses import BaseCriterion

        class Focal(_Loss):
            def forward(self, logits, target):
                if target.sum() == 0:  # expect: TL201
                    return logits.sum() * 0
                return logits.mean()

        class Weighted(BaseCriterion):
            def __call__(self, logits, target):
                return logits.mean().item()  # expect: TL201
    """,
    "a task-style train_step that calls backward": """
        import torch.nn.functional as F

        class Task:
            def train_step(self, model, batch, optimizer):
                x, y = batch
                logits = model(x)
                loss = F.cross_entropy(logits, y)
                loss.backward()
                optimizer.step()
                return [p.item() for p in logits.max(1).values]  # expect: TL201
    """,
    "tensors held on self": """
        import torch
        from torch import nn

        class CLIP(nn.Module):
            def __init__(self):
                super().__init__()
                self.logit_scale = nn.Parameter(torch.ones([]) * 2.6592)
                self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

            def forward(self, image, text):
                scale = self.logit_scale.exp().item()  # expect: TL201
                momentum = 1.0 / float(self.num_batches_tracked)  # expect: TL201
                return scale * image @ text.t() * momentum
    """,
    "legacy constructors and in-place initialisation across statements": """
        import torch

        def init(b, n, x, device):
            z = torch.FloatTensor(b, n).fill_(0).to(device)  # expect: TL101
            h = torch.zeros(b, n)  # expect: TL101
            h = h.to(device)
            a = torch.Tensor(n, 1)  # expect: TL101
            a.uniform_()
            a = a.cuda()
            w = x.new_tensor(torch.rand(3))  # expect: TL101
            return z, h, a, w
    """,
    "loops over tensor elements": """
        import torch
        from torch import nn

        class PerClass(nn.Module):
            def forward(self, logits, labels):
                total = 0
                for c in labels.unique():  # expect: TL202
                    total = total + logits[labels == c].mean()
                keep = torch.nonzero(labels)
                for i in range(len(keep)):  # expect: TL202
                    total = total + logits[keep[i]].sum()
                return total + sum([logits[:, j].mean() for j in range(logits.size(1))])  # expect: TL202
    """,
    "timing a training loop without a sync": """
        import time
        import torch

        def train(model, loader, criterion, optimizer):
            end = time.time()
            for images, target in loader:
                images = images.cuda(non_blocking=True)
                loss = criterion(model(images), target)
                losses.update(loss.item(), images.size(0))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                batch_time.update(time.time() - end)  # expect: TL601
                end = time.time()
    """,
    "an iteration time read before the step's .item()": """
        import time
        import torch

        def train(model, get_batch, optimizer, max_iters):
            t0 = time.time()
            for it in range(max_iters):
                x, y = get_batch()
                logits, loss = model(x.cuda(), y.cuda())
                loss.backward()
                optimizer.step()
                t1 = time.time()  # expect: TL601
                dt = t1 - t0
                t0 = t1
                print(f"iter {it}: loss {loss.item():.4f}, time {dt * 1000:.2f}ms")
    """,
    "tensor-ness through a conditional expression": """
        import torch
        from torch import nn

        class Masked(nn.Module):
            def forward(self, logits, target, mask, reduce: bool):
                loss = nn.functional.cross_entropy(logits, target, reduction="none")
                if mask is not None:
                    loss = (loss * mask).sum() if reduce else loss * mask
                self.last = loss.item()  # expect: TL201
                return loss
    """,
    "tensor-ness through arithmetic several operations deep": """
        import torch
        from torch import nn

        class DiceLoss(nn.Module):
            def forward(self, pred, gt, m):
                intersection = torch.sum(pred * gt * m)
                union = torch.sum(pred * m) + torch.sum(gt * m) + self.eps
                loss = 1 - 2.0 * intersection / union
                if loss > 1:  # expect: TL201
                    print(intersection, union)
                return loss
    """,
    "parts of a tensor: unpacked rows, loop targets, enumerate": """
        import torch
        from torch import nn

        class Tokens(nn.Module):
            def forward(self, input_ids, mask, classes: torch.Tensor, tiles: torch.Tensor):
                idxs = torch.nonzero(input_ids == 5)
                for i in range(idxs.shape[0]):  # expect: TL202
                    row, col = idxs[i]
                    if col == 0:  # expect: TL201
                        mask[row, col] = True
                kept = [mask for c in classes if c > self.last]  # expect: TL201, TL202
                for b, (h, w) in enumerate(tiles):  # expect: TL202
                    mask[b, :int(h * w)] = False  # expect: TL201
                return mask, kept
    """,
}

SILENT = {
    "workers added to a kwargs dict by item": """
        from torch.utils.data import DataLoader

        def main(dataset, workers):
            kwargs = {"batch_size": 64}
            kwargs["num_workers"] = workers
            return DataLoader(dataset, **kwargs)
    """,
    "the starred rest of an unpacked split is a list of chunks": """
        import torch
        from torch import nn

        class Head(nn.Module):
            def forward(self, preds, idx):
                boxes, scores, *extra = preds.split([4, 80, 32], dim=-1)
                return torch.cat([boxes, *(self._gather(e, idx) for e in extra)], dim=-1)
    """,
    "a view-only comprehension is unbind": """
        import torch
        from torch import nn

        class Head(nn.Module):
            def forward(self, cls_scores, bbox_preds):
                num_imgs = cls_scores.size(0)
                cls_scores_list = [cls_scores[i] for i in range(num_imgs)]
                return self.get_targets(cls_scores_list, bbox_preds)
    """,
    "a class constructed in forward does not make its other methods hot": """
        import torch
        from torch import nn

        class Stats:
            def report(self, t):
                return t.mean().item()

        class M(nn.Module):
            def forward(self, x):
                self.stats = Stats()
                return x * 2
    """,
    "a function named like a loss that evaluates a dataset": """
        import torch
        import torch.nn.functional as F

        def epoch_loss(model, loader):
            total = 0.0
            for x, y in loader:
                total += F.mse_loss(model(x), y).item()
            return total / len(loader)
    """,
    "one pass over a loader that mentions len(loader)": """
        from torch.utils.data import DataLoader

        def evaluate(model, dataset):
            loader = DataLoader(dataset, batch_size=64, num_workers=4)
            for i, batch in enumerate(loader):
                if i == len(loader) - 1:
                    print("last batch")
                model(batch)
    """,
    "a dataset reversed only in a branch that returns": """
        import numpy as np
        import torch

        def load(img, flip):
            if flip:
                img = img[:, ::-1]
                return torch.from_numpy(img.copy())
            return torch.from_numpy(img)
    """,
    "a name that is a list in one branch and a tensor in the other": """
        import torch
        from torch import nn

        class Pad(nn.Module):
            def forward(self, x, use_list):
                if use_list:
                    pad = [0, 0, 0]
                else:
                    pad = torch.zeros(3)
                return x, [p for p in pad]
    """,
    "an LSTM-cell decoder with its states in lists": """
        import torch
        from torch import nn

        class Decoder(nn.Module):
            def forward(self, x, h, c):
                for t in range(x.shape[1]):
                    h[0], c[0] = self.cells[0](x[:, t], (h[0], c[0]))
                    for layer in range(1, self.layers):
                        h[layer], c[layer] = self.cells[layer](h[layer - 1], (h[layer], c[layer]))
                return h[-1]
    """,
    "a one-element zero placeholder that is only logged": """
        import torch
        from torch import nn

        class Loss(nn.Module):
            def forward(self, pred, target):
                aux = torch.tensor([0.0])
                self.log_value = aux
                return (pred - target).abs().mean()
    """,
    "export-only branches": """
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                if self.onnx_trace:
                    scale = torch.tensor([0.5, 2.0])
                    return x * scale.item()
                return x
    """,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found(name):
    check(FOUND[name])


def test_a_function_listed_in_hot_functions():
    code = """
        import torch

        def log_batch(logits):
            return [v.item() for v in logits.softmax(1).max(1).values]  # expect: TL201
    """
    check(code, {"log_batch"})


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent(name):
    assert findings(SILENT[name]) == set()


@pytest.mark.parametrize("setup", ["import unittest\n", "def test_epoch(model):\n    pass\n"])
def test_a_test_function_or_unittest_import_does_not_silence_the_file(setup):
    code = setup + textwrap.dedent("""
        from torch.utils.data import DataLoader
        loader = DataLoader(dataset, batch_size=8)
    """)
    assert {code for _, code in findings(code)} == {"TL501"}
