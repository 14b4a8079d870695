"""TL204 empty-cache-in-loop: emptying the CUDA caching allocator once per step or per item."""

from __future__ import annotations

import re
from typing import List, Set, Tuple

import libcst as cst

from torchlint.context import STEP, Scope
from torchlint.context.loaders import walks_batches
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name
from torchlint.walker import direct_nodes

_EMPTY_CACHE = frozenset({"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache"})
_EMPTIES_CACHE = "@empties_cache"  # the key a module-level function that empties the cache is offered by
# Callback methods that run once per iteration (`after_train_iter`, `on_train_batch_end`,
# `_after_iter`, `on_step_end`), not per epoch.
_PER_STEP_HOOK = re.compile(
    r"^_?(on_)?(before|after)_(\w+_)?(iter|iteration|batch|step|backward)$|^on_(\w+_)?(batch|step)_(start|end|begin)$"
)
_DATASET = re.compile(r"loader|dataset", re.IGNORECASE)  # indexed per item: `dataset[idx]`
# A call that runs a model: `model(x)`, `self.net_g(x)`, `self.encoder(x)`, `net.forward(x)`.
_MODEL_CALL = re.compile(
    r"(^|_)(model|net|net_g|network|generator|encoder|decoder)$|^(forward|predict|generate|infer|inference)$",
    re.IGNORECASE,
)


