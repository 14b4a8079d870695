"""TL803 no-mixed-precision: a CUDA training loop in a file that never uses reduced precision."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.context import STEP, Scope
from torchlint.context.scopes import STEP_METHODS, trains
from torchlint.rules.base import Invalid, Rule, Valid

# Calls (by their last name) that run or prepare reduced-precision training: `torch.autocast(...)`,
# `torch.cuda.amp.GradScaler()`, `model.half()`, `x.bfloat16()`, apex's `amp.scale_loss(...)`.
_REDUCED_CALLS = frozenset({"autocast", "GradScaler", "half", "bfloat16", "scale_loss"})
_REDUCED_DTYPES = frozenset({"torch.float16", "torch.half", "torch.bfloat16"})
_PRECISION_KEYWORDS = frozenset({"precision", "mixed_precision"})  # Lightning, Fabric, accelerate
# Frameworks that set the precision from their own configuration or launcher, not in this file.
_FRAMEWORKS = ("accelerate", "lightning", "pytorch_lightning", "lightning_fabric", "deepspeed", "apex")
_FRAMEWORK_CLASSES = ("Trainer", "LightningModule")  # a loop in their subclasses is the framework's


class NoMixedPrecision(Rule):
    code = "TL803"
    name = "no-mixed-precision"
    message = (
        "CUDA training loop in full fp32: no autocast, GradScaler or half-precision model anywhere in the file; "
        "run the forward pass under `torch.autocast('cuda', dtype=torch.bfloat16)`"
    )
    preview = True  # the accuracy benchmark holds no labels for it yet: its precision is unmeasured
    triggers = ("backward",)
    what = (
        "Finds a training loop (a loop whose body calls both `.backward()` and `optimizer.step()`) in a file that moves "
        "work to CUDA and shows no reduced precision anywhere: no `torch.autocast`, `torch.cuda.amp.autocast` or "
        "`torch.amp.autocast`, no `GradScaler`, no `.half()` or `.bfloat16()`, no `torch.float16`/`torch.bfloat16` "
        "(`model.to(dtype=torch.bfloat16)`), no `precision=`/`mixed_precision=` argument. Reported once per file, at "
        "the first training loop. Files that use accelerate, Lightning, DeepSpeed or apex (which set the precision "
        "from their own configuration), loops in `training_step` methods or in subclasses of a `Trainer` or a "
        "`LightningModule`, CPU-only scripts and tests are not reported."
    )
    why = (
        "In fp32, matrix multiplications and convolutions do not run on the tensor cores at the throughput they "
        "reach in bf16 or fp16 (TF32, when enabled, uses them for fp32 at a lower rate). Under `torch.autocast`, "
        "those operations run in half precision while the weights, the optimizer and precision-sensitive "
        "operations (reductions, softmax, losses) stay in fp32, and the activations saved for the backward pass "
        "take half the memory."
    )
    example = Invalid("""
        import torch

        model = Net().cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        for x, y in loader:  # expect: TL803
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    use_instead = Valid("""
        import torch

        model = Net().cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    fix_safety = (
        "No fix: reduced precision changes the numbers the model computes, and a model may need fp32 somewhere "
        "(a custom loss, a numerically sensitive layer). fp16 also needs a `torch.amp.GradScaler` to keep small "
        "gradients from underflowing; bf16 has fp32's range and does not."
    )
    valid = (
        Valid("""
            import torch
            from torch.cuda.amp import autocast, GradScaler
            scaler = GradScaler()
            for x, y in loader:
                with autocast():
                    loss = criterion(model(x.cuda()), y.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """),
        Valid("""
            import torch
            model = Net().cuda().half()
            for x, y in loader:
                criterion(model(x.cuda().half()), y.cuda()).backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            model = AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16).to('cuda')
            for batch in loader:
                model(**batch).loss.backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            model = torch.nn.Linear(8, 1)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            from accelerate import Accelerator
            accelerator = Accelerator()
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            for x, y in loader:
                accelerator.backward(criterion(model(x), y))
                optimizer.step()
            torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            from transformers import Trainer
            class DistillTrainer(Trainer):
                def compute_loss(self, model, inputs):
                    for teacher in self.teachers:
                        loss = kd(model(**inputs), teacher(**inputs).to('cuda'))
                        loss.backward()
                    return loss
        """),
        Valid("""
            import torch
            import unittest
            class TestTraining(unittest.TestCase):
                def test_loss_decreases(self):
                    model = Net().cuda()
                    for _ in range(3):
                        model(torch.randn(2, 8, device='cuda')).sum().backward()
                        optimizer.step()
        """),
    )
    invalid = (
        Invalid("""
            import torch
            def train(model, loader, optimizer, device):
                model.to(device)
                step = 0
                while step < 1000:  # expect: TL803
                    batch = next(loader)
                    loss = model(batch.to(device))
                    loss.backward()
                    optimizer.step()
                    step += 1
            if torch.cuda.is_available():
                for x in data:
                    model(x.cuda()).sum().backward()
                    opt.step()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._loop: Optional[cst.CSTNode] = None  # the first training loop outside framework code
        self._reduced = False

    def visit_For(self, node: cst.For) -> None:
        scope = self.ctx.scope  # the walk is in the loop's own scope
        if self._loop is None and scope.hot_kind == STEP and trains(node) and not _framework_code(scope):
            self._loop = node

    visit_While = visit_For

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = func.attr if isinstance(func, cst.Attribute) else func
        if (isinstance(callee, cst.Name) and callee.value in _REDUCED_CALLS) or any(
            arg.keyword is not None and arg.keyword.value in _PRECISION_KEYWORDS for arg in node.args
        ):
            self._reduced = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("float16", "half", "bfloat16") and self.ctx.qualname(node) in _REDUCED_DTYPES:
            self._reduced = True

    def leave_Module(self, node: cst.Module) -> None:
        if self._loop is None or self._reduced or not self.ctx.uses_cuda or self.ctx.is_test_module:
            return
        if any(self.ctx.imports.imports(framework) for framework in _FRAMEWORKS):
            return
        self.report(self._loop)


def _framework_code(scope: Optional[Scope]) -> bool:
    """Is ``scope`` in a Lightning-style ``training_step`` or in a method of a ``Trainer`` or
    ``LightningModule`` subclass, whose precision the framework sets?"""
    while scope is not None:
        if scope.kind == "function" and scope.name in STEP_METHODS:
            return True
        if scope.kind == "class" and any(base.endswith(_FRAMEWORK_CLASSES) for base in scope.bases):
            return True
        scope = scope.parent
    return False
