"""TL802 cudnn-benchmark-off: a convnet trained on CUDA without choosing ``cudnn.benchmark``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.context import STEP
from torchlint.context.scopes import trains
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name

_CONVOLUTIONS = frozenset(
    f"torch.nn.{name}" for name in ("Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose3d", "functional.conv2d",
                                    "functional.conv3d")
)
_CUDNN_FLAGS = frozenset({"benchmark", "deterministic", "enabled"})  # `cudnn.<flag> = ...`: a choice made
_CHOICE_CALLS = frozenset({"torch.backends.cudnn.flags", "torch.use_deterministic_algorithms"})


class CudnnBenchmarkOff(Rule):
    code = "TL802"
    name = "cudnn-benchmark-off"
    message = (
        "convnet trained on CUDA without `torch.backends.cudnn.benchmark = True`: cuDNN runs a heuristic "
        "choice of algorithm per convolution instead of the fastest for your shapes; set it once at start-up "
        "when input sizes are fixed"
    )
    preview = True  # no labels in the accuracy benchmark yet, and no effect measured on an H100
    triggers = ("backward",)
    what = (
        "Finds training scripts for convolutional networks on CUDA that never set "
        "`torch.backends.cudnn.benchmark`: the file builds a convolution (`nn.Conv2d`, `nn.Conv3d`, their "
        "transposes, `F.conv2d`) or a torchvision model, has a training loop (a loop whose body calls "
        "`.backward()` or `optimizer.step()`) and moves work to CUDA. Reported once per file, at the first "
        "training loop. Any assignment to `cudnn.benchmark`, `cudnn.deterministic` or `cudnn.enabled` (whatever "
        "the value, under any import alias), `torch.backends.cudnn.flags(...)` and "
        "`torch.use_deterministic_algorithms(...)` count as a deliberate choice. Files that only define layers, "
        "have no convolution, run on the CPU only, or hold tests are not reported."
    )
    why = (
        "With `benchmark` off (the default), cuDNN picks each convolution's algorithm by a heuristic over its "
        "shapes instead of timing the candidates. With `benchmark = True`, the first call for each new input "
        "shape times the available algorithms and caches the fastest, which later calls of that shape reuse: for "
        "a network trained on fixed-size inputs the search is paid once. When input sizes change every step "
        "(variable image sizes, the last smaller batch aside) it searches again for each new shape, and the "
        "searches can cost more than they save. How much the search finds depends on the GPU, the cuDNN "
        "version and the shapes: on an H100 with cuDNN 9.19 the fixture's convnet trained no faster with it "
        "(*Measured* below), which is one reason the rule is in preview."
    )
    example = Invalid("""
        import torch
        from torch import nn

        model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for images, labels in loader:  # expect: TL802
            images, labels = images.cuda(), labels.cuda()
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    use_instead = Valid("""
        import torch
        from torch import nn

        torch.backends.cudnn.benchmark = True  # inputs are all 224x224: time the algorithms once
        model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for images, labels in loader:
            images, labels = images.cuda(), labels.cuda()
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    fix_safety = (
        "No fix: the setting is a judgement the linter cannot make from one file. Inputs whose sizes vary from "
        "step to step make `benchmark = True` search again for every new shape, and runs that must be "
        "reproducible may prefer `deterministic = True`; setting either flag, even to `False`, silences the rule."
    )
    valid = (
        Valid("""
            import torch.nn as nn
            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    self.conv = nn.Conv2d(c, c, 3, padding=1)
                def forward(self, x):
                    return self.conv(x).relu()
        """),
        Valid("""
            import torch
            model = torch.nn.Linear(10, 1).cuda()
            for x, y in loader:
                loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
                loss.backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            from torch.backends import cudnn
            import torchvision
            cudnn.benchmark = args.benchmark
            model = torchvision.models.resnet50().cuda()
            for x, y in loader:
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            from torchvision import models
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
            model = models.resnet18().to('cuda')
            for x, y in loader:
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            model = torch.nn.Conv2d(3, 8, 3)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
        """),
        Valid("""
            import pytest
            import torch
            def test_training_step():
                model = torch.nn.Conv2d(3, 8, 3).cuda()
                for _ in range(2):
                    model(torch.randn(1, 3, 8, 8, device='cuda')).sum().backward()
                    optimizer.step()
        """),
    )
    invalid = (
        Invalid("""
            import torch
            import torchvision.models as models

            def main(args):
                device = torch.device('cuda')
                model = models.__dict__[args.arch]().to(device)
                for epoch in range(args.epochs):
                    for i, (images, target) in enumerate(train_loader):  # expect: TL802
                        loss = criterion(model(images.to(device)), target.to(device))
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
        """),
        Invalid("""
            import torch
            from torch.nn import Conv3d

            net = Conv3d(1, 4, 3).cuda()
            step = 0
            while step < 100:  # expect: TL802
                net(volumes[step].cuda()).mean().backward()
                opt.step()
                step += 1
            for x in loader:
                net(x.cuda()).mean().backward()
                opt.step()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._loop: Optional[cst.CSTNode] = None  # the first training loop
        self._convolutions = False
        self._chosen = False

    def visit_For(self, node: cst.For) -> None:
        if self._loop is None and self.ctx.scope.hot_kind == STEP and trains(node):  # in the loop's own scope
            self._loop = node

    visit_While = visit_For

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func) or ""
        if qualname in _CONVOLUTIONS or qualname.startswith("torchvision.models."):
            self._convolutions = True
        elif qualname in _CHOICE_CALLS:
            self._chosen = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            parts = (dotted_name(target.target) or "").split(".")
            if len(parts) > 1 and parts[-2] == "cudnn" and parts[-1] in _CUDNN_FLAGS:
                self._chosen = True

    def leave_Module(self, node: cst.Module) -> None:
        convnet = self._convolutions or self.ctx.imports.imports("torchvision.models")
        if self._loop is None or not convnet or self._chosen or not self.ctx.uses_cuda or self.ctx.is_test_module:
            return
        self.report(self._loop)