class EmptyCacheInLoop(Rule):
    code = "TL204"
    name = "empty-cache-in-loop"
    message = (
        "`torch.cuda.empty_cache()` per step: it synchronises and hands the allocator's cached blocks back to "
        "the driver, so the next step allocates them again with cudaMalloc"
    )
    triggers = ("empty_cache",)
    what = (
        "Finds `torch.cuda.empty_cache()` where it runs once per step or per item: in `forward`, a loss or "
        "their helpers, in a training step (`training_step`, the body of a loop that calls `.backward()` or "
        "`optimizer.step()`), in a loop over batches (a DataLoader, a dataset, batch-sized chunks) or one "
        "that runs a model, in a per-iteration callback (`after_train_iter`, `on_train_batch_end`), and in "
        "functions called from any of those; a call of another module's function that empties it (a "
        "`def empty_cache(device):` wrapper that picks the backend) is reported at the call. Once after loading, between phases or epochs, in an `except` "
        "handler (out-of-memory recovery) and in test modules it is left alone."
    )
    why = (
        "PyTorch keeps freed device memory in a caching allocator and reuses it for later tensors without "
        "asking the driver. `empty_cache()` waits for the device and returns every unused cached block with "
        "`cudaFree` (which synchronises); the next step then gets its memory back through `cudaMalloc`, "
        "which is slow. It does not free memory that tensors still hold, so it does not lower the peak of a "
        "step; it only makes the memory visible to other processes."
    )
    example = Invalid("""
        import torch

        for images, labels in loader:
            loss = criterion(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.cuda.empty_cache()  # expect: TL204
    """)
    use_instead = Valid("""
        import torch

        for epoch in range(epochs):
            for images, labels in loader:
                loss = criterion(model(images.cuda()), labels.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            torch.cuda.empty_cache()  # once per epoch, if another process needs the memory
    """)
    fix_safety = (
        "No fix: whether to release memory at all, and where, depends on what else shares the GPU; removing "
        "the call is usually right but is left to you. Not reported in an `except` handler (recovering from "
        "an out-of-memory error), once per epoch or phase (a loop over epochs, or one whose per-batch work "
        "is a nested loop), at module level, in set-up, or in test modules."
    )
    valid = (
        Valid("""
            import torch
            model = load_model(path).cuda()
            torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def train(model, loader, optimizer, epochs):
                for epoch in range(epochs):
                    train_one_epoch(model, loader, optimizer)
                    torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def fit(model, loaders, optimizer):
                for phase in ('train', 'val'):
                    for x, y in loaders[phase]:
                        loss = model(x, y)
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()
                    torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def run_batch(model, batch):
                try:
                    return model(batch)
                except torch.cuda.OutOfMemoryError:
                    torch.cuda.empty_cache()
                    return model(batch[: len(batch) // 2])
        """),
        Valid("""
            import torch
            class EmptyCacheHook(Hook):
                def after_train_epoch(self, runner):
                    torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            class Wrapper(nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.model = model
                    del self.model.decoder
                    torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def find_batch_size(model, sizes):
                for size in sizes:
                    try:
                        probe(model, size)
                        return size
                    except RuntimeError:
                        torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def test_forward_on_gpu():
                model = Net().cuda()
                for _ in range(3):
                    model(torch.randn(2, 3, device='cuda'))
                    torch.cuda.empty_cache()
        """),
        Valid("""
            import torch
            def main(cfg):
                trainer = build_trainer(cfg)
                trainer.train()
                del trainer
                torch.cuda.empty_cache()
                evaluate(cfg)
        """),
        Valid("""
            import torch
            class TrtWrapper(nn.Module):
                def forward(self, x):
                    if self.engine is None:
                        self.engine = build_engine(self.model, x)
                        del self.model
                        torch.cuda.empty_cache()
                    return self.engine(x)
        """),
    )
    invalid = (
        Invalid("""
            import torch
            for images, labels in loader:
                loss = criterion(model(images.cuda()), labels.cuda())
                loss.backward()
                optimizer.step()
                torch.cuda.empty_cache()  # expect: TL204
        """),
        Invalid("""
            import torch
            def validate(self, dataloader):
                for idx, val_data in enumerate(dataloader):
                    self.feed_data(val_data)
                    self.test()
                    del self.output
                    torch.cuda.empty_cache()  # expect: TL204
        """),
        Invalid("""
            import torch
            class Block(nn.Module):
                def forward(self, x):
                    x = self.conv(x)
                    torch.cuda.empty_cache()  # expect: TL204
                    return self.norm(x)
        """),
        Invalid("""
            import torch
            def _free(save_mem):
                if save_mem:
                    torch.cuda.empty_cache()  # expect: TL204
            class Block(nn.Module):
                def forward(self, x):
                    _free(self.save_mem)
                    return self.conv(x)
        """),
        Invalid("""
            import torch
            @torch.no_grad()
            def embed_all(model, texts, batch_size):
                out = []
                for start in range(0, len(texts), batch_size):
                    out.append(model(texts[start:start + batch_size]).cpu())
                    torch.cuda.empty_cache()  # expect: TL204
                return out
        """),
        Invalid("""
            import torch
            class EmptyCacheHook(Hook):
                def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
                    torch.cuda.empty_cache()  # expect: TL204
        """),
        Invalid("""
            import torch
            class Trainer:
                def generate(self, prompts):
                    torch.cuda.empty_cache()  # expect: TL204
                    return self.policy.generate(prompts)
                def train(self):
                    for batch in self.dataloader:
                        samples = self.generate(batch['prompt'])
                        self.update(samples)
        """),
        Invalid("""
            import torch
            class Net(LightningModule):
                def training_step(self, batch, batch_idx):
                    loss = self.loss(self(batch[0]), batch[1])
                    torch.cuda.empty_cache()  # expect: TL204
                    return loss
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._calls: List[Tuple[cst.Call, Scope]] = []
        self._wrapper_calls: List[Tuple[cst.Call, Scope, str]] = []  # calls of other modules' functions

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if ctx.is_test_module or ctx.scope.function.name.startswith("test_"):
            return
        empties = ctx.qualname(node.func) in _EMPTY_CACHE
        callee = None if empties else ctx.project_callee(node.func)
        # Reported once hot paths are settled, after the walk: the export check must be made now.
        if not (empties or callee) or ctx.in_rare_path() or ctx.in_definition() or ctx.in_export_branch() \
                or self._in_lazy_set_up():
            return
        if callee is not None:
            self._wrapper_calls.append((node, ctx.scope, callee))
            return
        self._calls.append((node, ctx.scope))
        key = ctx.function_key(ctx.scope.function)
        if key is not None:
            ctx.offer(f"{key}{_EMPTIES_CACHE}", "yes")

    def _in_lazy_set_up(self) -> bool:
        """Under ``if self.engine is None:``: set-up done on the first call only."""
        ancestors = self.ctx.ancestors
        return any(
            isinstance(node, cst.If) and ancestors[index + 1] is node.body and _tests_unset_attribute(node.test)
            for index, node in enumerate(ancestors[:-1])
        )

    def leave_Module(self, node: cst.Module) -> None:
        for call, scope in self._calls:  # hot paths are settled now
            if self._per_step(scope, set()):
                self.report(call)
        for call, scope, callee in self._wrapper_calls:
            if self._per_step(scope, set()) and self.ctx.need(f"{callee}{_EMPTIES_CACHE}") == "yes":
                wrapper = f"`{dotted_name(call.func)}(...)`, which calls `torch.cuda.empty_cache()`,"
                self.report(call, self.message.replace("`torch.cuda.empty_cache()`", wrapper, 1))

    def _per_step(self, scope: Scope, seen: Set[Scope]) -> bool:
        """Does code in ``scope`` run once per step or per item: hot code, a per-batch loop, a
        per-iteration callback, or a function called from one of those?"""
        if scope.hot_kind_of() is not None:
            return True
        while scope.kind == "loop":
            if self._per_batch_loop(scope):
                return True
            scope = scope.parent
        if scope.kind != "function" or scope in seen:
            return False
        seen.add(scope)
        if _PER_STEP_HOOK.match(scope.name):
            return True
        return any(self._per_step(caller, seen) for caller in self.ctx.loaders.callers(scope))

    def _per_batch_loop(self, loop: Scope) -> bool:
        """A loop that takes a training step, walks batches or a dataset (not epochs), or runs a model."""
        node = loop.node
        if loop.hot_kind == STEP:
            return True
        if not isinstance(node, cst.For):
            return False
        return walks_batches(node) or any(_runs_model_or_indexes_dataset(child) for child in direct_nodes(node.body))


def _tests_unset_attribute(test: cst.BaseExpression) -> bool:
    """``self.x is None`` (alone or in an ``and``)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _tests_unset_attribute(test.left) or _tests_unset_attribute(test.right)
    return (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is) and (dotted_name(test.left) or "").startswith("self.")
        and dotted_name(test.comparisons[0].comparator) == "None"
    )


def _runs_model_or_indexes_dataset(node: cst.CSTNode) -> bool:
    """``model(x)``, ``self.net_g(x)``, ``dataset[idx]``: per-item work in a loop body."""
    if isinstance(node, cst.Call):
        name = dotted_name(node.func)
        return name is not None and bool(_MODEL_CALL.search(name.rsplit(".", 1)[-1]))
    if isinstance(node, cst.Subscript):
        name = dotted_name(node.value)
        return name is not None and bool(_DATASET.search(name.rsplit(".", 1)[-1]))
    return False
