"""TL5xx: feeding data to the model."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from torchlint.context import dotted_name
from torchlint.context.dataflow import target_names
from torchlint.rules.base import Invalid, Replacement, Rule
from torchlint.rules.calls import code_in_block, has_star_args, keyword, literal_value, positional, with_keyword
from torchlint.rules.device import device_move

DATALOADER = "torch.utils.data.DataLoader"
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, ...)
_NUM_WORKERS_POSITION = 5
_PIN_MEMORY_POSITION = 7
_EPOCH_HOOKS = frozenset({"train_dataloader", "val_dataloader"})  # Lightning: re-iterated every epoch
_ITERATION_WRAPPERS = frozenset({"builtins.enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "rich.progress.track"})


def dataloader_call(ctx, node: cst.Call) -> bool:
    """A call of ``torch.utils.data.DataLoader`` whose arguments are all visible."""
    return ctx.qualname(node.func) == DATALOADER and not has_star_args(node)


def argument(node: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    arg = keyword(node, name)
    if arg is not None:
        return arg.value
    args = positional(node)
    return args[position].value if len(args) > position else None


def _true(node: Optional[cst.BaseExpression]) -> bool:
    return node is not None and literal_value(node) is True


def _has_workers(loader: cst.Call) -> bool:
    workers = argument(loader, "num_workers", _NUM_WORKERS_POSITION)
    return workers is not None and literal_value(workers) != 0


def iterated_loader(ctx, iterable: cst.BaseExpression) -> Optional[cst.Call]:
    """The ``DataLoader(...)`` call a ``for`` loop iterates (through a name, ``enumerate``, ``tqdm``)."""
    while isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) in _ITERATION_WRAPPERS:
        args = positional(iterable)
        if not args:
            return None
        iterable = args[0].value
    if isinstance(iterable, cst.Name):
        iterable = ctx.value_of(iterable.value)
    if isinstance(iterable, cst.Call) and dataloader_call(ctx, iterable):
        return iterable
    return None


def _batch_of_element(ancestors, name: str) -> Optional[str]:
    """The batch ``b`` whose elements ``name`` walks in an enclosing comprehension:
    ``{k: v.to(device) for k, v in b.items()}``, ``tuple(t.cuda() for t in b)``."""
    for node in reversed(ancestors):
        if not isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            continue
        comp = node.for_in
        if name not in set(target_names(comp.target)):
            continue
        source = comp.iter
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and not source.args:
            source = source.func.value if source.func.attr.value in ("items", "values") else source
        return source.value if isinstance(source, cst.Name) else None
    return None


class DataLoaderWithoutWorkers(Rule):
    code = "TL501"
    name = "dataloader-without-workers"
    message = (
        "DataLoader loads batches in the training process (num_workers=0); set num_workers so "
        "loading overlaps the training step"
    )
    triggers = ("DataLoader",)
    what = (
        "Finds `torch.utils.data.DataLoader(...)` created without `num_workers` or with "
        "`num_workers=0`, under any import alias."
    )
    why = (
        "With no workers, every batch is read, decoded and augmented in the training process, "
        "between two steps: the GPU waits while the CPU prepares data, and the CPU waits while the "
        "GPU computes. Worker processes prepare the next batches while the current step runs. The "
        "gain depends on free CPU cores and on how much time loading takes compared with the step."
    )
    example = "loader = DataLoader(dataset, batch_size=64, shuffle=True)"
    use_instead = (
        "loader = DataLoader(dataset, batch_size=64, shuffle=True,\n"
        "                    num_workers=8, persistent_workers=True, pin_memory=True)"
    )
    fix_safety = (
        "No fix: the right number of workers depends on the machine's cores and the cost of "
        "loading, and worker processes change where dataset code runs. Not reported when the "
        "call passes `*args`/`**kwargs`, which may carry `num_workers`; when the dataset is "
        "already in memory (a `TensorDataset`, a `range` or list, or a dataset class of the same "
        "file whose `__getitem__` only indexes stored data), where workers would only add "
        "overhead; when it is an `IterableDataset` of the same file, which every worker would "
        "replay unless it shards itself; or in test modules (importing pytest/unittest or "
        "defining `test_*` functions), whose loaders exercise code rather than train."
    )
    measured = (
        "Not yet measured: the fixture (`fixtures/TL501`: one epoch whose samples are zlib-compressed "
        "images decompressed, cropped, resized, flipped and colour-jittered with numpy, and a conv-net "
        "training step per batch; no workers vs 2 workers) needs 4 CPU cores, and `torchlint bench` "
        "skipped it on the only machine run so far (AMD EPYC, 2 cores, torch 2.13.0, 2026-11-21). "
        "Workers need free cores to overlap loading with the step: on a loaded 2-core machine the "
        "project's notes measured 0.95x for 2 workers. See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=8, num_workers=4)",
        "from torch.utils.data import DataLoader\nDataLoader(ds, batch_size=8, num_workers=args.workers)",
        "from torch.utils.data import DataLoader\nDataLoader(ds, **loader_kwargs)",
        "from torch.utils.data import DataLoader\nDataLoader(ds, 8, True, None, None, 4)",
        "from torch.utils.data import DataLoader, TensorDataset\nDataLoader(TensorDataset(x, y), batch_size=8)",
        "from torch.utils.data import DataLoader, TensorDataset\nds = TensorDataset(x, y)\nDataLoader(ds, batch_size=8)",
        "from mylib import DataLoader\nDataLoader(ds, batch_size=8)",
        "from torch.utils.data import DataLoader\nDataLoader(range(64), batch_size=8)",
        "from torch.utils.data import DataLoader\nDataLoader([1, 2, 3], batch_size=2)",
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n"
        "class Random(Dataset):\n    def __init__(self, n):\n        self.data = torch.randn(n, 32)\n\n"
        "    def __getitem__(self, i):\n        return self.data[i]\n\n"
        "loader = DataLoader(Random(64), batch_size=8)",
        "from torch.utils.data import DataLoader, IterableDataset\n\n"
        "class Stream(IterableDataset):\n    def __iter__(self):\n        yield from read_shards()\n\n"
        "loader = DataLoader(Stream(), batch_size=8)",
        "import pytest\nfrom torch.utils.data import DataLoader\n\n"
        "def test_loader(ds):\n    assert len(DataLoader(ds, batch_size=8)) == 4",
    )
    invalid = (
        Invalid("from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\n"),
        Invalid("import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=0)\n"),
        Invalid("from torch.utils.data import DataLoader as DL\nloader = DL(ds, shuffle=True)\n"),
        Invalid("from torch.utils.data.dataloader import DataLoader\nloader = DataLoader(ds)\n"),
        Invalid(
            "from PIL import Image\nfrom torch.utils.data import DataLoader, Dataset\n\n"
            "class Images(Dataset):\n    def __getitem__(self, i):\n        return Image.open(self.paths[i])\n\n"
            "loader = DataLoader(Images(), batch_size=8)\n"
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or self.ctx.is_test_module:
            return
        workers = argument(node, "num_workers", _NUM_WORKERS_POSITION)
        if workers is None or literal_value(workers) == 0:
            if not self.ctx.datasets.needs_no_workers(argument(node, "dataset", 0)):
                self.report(node)


class WorkersNotPersistent(Rule):
    code = "TL502"
    name = "dataloader-workers-not-persistent"
    message = (
        "DataLoader starts its worker processes anew for every epoch; pass `persistent_workers=True` "
        "to keep them alive between epochs"
    )
    fix = "unsafe"
    triggers = ("DataLoader",)
    what = (
        "Finds `torch.utils.data.DataLoader(...)` with worker processes (`num_workers` a literal "
        "above 0, or a variable) and no `persistent_workers` argument, when the loader is iterated "
        "more than once: it is named inside the body of a loop (an epoch loop) after being built in "
        "the same function, kept on `self`, or returned by a Lightning `train_dataloader` / "
        "`val_dataloader` hook, which Lightning iterates every epoch."
    )
    why = (
        "Without `persistent_workers`, each `iter(loader)` (every epoch, every validation pass) "
        "starts `num_workers` new processes and shuts them down when the pass ends. Each start "
        "pays the process creation, and all the per-worker set-up the dataset does lazily (opening "
        "files, LMDB/HDF5 handles, tokenizers); with the `spawn` or `forkserver` start methods it "
        "also starts an interpreter, imports torch and unpickles the dataset in every worker. The "
        "training step waits for that at the start of every epoch."
    )
    example = "loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)"
    use_instead = (
        "loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8,\n"
        "                    persistent_workers=True)"
    )
    measured = (
        "`torchlint bench`, CPU (2-core AMD EPYC, 1 torch thread, torch 2.13.0, size `small`, 2026-11-21): "
        "**3.68x** (paired range 3.55-3.83x), 327 ms -> 88.9 ms for 4 epochs over 64 samples with 2 workers, whose dataset "
        "opens its storage lazily in each worker (50 ms). The gain grows with the per-worker set-up "
        "and the number of epochs, and is larger with the `spawn` start method."
    )
    fix_safety = (
        "Unsafe: the workers keep the copy of the dataset they were started with, so changes the "
        "main process makes to the dataset between epochs (a curriculum, a resampled subset, a "
        "`set_epoch` on the dataset) no longer reach them; the worker processes and their memory "
        "also stay alive while the loader exists. The fix adds `persistent_workers=True`, or "
        "`persistent_workers=<num_workers> > 0` when the worker count is a variable, because "
        "`DataLoader` rejects persistent workers when `num_workers` is 0. Not reported when the "
        "call passes `*args`/`**kwargs`, gives `persistent_workers` in any form, or is built inside "
        "a loop (a loader made anew every epoch gains nothing: build it once), when nothing shows the "
        "loader is iterated twice (a one-shot evaluation loader, `test_dataloader`), when the code "
        "changes the dataset between epochs (`ds.set_epoch(epoch)` or `ds.level = k` in the epoch "
        "loop, or, for a dataset kept on `self`, in a method other than `__init__`/`setup`), which "
        "persistent workers would not see, or in test code."
    )
    valid = (
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(3):\n    for batch in loader:\n        step(batch)",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=n, persistent_workers=n > 0)\n"
        "for epoch in range(3):\n    train(loader)",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=0)\n"
        "for epoch in range(3):\n    train(loader)",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, **kwargs)\n"
        "for epoch in range(3):\n    train(loader)",
        "from torch.utils.data import DataLoader\n\ndef score(ds):\n    loader = DataLoader(ds, num_workers=4)\n"
        "    for batch in loader:\n        update(batch)",
        "from torch.utils.data import DataLoader\nfor epoch in range(10):\n"
        "    for batch in DataLoader(subset(epoch), num_workers=4):\n        step(batch)",
        "from torch.utils.data import DataLoader\n\nclass Data:\n    def test_dataloader(self):\n"
        "        return DataLoader(self.test_set, num_workers=4)",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
        "for epoch in range(3):\n    ds.set_epoch(epoch)\n    for batch in loader:\n        step(batch)",
        "from torch.utils.data import DataLoader\n\nclass Data:\n    def train_dataloader(self):\n"
        "        return DataLoader(self.train_set, num_workers=8)\n\n    def on_train_epoch_start(self):\n"
        "        self.train_set.difficulty += 1",
    )
    invalid = (
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
            "from torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
        ),
        Invalid(
            "import torch\n\ndef main(args):\n    loader = torch.utils.data.DataLoader(ds, num_workers=args.workers)\n"
            "    for epoch in range(args.epochs):\n        train_one_epoch(model, loader)\n",
            "import torch\n\ndef main(args):\n    loader = torch.utils.data.DataLoader(ds, num_workers=args.workers, "
            "persistent_workers=args.workers > 0)\n"
            "    for epoch in range(args.epochs):\n        train_one_epoch(model, loader)\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\n\nclass Data:\n    def train_dataloader(self):\n"
            "        return DataLoader(\n            self.train_set,\n            num_workers=8,\n        )\n",
            "from torch.utils.data import DataLoader\n\nclass Data:\n    def train_dataloader(self):\n"
            "        return DataLoader(\n            self.train_set,\n            num_workers=8,\n"
            "            persistent_workers=True,\n        )\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\n\nclass Trainer:\n    def __init__(self, ds):\n"
            "        self.loader = DataLoader(ds, num_workers=os.cpu_count() // 2)\n"
        ),
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(\n    ds, batch_size=8, num_workers=4\n)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
            "from torch.utils.data import DataLoader\n"
            "loader = DataLoader(\n    ds, batch_size=8, num_workers=4, persistent_workers=True\n)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\nds.download()\nloader = DataLoader(ds, num_workers=4)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
            "from torch.utils.data import DataLoader\nds.download()\n"
            "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
            "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n",
        ),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # (function, loader name) -> (loader call, fix, dataset argument)
        self._pending: Dict[Tuple[object, str], Tuple[cst.Call, tuple, Optional[cst.BaseExpression]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or keyword(node, "persistent_workers") is not None:
            return
        if self.ctx.scope.kind == "loop" or self.ctx.is_test_module:
            return
        workers = argument(node, "num_workers", _NUM_WORKERS_POSITION)
        fix = self._fix(node, workers, self.ctx.indentation()) if workers is not None else None
        if fix is None:
            return
        parent = self.ctx.parent
        dataset = argument(node, "dataset", 0)
        if isinstance(parent, cst.Return) and self.ctx.scope.function.name in _EPOCH_HOOKS:
            self._report_unless_changed(node, fix, dataset, None)  # Lightning iterates it again every epoch
        elif isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
                # kept on the object to be iterated again
                self._report_unless_changed(node, fix, dataset, dotted_name(target))
            elif isinstance(target, cst.Name):
                self._pending[(self.ctx.scope.function, target.value)] = (node, fix, dataset)

    def visit_Name(self, node: cst.Name) -> None:
        """A loader named in the body of a loop (an epoch loop) after it was built is iterated again."""
        pending = self._pending.pop((self.ctx.scope.function, node.value), None)
        if pending is None:
            return
        if self._in_loop_body():
            loader, fix, dataset = pending
            self._report_unless_changed(loader, fix, dataset, node.value)
        else:
            self._pending[(self.ctx.scope.function, node.value)] = pending

    def _report_unless_changed(self, loader: cst.Call, fix: tuple, dataset, loader_name: Optional[str]) -> None:
        """Persistent workers would keep a stale copy of a dataset changed between epochs."""
        if not self.ctx.datasets.changed_between_epochs(dataset, loader_name):
            self.report(loader, replacements=fix)

    def _in_loop_body(self) -> bool:
        ancestors = self.ctx.ancestors
        for outer, inner in zip(ancestors, ancestors[1:]):
            if isinstance(outer, (cst.For, cst.While)) and inner is outer.body:
                return True
        return False

    def _fix(self, node: cst.Call, workers: cst.BaseExpression, indentation) -> Optional[tuple]:
        """The replacement that adds ``persistent_workers``; () for no fix, None when not reported."""
        value = literal_value(workers)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            persistent: cst.BaseExpression = cst.Name("True")
        elif isinstance(workers, (cst.Name, cst.Attribute)):
            persistent = cst.Comparison(workers, [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))])
        elif isinstance(workers, (cst.Call, cst.BinaryOperation, cst.IfExp, cst.Subscript)):
            return ()
        else:
            return None
        fixed = with_keyword(node, "persistent_workers", persistent)
        return (Replacement(node, code_in_block(self.ctx.module, fixed, indentation)),)


class BatchesNotPinned(Rule):
    code = "TL503"
    name = "dataloader-not-pinned"
    message = (
        "batches from this DataLoader are copied to the GPU from pageable memory; pass "
        "`pin_memory=True` so the copy can be asynchronous"
    )
    non_blocking_message = (
        "copy of a batch from a pinned DataLoader without `non_blocking=True`: it still blocks "
        "until the GPU is idle"
    )
    fix = "unsafe"
    triggers = ("DataLoader",)
    what = (
        "Finds the pair that makes host-to-device copies of batches asynchronous: a "
        "`DataLoader(...)` with worker processes and no `pin_memory` argument whose batches are moved to the GPU "
        "(`x.to(device)`, `x.cuda()`, or element by element: `{k: v.to(device) for k, v in batch.items()}`) "
        "in a `for` loop over it in the same function; and, for a "
        "loader with `pin_memory=True`, such a move without `non_blocking=True`. Only in files that "
        "use CUDA."
    )
    why = (
        "A copy from ordinary (pageable) host memory goes through a staging buffer of the driver, "
        "and PyTorch makes it synchronous: the CPU waits until every kernel already queued has run "
        "and the copy is done, so it cannot prepare the next step meanwhile. From pinned memory "
        "with `non_blocking=True`, the copy is one asynchronous DMA that overlaps with the CPU's "
        "work. `DataLoader(pin_memory=True)` pins batches in a background thread, off the training "
        "step; both halves are needed, since a blocking copy from pinned memory still waits."
    )
    example = (
        "loader = DataLoader(dataset, batch_size=64, num_workers=8)\n"
        "for x, y in loader:\n"
        "    x, y = x.to(device), y.to(device)"
    )
    use_instead = (
        "loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)\n"
        "for x, y in loader:\n"
        "    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)"
    )
    fix_safety = (
        "Unsafe: pinned memory is page-locked and taken from the host's RAM, so very large batches "
        "or many loaders can exhaust it; on a machine without a GPU `pin_memory=True` only warns. "
        "With `non_blocking=True` the CPU no longer waits for the copy, so code that reads the "
        "host tensor's values later through another path than the copied tensor could observe it "
        "being reused. Explicit `.pin_memory()` calls inside the step are never suggested: pinning "
        "on the fly costs more than the copy it speeds up; for the same reason a loader without "
        "workers (which would pin in the training process itself) is not asked to pin."
    )
    valid = (
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, pin_memory=True)\n"
        "for x in loader:\n    x = x.to('cuda', non_blocking=True)",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, pin_memory=use_cuda)\n"
        "for x in loader:\n    x = x.cuda()",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\nfor x in loader:\n    x = x.to(device)",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n"
        "for x in loader:\n    x = x.to(torch.float16)\nmodel.cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n"
        "for x in loader:\n    x = x.to('cpu')\nmodel.cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2, **kw)\n"
        "for x in loader:\n    x = x.cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\nloader = wrap(loader)\n"
        "for x in loader:\n    x = x.cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n"
        "for x in loader:\n    y = torch.zeros(3).cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
        "for x in loader:\n    x = x.cuda()",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=2)\n"
        "for batch in loader:\n    extra = [t.cuda() for t in buffers]\n    model(batch, extra)",
    )
    invalid = (
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
            "for x, y in loader:\n    x, y = x.cuda(), y.cuda()\n",
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for x, y in loader:\n    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n",
        ),
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n\ndef train(model, ds, device):\n"
            "    loader = DataLoader(ds, batch_size=32, pin_memory=True)\n"
            "    for step, (x, y) in enumerate(loader):\n        x = x.to(device)\n"
            "        loss = model(x, y.to(device, non_blocking=True))\n"
            "device = torch.device('cuda')\n",
            "import torch\nfrom torch.utils.data import DataLoader\n\ndef train(model, ds, device):\n"
            "    loader = DataLoader(ds, batch_size=32, pin_memory=True)\n"
            "    for step, (x, y) in enumerate(loader):\n        x = x.to(device, non_blocking=True)\n"
            "        loss = model(x, y.to(device, non_blocking=True))\n"
            "device = torch.device('cuda')\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\n\ndef fit(model, ds, epochs):\n    loader = DataLoader(\n"
            "        ds,\n        num_workers=4,\n    )\n    for x in loader:\n        model(x.cuda())\n",
            "from torch.utils.data import DataLoader\n\ndef fit(model, ds, epochs):\n    loader = DataLoader(\n"
            "        ds,\n        num_workers=4,\n        pin_memory=True,\n    )\n    for x in loader:\n"
            "        model(x.cuda(non_blocking=True))\n",
        ),
        Invalid(
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for batch in loader:\n    batch = {k: v.to('cuda') for k, v in batch.items()}\n",
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for batch in loader:\n    batch = {k: v.to('cuda', non_blocking=True) for k, v in batch.items()}\n",
        ),
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
            "for batch in loader:\n    batch = tuple(t.to('cuda') for t in batch)\n",
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"
            "for batch in loader:\n    batch = tuple(t.to('cuda', non_blocking=True) for t in batch)\n",
        ),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._loops = []  # (for node, names bound to batches, the loader call)
        self._indentation: Dict[int, Tuple[str, ...]] = {}  # id(loader call) -> its block's indentation

    def visit_For(self, node: cst.For) -> None:
        loader = iterated_loader(self.ctx, node.iter)
        if loader is not None and self.ctx.uses_cuda and not self.ctx.is_test_module:
            self._loops.append((node, frozenset(target_names(node.target)), loader))

    def leave_For(self, node: cst.For) -> None:
        if self._loops and self._loops[-1][0] is node:
            self._loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if dataloader_call(self.ctx, node):
            self._indentation[id(node)] = self.ctx.indentation()
        if not self._loops or device_move(self.ctx, node) is None:
            return
        owner = node.func.value
        if not isinstance(owner, cst.Name) or self.ctx.value_of(owner.value) is not None:
            return  # not a batch as the loop bound it
        batch = _batch_of_element(self.ctx.ancestors, owner.value) or owner.value
        if batch != owner.value and self.ctx.value_of(batch) is not None:
            return
        for _, names, loader in self._loops:
            if batch in names:
                self._check(loader, node)
                return

    def _check(self, loader: cst.Call, move: cst.Call) -> None:
        pin = argument(loader, "pin_memory", _PIN_MEMORY_POSITION)
        module = self.ctx.module
        if pin is None and _has_workers(loader):
            fixed = with_keyword(loader, "pin_memory", cst.Name("True"))
            text = code_in_block(module, fixed, self._indentation.get(id(loader), ()))
            self.report(loader, replacements=(Replacement(loader, text),))
        elif _true(pin) and not _true(getattr(keyword(move, "non_blocking"), "value", None)):
            if keyword(move, "non_blocking") is None:
                fixed = with_keyword(move, "non_blocking", cst.Name("True"))
                text = code_in_block(module, fixed, self.ctx.indentation())
                self.report(move, self.non_blocking_message, (Replacement(move, text),))
            else:
                self.report(move, self.non_blocking_message)
