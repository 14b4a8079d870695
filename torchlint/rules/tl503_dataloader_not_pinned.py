"""TL503 dataloader-not-pinned: batches copied to the GPU from pageable memory, or blocking."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple, Union

import libcst as cst

from torchlint.context.calls import is_parameter, parameter_at, parameter_position
from torchlint.context.devices import device_move, moved_by_helper
from torchlint.context.factories import variable_of
from torchlint.context.loaders import (
    LOADER_NAME, LOADER_TRIGGERS, PIN_MEMORY_POSITION, Ref, argument, dataloader_call, fitted, has_workers, lightning_class,
    returned_by_epoch_hook, unwrap_iteration,
)
from torchlint.context.scopes import Scope, callee, in_loop
from torchlint.rewrite import Replacement, code_in_block, with_keyword
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import (
    COMPREHENSIONS, dotted_name, is_name, keyword, literal_value, method_call, positional, target_names,
)
from torchlint.walker import descendants


_MOVES_METHOD = "@moves_batch."  # the key, with a method's name and parameter, a method that moves a batch is offered by
_CASTS = ("float", "double", "half", "long", "int", "bool", "contiguous")  # copies of a batch on the host
_READ_HERE = frozenset({"list", "tuple", "next", "iter", "first", "len", "enumerate", "tqdm", "zip", "isinstance"})


def _leaves(ctx, call: cst.Call) -> bool:
    """Does the loader ``call`` builds leave the code that builds it: returned, kept on an
    object or in a container, or passed on (not to ``list``/``next``/``first``, which read it
    there), directly or through the name it is bound to? Never in test code."""
    if ctx.is_test_module:
        return False
    parent = ctx.parent
    if isinstance(parent, cst.Assign):
        target = parent.targets[0].target if len(parent.targets) == 1 else None
        if not isinstance(target, cst.Name):
            return True  # kept on an object or in a container
        scope = ctx.scope.function.node or ctx.module
        return any(_passes_on(node, target.value) for node in descendants(scope))
    if isinstance(parent, cst.Arg):
        return _passes_on(ctx.ancestors[-2], None, call)
    return isinstance(parent, (cst.Return, cst.Tuple, cst.Element, cst.DictElement))


def _passes_on(node: cst.CSTNode, name: Optional[str], value: Optional[cst.BaseExpression] = None) -> bool:
    """Does ``node`` hand on the loader (``name``, or the expression ``value``)?"""
    def held(expression: Optional[cst.BaseExpression]) -> bool:
        if isinstance(expression, cst.Tuple):
            return any(held(element.value) for element in expression.elements)
        return expression is value if value is not None else is_name(expression, name)
    if isinstance(node, cst.Return):
        return held(node.value)
    if isinstance(node, cst.Assign):
        return held(node.value) and not all(isinstance(target.target, cst.Name) for target in node.targets)
    if isinstance(node, (cst.Dict, cst.List)):
        return any(held(element.value) for element in node.elements)
    if isinstance(node, cst.Call):
        return dotted_name(node.func) not in _READ_HERE and any(held(arg.value) for arg in node.args)
    return False


def _blocking(move: cst.Call) -> bool:
    """A move without ``non_blocking``, or with a literally false one (``non_blocking=not
    args.no_pin``, the loader's own pinning flag, is trusted)."""
    given = keyword(move, "non_blocking")
    return given is None or literal_value(given.value) in (False, None, 0)


def _pinned(pin: Optional[cst.BaseExpression]) -> bool:
    """``pin_memory=True``, or an expression that pins when it matters (``use_cuda``)."""
    return pin is not None and literal_value(pin) not in (False, None, 0)


def _batch_of_element(ancestors, name: str) -> Optional[str]:
    """The batch ``b`` whose elements ``name`` walks in an enclosing comprehension:
    ``{k: v.to(device) for k, v in b.items()}``, ``tuple(t.cuda() for t in b)``."""
    for node in reversed(ancestors):
        if not isinstance(node, COMPREHENSIONS):
            continue
        comp = node.for_in
        if name not in set(target_names(comp.target)):
            continue
        source = comp.iter
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and not source.args:
            source = source.func.value if source.func.attr.value in ("items", "values") else source
        return source.value if isinstance(source, cst.Name) else None
    return None


def _add_move(moves: List[Tuple[cst.Call, Tuple[str, ...]]], move: Optional[cst.Call], indentation) -> None:
    """Record a move of a loader's batches once (a helper's move is reached from every loop
    that hands it a batch; two fixes of one call would overlap)."""
    if move is not None and all(move is not known for known, _ in moves):
        moves.append((move, indentation))


class DataloaderNotPinned(Rule):
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
    # the loop moving a loader's batches (or Lightning's `trainer.fit`) may be in another file
    triggers = (*LOADER_TRIGGERS, ".to(", ".cuda(", ".fit(")
    what = (
        "Finds the pair that makes host-to-device copies of batches asynchronous: a "
        "`DataLoader(...)` with worker processes and no `pin_memory` argument whose batches are moved to the GPU "
        "(`x.to(device)`, `batch[\"image\"].cuda()`, a helper such as `to_device(x, device)`, or element by "
        "element: `{k: v.to(device) for k, v in batch.items()}`) in a `for` loop or a comprehension over it (also "
        "`enumerate(...)`, `tqdm(...)`, `zip(pbar, loader)`, `zip(src_loader, tgt_loader)`, "
        "`metric_logger.log_every(loader, ...)`, `tqdm(loader) if verbose else loader`) or drawn with "
        "`next(...)` of an iterator of it a loop draws every batch from (`it = iter(loader)` ... "
        "`x, y = next(it)`, or `batch = next(it)` ... `batch[0].to(device)`), from a generator of the file that cycles it (`next(self.dl).to(device)` after "
        "`self.dl = cycle(dl)`), through `accelerator.prepare` (`model, opt, dl = accelerator.prepare(model, opt, dl)`), "
        "or handed to Lightning's `trainer.fit(model, loader)`, which moves "
        "every batch itself; and, for a loader with `pin_memory=True` (or a `pin_memory` that is "
        "not literally false), such a move without `non_blocking` (or with a literally false one). The loop may be in another "
        "function of the same file: a loader built at module level, in `main()` and passed to "
        "`train(loader)`, kept on `self`, held in a dict, list or tuple (`loaders[phase]`), or "
        "returned by a helper is followed to the loops that iterate "
        "it, and a batch the loop hands to a function of the file (`self.train_batch(x, y)`) to the "
        "moves there, or to a method of another object (`model.set_input(data)`) when a class of the "
        "file or of the project has a method of that name that moves that argument (the loader is "
        "then pinned, the move is left as it is); across the files of one run, a loader passed to a function of another module "
        "(`train_one_epoch(model, loader, ...)`) is followed to the moves there, and one returned by "
        "a function of another module (`train_loader, dataset = create_dataloader(...)`, `create_dataloader(...)[0]`, also built "
        "with a DataLoader subclass such as `InfiniteDataLoader`) is followed back to where it is built. A loader "
        "returned by a Lightning `train_dataloader`/`val_dataloader` hook (the name is the evidence: "
        "the class's Lightning base often lives in another file), or by a method "
        "such a hook returns (`return self._dataloader_factory(\"train\")`), counts as "
        "moved: the framework copies its batches to the device. Only in files that use CUDA or move "
        "data to a device held in a variable (`x.to(device)`, `x.to(device=device)`; not where the only "
        "device the file names is the CPU: `device = torch.device(\"cpu\")`), Lightning hooks aside. A loader that "
        "leaves the file's sight (returned, kept on an object or in a container, passed on) and is "
        "never iterated there is reported where the project moves loader batches to the device: this "
        "file or another of its project (its top-level package, or a script's folder) has a loop "
        "over a loader (or a name for one: `train_loader`, "
        "`data_iter`) that moves its batches, a Lightning module with a `training_step`, or a "
        "`trainer.fit(model, loader)`; one "
        "read where it is built (`list(loader)`, "
        "`first(loader)`) is not."
    )
    why = (
        "A copy from ordinary (pageable) host memory goes through a staging buffer of the driver, "
        "and PyTorch makes it synchronous: the CPU waits until every kernel already queued has run "
        "and the copy is done, so it cannot prepare the next step meanwhile. From pinned memory "
        "with `non_blocking=True`, the copy is one asynchronous DMA that overlaps with the CPU's "
        "work. `DataLoader(pin_memory=True)` pins batches in a background thread, off the training "
        "step; both halves are needed, since a blocking copy from pinned memory still waits. What "
        "is gained is the overlap of loading with GPU work, so it grows with the GPU work per batch "
        "and is nothing where the loader is the bottleneck: the fixture sweeps the work per batch "
        "(*Measured* below)."
    )
    example = Invalid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, num_workers=8)  # expect: TL503
        for x, y in loader:
            x, y = x.to("cuda"), y.to("cuda")
    """)
    use_instead = Valid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
        for x, y in loader:
            x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    """)
    fix_safety = (
        "One fix adds `pin_memory=True` to the loader and `non_blocking=True` to every move of its "
        "batches the file shows (both halves are needed; a pinned loader's blocking move is "
        "reported, and fixed, on its own). "
        "Unsafe: pinned memory is page-locked and taken from the host's RAM, so very large batches "
        "or many loaders can exhaust it; on a machine without a GPU `pin_memory=True` only warns. "
        "With `non_blocking=True` the CPU no longer waits for the copy, so code that reads the "
        "host tensor's values later through another path than the copied tensor could observe it "
        "being reused. Explicit `.pin_memory()` calls inside the step are never suggested: pinning "
        "on the fly costs more than the copy it speeds up; for the same reason a loader without "
        "workers (which would pin in the training process itself) is not asked to pin."
    )
    valid = (
        Valid("""
            from torch.utils.data import DataLoader

            def train(args, ds, model, device):
                loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=not args.no_pin)
                for image, target in loader:
                    image = image.to(device, non_blocking=not args.no_pin)  # async whenever pinned
                    model(image).sum().backward()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader

            device = torch.device("cpu")  # the only device this script names

            def train(ds, model, epochs):
                loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
                for epoch in range(epochs):
                    for x, y in loader:
                        model(x.to(device)).sum().backward()
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def show(ds, model, device="cuda"):
                loader = DataLoader(ds, batch_size=8, pin_memory=True, num_workers=2)
                images = next(iter(loader)).to(device)  # one sample batch
                return model(images)
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, pin_memory=True)
            for x in loader:
                x = x.to('cuda', non_blocking=True)
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            for x in loader:
                x = x.to(torch.float16)
            model.cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            for x in loader:
                x = x.to('cpu')
            model.cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2, **kw)
            for x in loader:
                x = x.cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            loader = wrap(loader)
            for x in loader:
                x = x.cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            for x in loader:
                y = torch.zeros(3).cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64)
            for x in loader:
                x = x.cuda()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)
            for batch in loader:
                extra = [t.cuda() for t in buffers]
                model(batch, extra)
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def timestamps(videos):
                return list(DataLoader(VideoMeta(videos), batch_size=None, num_workers=4))

            def train(net, train_loader):
                for x in train_loader:
                    net(x.cuda()).backward()
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader

            def load_data(ds):
                return DataLoader(ds, batch_size=64, num_workers=4)

            model.cuda()
        """),
    )
    invalid = (
        Invalid("""
            from accelerate import Accelerator
            from torch.utils.data import DataLoader

            def main(model, optimizer, dataset, epochs):
                accelerator = Accelerator()
                loader = DataLoader(dataset, batch_size=32, num_workers=4, persistent_workers=True)  # expect: TL503
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for epoch in range(epochs):
                    for batch in loader:
                        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
                        accelerator.backward(model(**batch).loss)
        """, fixed="""
            from accelerate import Accelerator
            from torch.utils.data import DataLoader

            def main(model, optimizer, dataset, epochs):
                accelerator = Accelerator()
                loader = DataLoader(dataset, batch_size=32, num_workers=4, persistent_workers=True, pin_memory=True)
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for epoch in range(epochs):
                    for batch in loader:
                        batch = {k: v.to(accelerator.device, non_blocking=True) for k, v in batch.items()}
                        accelerator.backward(model(**batch).loss)
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def build_loader(args, dataset):
                return (
                    DataLoader(dataset, batch_size=args.batch_size, num_workers=args.num_workers),  # expect: TL503
                    len(dataset),
                )

            def embed(model, batch, device):
                return model(batch["input_ids"].to(device))  # reached from both loops: one fix

            def evaluate(model, loader, device):
                for index, batch in enumerate(loader):
                    embed(model, batch, device)

            def check(model, loader, device):
                for batch in loader:
                    ids = batch["input_ids"].to(device)
                    embed(model, batch, device)

            def main(args, model, dataset):
                loader, size = build_loader(args, dataset)
                check(model, loader, torch.device("cuda"))
                evaluate(model, loader, torch.device("cuda"))
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def build_loader(args, dataset):
                return (
                    DataLoader(dataset, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True),
                    len(dataset),
                )

            def embed(model, batch, device):
                return model(batch["input_ids"].to(device, non_blocking=True))  # reached from both loops: one fix

            def evaluate(model, loader, device):
                for index, batch in enumerate(loader):
                    embed(model, batch, device)

            def check(model, loader, device):
                for batch in loader:
                    ids = batch["input_ids"].to(device, non_blocking=True)
                    embed(model, batch, device)

            def main(args, model, dataset):
                loader, size = build_loader(args, dataset)
                check(model, loader, torch.device("cuda"))
                evaluate(model, loader, torch.device("cuda"))
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def represent(self, net, X):
                with torch.no_grad():
                    loader = DataLoader(X, batch_size=self.batch_size, pin_memory=True)
                    for batch_x in loader:
                        batch_x = batch_x.float().to(self.device)  # expect: TL503
                        self.out.append(net(batch_x))
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def represent(self, net, X):
                with torch.no_grad():
                    loader = DataLoader(X, batch_size=self.batch_size, pin_memory=True)
                    for batch_x in loader:
                        batch_x = batch_x.float().to(self.device, non_blocking=True)
                        self.out.append(net(batch_x))
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train(model, dataset, steps, device):
                loader = DataLoader(dataset, batch_size=256, shuffle=True, pin_memory=True, num_workers=4)
                it = iter(loader)
                for step in range(steps):
                    batch = next(it)
                    model(batch[0].to(device)).sum().backward()  # expect: TL503
        """, fixed="""
            from torch.utils.data import DataLoader

            def train(model, dataset, steps, device):
                loader = DataLoader(dataset, batch_size=256, shuffle=True, pin_memory=True, num_workers=4)
                it = iter(loader)
                for step in range(steps):
                    batch = next(it)
                    model(batch[0].to(device, non_blocking=True)).sum().backward()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def evaluate(model, ds):
                loader = DataLoader(ds, batch_size=1024, num_workers=4)  # expect: TL503
                with torch.no_grad():
                    return torch.cat([model(x.to("cuda")) for x, _ in loader])
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def evaluate(model, ds):
                loader = DataLoader(ds, batch_size=1024, num_workers=4, pin_memory=True)
                with torch.no_grad():
                    return torch.cat([model(x.to("cuda", non_blocking=True)) for x, _ in loader])
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train(model, source, target, epochs):
                src = DataLoader(source, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True)  # expect: TL503
                tgt = DataLoader(target, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True)  # expect: TL503
                for epoch in range(epochs):
                    for (xs, ys), (xt, _) in zip(src, tgt):
                        model(xs.to(device=device), ys.to(device=device), xt.to(device=device)).backward()
        """, fixed="""
            from torch.utils.data import DataLoader

            def train(model, source, target, epochs):
                src = DataLoader(source, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True, pin_memory=True)
                tgt = DataLoader(target, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True, pin_memory=True)
                for epoch in range(epochs):
                    for (xs, ys), (xt, _) in zip(src, tgt):
                        model(xs.to(device=device, non_blocking=True), ys.to(device=device, non_blocking=True), xt.to(device=device, non_blocking=True)).backward()
        """),
        Invalid("""
            import torch

            def create_dataloader(dataset, batch_size, workers):
                loader_cls = torch.utils.data.DataLoader
                return loader_cls(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True), dataset

            def validate(model, dataset, device):
                loader = create_dataloader(dataset, 32, 8)[0]
                for images, targets in loader:
                    images = images.to(device, non_blocking=True)
                    targets = targets.to(device)  # expect: TL503
                    model(images, targets)
        """, fixed="""
            import torch

            def create_dataloader(dataset, batch_size, workers):
                loader_cls = torch.utils.data.DataLoader
                return loader_cls(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True), dataset

            def validate(model, dataset, device):
                loader = create_dataloader(dataset, 32, 8)[0]
                for images, targets in loader:
                    images = images.to(device, non_blocking=True)
                    targets = targets.to(device, non_blocking=True)
                    model(images, targets)
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            class Pix2Pix:
                def __init__(self, device):
                    self.device = device

                def set_input(self, data):
                    self.real_a = data["A"].to(self.device)

            def train(dataset, epochs):
                loader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4)  # expect: TL503
                model = Pix2Pix(torch.device("cuda"))
                for epoch in range(epochs):
                    for data in loader:
                        model.set_input(data)
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            class Pix2Pix:
                def __init__(self, device):
                    self.device = device

                def set_input(self, data):
                    self.real_a = data["A"].to(self.device)

            def train(dataset, epochs):
                loader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4, pin_memory=True)
                model = Pix2Pix(torch.device("cuda"))
                for epoch in range(epochs):
                    for data in loader:
                        model.set_input(data)
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train_model(model, datasets, optimizer, device, epochs):
                loaders = {phase: DataLoader(datasets[phase], batch_size=4, shuffle=True, num_workers=4)  # expect: TL503
                           for phase in ["train", "val"]}
                for epoch in range(epochs):
                    for phase in ["train", "val"]:
                        for inputs, labels in loaders[phase]:  # a loader of the dict, every epoch
                            loss = model(inputs.to(device), labels.to(device))
                            if phase == "train":
                                loss.backward()
                                optimizer.step()
        """, fixed="""
            from torch.utils.data import DataLoader

            def train_model(model, datasets, optimizer, device, epochs):
                loaders = {phase: DataLoader(datasets[phase], batch_size=4, shuffle=True, num_workers=4, pin_memory=True)
                           for phase in ["train", "val"]}
                for epoch in range(epochs):
                    for phase in ["train", "val"]:
                        for inputs, labels in loaders[phase]:  # a loader of the dict, every epoch
                            loss = model(inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True))
                            if phase == "train":
                                loss.backward()
                                optimizer.step()
        """),
        Invalid("""
            from torch.autograd import Variable
            from torch.utils.data import DataLoader

            def train(model, dataset, optimizer, epochs):
                loader = DataLoader(dataset, batch_size=32, num_workers=4)  # expect: TL503
                for epoch in range(epochs):
                    for images, target in loader:
                        loss = model(Variable(images).cuda(), Variable(target).cuda())
                        loss.backward()
                        optimizer.step()
        """, fixed="""
            from torch.autograd import Variable
            from torch.utils.data import DataLoader

            def train(model, dataset, optimizer, epochs):
                loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True)
                for epoch in range(epochs):
                    for images, target in loader:
                        loss = model(Variable(images).cuda(non_blocking=True), Variable(target).cuda(non_blocking=True))
                        loss.backward()
                        optimizer.step()
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train(model, dataset, optimizer, steps, device):
                loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4)  # expect: TL503
                batches = iter(loader)
                for step in range(steps):  # drawn by step, not by epoch
                    try:
                        x, y = next(batches)
                    except StopIteration:
                        batches = iter(loader)
                        x, y = next(batches)
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    optimizer.step()
        """, fixed="""
            from torch.utils.data import DataLoader

            def train(model, dataset, optimizer, steps, device):
                loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
                batches = iter(loader)
                for step in range(steps):  # drawn by step, not by epoch
                    try:
                        x, y = next(batches)
                    except StopIteration:
                        batches = iter(loader)
                        x, y = next(batches)
                    loss = model(x.to(device, non_blocking=True), y.to(device, non_blocking=True))
                    loss.backward()
                    optimizer.step()
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def main(model, dataset, trainer):
                loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)  # expect: TL503
                trainer.fit(model, train_dataloaders=loader)  # Lightning moves every batch to the GPU
        """, fixed="""
            from torch.utils.data import DataLoader

            def main(model, dataset, trainer):
                loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
                trainer.fit(model, train_dataloaders=loader)  # Lightning moves every batch to the GPU
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def cycle(dl):
                while True:
                    for batch in dl:
                        yield batch

            class Trainer:
                def __init__(self, ds):
                    self.dl = cycle(DataLoader(ds, batch_size=32, pin_memory=True, num_workers=8))

                def train(self, model, steps, device="cuda"):
                    for _ in range(steps):
                        data = next(self.dl).to(device)  # expect: TL503
                        model(data).backward()
        """, fixed="""
            from torch.utils.data import DataLoader

            def cycle(dl):
                while True:
                    for batch in dl:
                        yield batch

            class Trainer:
                def __init__(self, ds):
                    self.dl = cycle(DataLoader(ds, batch_size=32, pin_memory=True, num_workers=8))

                def train(self, model, steps, device="cuda"):
                    for _ in range(steps):
                        data = next(self.dl).to(device, non_blocking=True)
                        model(data).backward()
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            import pytorch_lightning as pl

            class Images(pl.LightningDataModule):
                def train_dataloader(self):
                    loader = DataLoader(self.train_set, batch_size=64, shuffle=True, num_workers=8)  # expect: TL503
                    return loader
        """, fixed="""
            from torch.utils.data import DataLoader
            import pytorch_lightning as pl

            class Images(pl.LightningDataModule):
                def train_dataloader(self):
                    loader = DataLoader(self.train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
                    return loader
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            from tqdm import trange
            from widedeep.utils import to_device

            class Trainer:
                def fit(self, train_set):
                    loader = DataLoader(train_set, batch_size=64, num_workers=self.workers)  # expect: TL503
                    for epoch in range(self.epochs):
                        with trange(len(loader)) as t:
                            for step, X in zip(t, loader):
                                self._train_step(X[0], step)

                def _train_step(self, X_tab, step):
                    loss = self.model(to_device(X_tab, self.device)).sum()
                    loss.backward()
        """, fixed="""
            from torch.utils.data import DataLoader
            from tqdm import trange
            from widedeep.utils import to_device

            class Trainer:
                def fit(self, train_set):
                    loader = DataLoader(train_set, batch_size=64, num_workers=self.workers, pin_memory=True)
                    for epoch in range(self.epochs):
                        with trange(len(loader)) as t:
                            for step, X in zip(t, loader):
                                self._train_step(X[0], step)

                def _train_step(self, X_tab, step):
                    loss = self.model(to_device(X_tab, self.device)).sum()
                    loss.backward()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def train_step(model, batch, device):
                x, y = batch
                return model(x.to(device), y.to(device))  # expect: TL503

            def main(ds, model, optimizer, device):
                loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
                for epoch in range(10):
                    for batch in loader:
                        images, _ = batch
                        images = images.to(device)  # expect: TL503
                        train_step(model, batch, device).backward()
                        optimizer.step()
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def train_step(model, batch, device):
                x, y = batch
                return model(x.to(device, non_blocking=True), y.to(device, non_blocking=True))

            def main(ds, model, optimizer, device):
                loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
                for epoch in range(10):
                    for batch in loader:
                        images, _ = batch
                        images = images.to(device, non_blocking=True)
                        train_step(model, batch, device).backward()
                        optimizer.step()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            class Trainer:
                def fit(self, ds, epochs):
                    loader = DataLoader(ds, batch_size=32, num_workers=4)  # expect: TL503
                    for epoch in range(epochs):
                        for X, y in loader:
                            self.train_batch(X, y)

                def train_batch(self, X, y):
                    X, y = X.to(self.device), y.to(self.device)
                    self.criterion(self.model(X), y).backward()
                    self.optimizer.step()
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            class Trainer:
                def fit(self, ds, epochs):
                    loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
                    for epoch in range(epochs):
                        for X, y in loader:
                            self.train_batch(X, y)

                def train_batch(self, X, y):
                    X, y = X.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
                    self.criterion(self.model(X), y).backward()
                    self.optimizer.step()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=use_cuda)
            for batch in loader:
                batch = batch[0]
                x = batch["image"].cuda()  # expect: TL503
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=use_cuda)
            for batch in loader:
                batch = batch[0]
                x = batch["image"].cuda(non_blocking=True)
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader
            from tqdm import tqdm

            def predict(ds, model, workers, verbose):
                loader = DataLoader(ds, num_workers=workers)  # expect: TL503
                for batch in tqdm(loader) if verbose else loader:
                    model(batch.to("cuda"))
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader
            from tqdm import tqdm

            def predict(ds, model, workers, verbose):
                loader = DataLoader(ds, num_workers=workers, pin_memory=True)
                for batch in tqdm(loader) if verbose else loader:
                    model(batch.to("cuda", non_blocking=True))
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=64, num_workers=4)  # expect: TL503
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

            def train(model, optimizer):
                for data, target in train_loader:
                    data, target = data.to(device), target.to(device)
                    optimizer.zero_grad()
                    model(data, target).backward()
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

            def train(model, optimizer):
                for data, target in train_loader:
                    data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
                    optimizer.zero_grad()
                    model(data, target).backward()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def run_epoch(model, loader):
                for x, y in loader:
                    model(x.cuda(), y.cuda()).backward()

            def main(ds, model):
                loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=8)  # expect: TL503
                for epoch in range(10):
                    run_epoch(model, loader)
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def run_epoch(model, loader):
                for x, y in loader:
                    model(x.cuda(non_blocking=True), y.cuda(non_blocking=True)).backward()

            def main(ds, model):
                loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=8, pin_memory=True)
                for epoch in range(10):
                    run_epoch(model, loader)
        """),
        Invalid("""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class Data(pl.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, num_workers=8)  # expect: TL503
        """, fixed="""
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class Data(pl.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, num_workers=8, pin_memory=True)
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            from .base import Task

            class SeparationTask(Task):
                def val_dataloader(self):
                    return DataLoader(self.val_set, batch_size=64, num_workers=8)  # expect: TL503
        """, fixed="""
            from torch.utils.data import DataLoader

            from .base import Task

            class SeparationTask(Task):
                def val_dataloader(self):
                    return DataLoader(self.val_set, batch_size=64, num_workers=8, pin_memory=True)
        """),
        Invalid("""
            from lightning import LightningDataModule
            from torch.utils.data import DataLoader

            class BaseDataModule(LightningDataModule):
                pass

            class GeoDataModule(BaseDataModule):
                def _dataloader_factory(self, split):
                    return DataLoader(self.datasets[split], batch_size=64, num_workers=8)  # expect: TL503

                def train_dataloader(self):
                    return self._dataloader_factory("train")
        """, fixed="""
            from lightning import LightningDataModule
            from torch.utils.data import DataLoader

            class BaseDataModule(LightningDataModule):
                pass

            class GeoDataModule(BaseDataModule):
                def _dataloader_factory(self, split):
                    return DataLoader(self.datasets[split], batch_size=64, num_workers=8, pin_memory=True)

                def train_dataloader(self):
                    return self._dataloader_factory("train")
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2)  # expect: TL503
            for x in loader:
                x = x.to(device)
        """, fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=2, pin_memory=True)
            for x in loader:
                x = x.to(device, non_blocking=True)
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)  # expect: TL503
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
        """, fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader

            def train(model, ds, device):
                loader = DataLoader(ds, batch_size=32, pin_memory=True)
                for step, (x, y) in enumerate(loader):
                    x = x.to(device)  # expect: TL503
                    loss = model(x, y.to(device, non_blocking=True))
            device = torch.device('cuda')
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader

            def train(model, ds, device):
                loader = DataLoader(ds, batch_size=32, pin_memory=True)
                for step, (x, y) in enumerate(loader):
                    x = x.to(device, non_blocking=True)
                    loss = model(x, y.to(device, non_blocking=True))
            device = torch.device('cuda')
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def fit(model, ds, epochs):
                loader = DataLoader(  # expect: TL503
                    ds,
                    num_workers=4,
                )
                for x in loader:
                    model(x.cuda())
        """, fixed="""
            from torch.utils.data import DataLoader

            def fit(model, ds, epochs):
                loader = DataLoader(
                    ds,
                    num_workers=4,
                    pin_memory=True,
                )
                for x in loader:
                    model(x.cuda(non_blocking=True))
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for batch in loader:
                batch = {k: v.to('cuda') for k, v in batch.items()}  # expect: TL503
        """, fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for batch in loader:
                batch = {k: v.to('cuda', non_blocking=True) for k, v in batch.items()}
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def load_data(train_set, batch_size, workers):
                return DataLoader(train_set, batch_size, shuffle=True, num_workers=workers)  # expect: TL503

            def train(net, train_iter, device):
                for X, y in train_iter:
                    net(X.to(device), y.to(device)).backward()
        """, fixed="""
            from torch.utils.data import DataLoader

            def load_data(train_set, batch_size, workers):
                return DataLoader(train_set, batch_size, shuffle=True, num_workers=workers, pin_memory=True)

            def train(net, train_iter, device):
                for X, y in train_iter:
                    net(X.to(device), y.to(device)).backward()
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4)  # expect: TL503
            for batch in loader:
                batch = tuple(t.to('cuda') for t in batch)
        """, fixed="""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, num_workers=4, pin_memory=True)
            for batch in loader:
                batch = tuple(t.to('cuda', non_blocking=True) for t in batch)
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._loops: List[Tuple[cst.For, FrozenSet[str], Ref]] = []  # open loops over a loader
        self._moves: List[Tuple[Ref, Optional[cst.Call], Tuple[str, ...]]] = []  # batch moves (None: by a helper or the framework)
        self._loaders: Dict[int, _Loader] = {}  # id(DataLoader call) -> what it was given
        self._passes: List[Tuple[str, Ref]] = []  # (key of a parameter of another module's function, what is passed)
        # batches handed to a function of this file: (loop's loader, the calling scope, the callee's name, argument)
        self._handed: List[Tuple[Ref, Scope, str, Union[int, str]]] = []
        # batches handed to a method of another object (`model.set_input(data)`): (loop's loader, method, argument)
        self._handed_to_methods: List[Tuple[Ref, str, Union[int, str]]] = []
        # moves of a parameter: (function, parameter) -> the moves, with their indentation
        self._parameter_moves: Dict[Tuple[Scope, str], List[Tuple[cst.Call, Tuple[str, ...]]]] = {}
        self._builds_loaders = "DataLoader" in ctx.text  # else nothing passed on can be one of its loaders
        self._iterated: List[Ref] = []  # what the loops of the file walk
        self._loader_calls: Dict[int, cst.Call] = {}  # id(DataLoader call) -> the call, for loaders that leave
        self._fits = False  # does the file hand loaders to Lightning (`trainer.fit(model, loader)`)?

    def visit_For(self, node: cst.For) -> None:
        self._enter_iteration(node, node.iter, node.target)

    def leave_For(self, node: cst.For) -> None:
        while self._loops and self._loops[-1][0] is node:
            self._loops.pop()

    def _enter_comprehension(self, node) -> None:
        """``torch.cat([model(x.cuda()) for x, _ in loader])``: entered before its element."""
        self._enter_iteration(node, node.for_in.iter, node.for_in.target)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_For

    def _enter_iteration(self, node: cst.CSTNode, iterable: cst.BaseExpression, target: cst.BaseExpression) -> None:
        """Note the loaders a loop or comprehension walks, with the names their batches get
        (each loader of ``zip(src_loader, tgt_loader)`` with its own part of the target)."""
        if self.ctx.is_test_module:
            return
        if not self.ctx.uses_cuda:
            if self._builds_loaders:
                self._iterated.append(self.ctx.loaders.ref(unwrap_iteration(self.ctx, iterable)))
            return
        iterable = unwrap_iteration(self.ctx, iterable)
        zipped = positional(iterable) if isinstance(iterable, cst.Call) and is_name(iterable.func, "zip") else ()
        refs = [self.ctx.loaders.ref(arg.value) for arg in zipped]
        refs = [None if ref is not None and ref[0] == "global" and self.ctx.global_value(ref[1]) is None else ref
                for ref in refs]  # `t` of `with trange(n) as t` is no loader
        if any(ref is not None for ref in refs):  # for i, batch in zip(pbar, loader)
            parts = target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()
            walked = [(part.value, ref) for part, ref in zip(parts, refs) if ref is not None]
            if len(parts) != len(zipped):
                return
        else:
            ref = self.ctx.loaders.ref(iterable)
            walked = [(target, ref)] if ref is not None else []
        for part, ref in walked:
            self._loops.append((node, frozenset(target_names(part)), ref))
            self._iterated.append(ref)

    def visit_Call(self, node: cst.Call) -> None:
        self._note_loader(node)
        self._note_passes(node)
        self._note_fitted(node)
        self._note_handed(node)
        moved = moved_by_helper(self.ctx, node)
        move: Optional[cst.Call] = None  # a helper's move (`to_device(x, device)`) has nothing to fix
        if moved is None:
            if device_move(self.ctx, node) is None:
                return
            moved, move = node.func.value, node
        drawn = self._drawn_from(moved)
        if drawn is not None:
            self._moves.append((drawn, move, self.ctx.indentation()))
            return
        batch = self._moved_batch(moved)
        for _, names, ref in reversed(self._loops):
            if batch in names:
                self._moves.append((ref, move, self.ctx.indentation()))
                return
        function = self.ctx.scope.function
        if batch is not None and is_parameter(function, batch):  # `def train_step(x, y): x = x.to(device)`
            self._parameter_moves.setdefault((function, batch), []).append((move, self.ctx.indentation()))

    def _note_fitted(self, node: cst.Call) -> None:
        """``trainer.fit(model, loader)``: Lightning moves the loader's batches to the device."""
        if self.ctx.is_test_module:
            return
        for value in fitted(node):
            self._fits = True
            ref = self.ctx.loaders.ref(value)
            if ref is not None:
                self._moves.append((ref, None, ()))

    def _drawn_from(self, moved: cst.BaseExpression) -> Optional[Ref]:
        """The loader a batch is drawn from with ``next``: ``next(self.dl).to(device)``, or the
        name it was assigned or unpacked to, or an item of it (``batch = next(it)`` ...
        ``batch[0].to(device)``; ``next(iter(loader))``, one sample batch, leads to
        no loader); in a loop, also ``next(it)`` of an iterator ``it = iter(loader)`` that the
        loop draws every batch from."""
        if self.ctx.is_test_module or not self.ctx.uses_cuda:
            return None
        for _ in range(2):  # `batch = next(it)` ... `batch[0].to(device)`: through the item, then the name
            while isinstance(moved, cst.Subscript):
                moved = moved.value
            if isinstance(moved, cst.Name):
                moved = self.ctx.value_of(moved.value) or self.ctx.unpacked_from(moved.value)
        if not (isinstance(moved, cst.Call) and is_name(moved.func, "next") and len(moved.args) == 1):
            return None
        source = moved.args[0].value
        if isinstance(source, cst.Name) and in_loop(self.ctx.scope):
            walked = self.ctx.value_of(source.value)
            if isinstance(walked, cst.Call) and is_name(walked.func, "iter") and len(walked.args) == 1:
                source = walked.args[0].value
        return self.ctx.loaders.ref(source)

    def _note_handed(self, node: cst.Call) -> None:
        """``self.train_batch(x, y)`` in a loop over a loader: the function of this file that
        receives the batch may be the one that moves it; ``model.set_input(data)``: so may a
        method of another object, of a class of the project that moves what it is given."""
        func = node.func
        if not self._loops or not isinstance(func, (cst.Name, cst.Attribute)):
            return
        for position, arg in enumerate(positional(node)):
            self._hand(node, arg.value, position)
        for arg in node.args:
            if arg.keyword is not None:
                self._hand(node, arg.value, arg.keyword.value)

    def _hand(self, call: cst.Call, value: cst.BaseExpression, where: Union[int, str]) -> None:
        batch = self._moved_batch(value) if isinstance(value, (cst.Name, cst.Subscript)) else None
        for _, names, ref in reversed(self._loops):
            if batch in names:
                func = call.func
                if isinstance(func, cst.Name) or dotted_name(func.value) == "self":
                    self._handed.append((ref, self.ctx.scope, dotted_name(func), where))
                else:
                    self._handed_to_methods.append((ref, func.attr.value, where))
                return

    def _note_passes(self, node: cst.Call) -> None:
        """``train(model, loader)`` of another module: what it is given may be one of this
        file's loaders, whose batches that function moves (``torchlint.project``)."""
        callee = self.ctx.project_callee(node.func) if self._builds_loaders else None
        if callee is None or self.ctx.is_test_module:
            return
        for position, arg in enumerate(positional(node)):
            ref = self.ctx.loaders.ref(arg.value)
            if ref is not None:
                self._passes.append((f"{callee}#{position}", ref))
        for arg in node.args:
            ref = self.ctx.loaders.ref(arg.value) if arg.keyword is not None else None
            if ref is not None:
                self._passes.append((f"{callee}#{arg.keyword.value}", ref))

    def _note_loader(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node):
            return
        pin = argument(self.ctx, node, "pin_memory", PIN_MEMORY_POSITION)
        if _leaves(self.ctx, node):
            self._loader_calls[id(node)] = node
        self._loaders[id(node)] = _Loader(pin, has_workers(self.ctx, node), self.ctx.indentation())
        if returned_by_epoch_hook(self.ctx, node) and not self.ctx.is_test_module:
            self._moves.append((("loader", node), None, ()))

    def _moved_batch(self, owner: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """The loop's batch name that ``owner.to(...)`` moves: ``x``, ``batch["image"]``, a part
        of it (``x, y = batch``), or an element of a batch walked in a comprehension (``{k:
        v.to(d) for k, v in batch.items()}``); through ``Variable(x)``, which is ``x``, and casts
        (``x.float().to(device)``: a copy of the batch, moved as blocking as the batch itself)."""
        owner = variable_of(self.ctx, owner) or owner
        while isinstance(owner, cst.Subscript) or method_call(owner, *_CASTS) is not None and not owner.args:
            owner = owner.value if isinstance(owner, cst.Subscript) else owner.func.value
        if not isinstance(owner, cst.Name):
            return None
        whole = self.ctx.unpacked_from(owner.value)
        if isinstance(whole, cst.Name) and depth <= 4:
            return self._moved_batch(whole, depth + 1)
        value = self.ctx.value_of(owner.value)
        if value is not None:  # `batch = batch[0]`, `x = batch["image"]`: still (part of) the batch
            value = variable_of(self.ctx, value) or value
            while isinstance(value, cst.Subscript):
                value = value.value
            if not isinstance(value, cst.Name) or depth > 4:
                return None
            return owner.value if value.value == owner.value else self._moved_batch(value, depth + 1)
        batch = _batch_of_element(self.ctx.ancestors, owner.value) or owner.value
        if batch != owner.value and self.ctx.value_of(batch) is not None:  # `[m(x.cuda()) for x in loader]`: a batch
            return owner.value if any(owner.value in names for _, names, _ in self._loops) else None
        return batch

    def leave_Module(self, node: cst.Module) -> None:
        """Every loader the moved batches can come from is known now that the file is walked."""
        moves: Dict[int, List[Tuple[cst.Call, Tuple[str, ...]]]] = {}  # id(loader) -> its batches' moves
        loaders: Dict[int, cst.Call] = {}
        for ref, move, indentation in self._moves:
            for loader in self.ctx.loaders.resolve(ref):
                if id(loader) in self._loaders:
                    loaders[id(loader)] = loader
                    _add_move(moves.setdefault(id(loader), []), move, indentation)
        for key, ref in self._passes:  # passed to another module's function that moves its batches
            for loader in self.ctx.loaders.resolve(ref):
                facts = self._loaders.get(id(loader))
                if facts is not None:
                    self.ctx.offer(f"{key}@loader", "pinned" if _pinned(facts.pin) else "unpinned")
                    if self.ctx.need(key) is not None:
                        loaders[id(loader)] = loader
                        moves.setdefault(id(loader), [])
        method_move_keys = self._method_move_keys()
        for ref, move, indentation in self._moves_in_callees(method_move_keys):
            for loader in self.ctx.loaders.resolve(ref):
                if id(loader) in self._loaders:
                    loaders[id(loader)] = loader
                    _add_move(moves.setdefault(id(loader), []), move, indentation)
        self._tell_about_parameters()
        for key in method_move_keys:
            self.ctx.offer(key, "moved")
        self._tell_about_factories(loaders, moves)
        for key, loader in loaders.items():
            self._check(loader, self._loaders[key], moves[key])
        self._check_escaped(loaders)

    def _check_escaped(self, followed: Dict[int, cst.Call]) -> None:
        """Unpinned loaders with workers that leave the file unwalked (returned, kept on an
        object, passed on) go where the project moves loader batches to the device, if this
        file or another of its project (package, or a script's folder) does so."""
        moves_batches = self._fits or any(self._walks_loader(ref) for ref, _, _ in self._moves) or any(
            scope.kind == "class" and "training_step" in scope.methods and lightning_class(self.ctx, scope)
            for scope in self.ctx.module_scope.methods.values()
        )  # or Lightning trains here (`trainer.fit`, a `training_step`), and copies batches to the device itself
        key = f"{self.ctx.project}@loader-batches-moved"
        if moves_batches:
            self.ctx.offer(key, "moved")
        iterated = {id(loader) for ref in self._iterated for loader in self.ctx.loaders.resolve(ref)}
        escaped = [key for key in self._loader_calls
                   if self._loaders[key].pin is None and self._loaders[key].workers
                   and key not in followed and key not in iterated]
        if escaped and (moves_batches or self.ctx.need(key) is not None):
            for key in escaped:
                self._check(self._loader_calls[key], self._loaders[key], [])

    def _walks_loader(self, ref: Ref) -> bool:
        """Is ``ref`` one of the file's DataLoaders, or a name for a loader (``train_loader``,
        ``data_iter``)?"""
        return bool(self.ctx.loaders.resolve(ref)) or isinstance(ref[-1], str) and bool(LOADER_NAME.search(ref[-1]))

    def _moves_in_callees(self, method_move_keys: List[str]) -> List[Tuple[Ref, Optional[cst.Call], Tuple[str, ...]]]:
        """The moves that functions of this file make of the batches loops hand them, and the
        batches handed to a method of the project that moves what it is given (by the method's
        name, one of ``method_move_keys`` of this file or offered: the object's class is not
        known; nothing to fix there)."""
        found: List[Tuple[Ref, Optional[cst.Call], Tuple[str, ...]]] = []
        for ref, caller, name, where in self._handed:
            function = callee(caller, self.ctx.module_scope, name)
            parameter = parameter_at(function, where) if function is not None else None
            for move, indentation in self._parameter_moves.get((function, parameter), ()):
                found.append((ref, move, indentation))
        for ref, method, where in self._handed_to_methods:
            key = f"{_MOVES_METHOD}{method}#{where}"
            if key in method_move_keys or self.ctx.need(key) is not None:
                found.append((ref, None, ()))
        return found

    def _method_move_keys(self) -> List[str]:
        """The keys of this file's methods (of module-level classes) that move a parameter to
        the device: ``set_input#0`` and ``set_input#input`` of ``def set_input(self, input):
        self.real_a = input["A"].to(self.device)``."""
        keys = []
        for function, parameter in self._parameter_moves:
            owner = function.parent
            if owner is not None and owner.kind == "class" and owner.parent is self.ctx.module_scope:
                position = parameter_position(function, parameter)
                keys.append(f"{_MOVES_METHOD}{function.name}#{parameter}")
                if position is not None:
                    keys.append(f"{_MOVES_METHOD}{function.name}#{position}")
        return keys

    def _tell_about_factories(self, loaders: Dict[int, cst.Call], moves: Dict[int, List]) -> None:
        """Loaders that functions of other modules build and return (``loader, dataset =
        create_dataloader(...)``): this file's moves of their batches are blocking moves of a
        pinned loader if that module says so; and for this file's functions that return a
        loader, the modules moving its batches make an unpinned one count here."""
        by_factory: Dict[str, List[Tuple[cst.Call, Tuple[str, ...]]]] = {}
        for ref, move, indentation in self._moves:  # a move of None: Lightning's (`trainer.fit(model, loader)`)
            for factory in self.ctx.loaders.imported(ref):
                by_factory.setdefault(factory, []).append((move, indentation))
        for factory, factory_moves in by_factory.items():
            self.ctx.offer(f"{factory}@moved", "moved")
            if self.ctx.need(f"{factory}@returns") == "pinned":
                self._check_blocking([(move, indentation) for move, indentation in factory_moves if move is not None])
        if not self._builds_loaders:
            return
        for function in self.ctx.module_scope.methods.values():
            key = self.ctx.function_key(function) if function.kind == "function" else None
            built = [loader for loader in self.ctx.loaders.returned(function) if id(loader) in self._loaders] if key else []
            for loader in built:
                self.ctx.offer(f"{key}@returns", "pinned" if _pinned(self._loaders[id(loader)].pin) else "unpinned")
                if self.ctx.need(f"{key}@moved") is not None:
                    loaders[id(loader)] = loader
                    moves.setdefault(id(loader), [])

    def _tell_about_parameters(self) -> None:
        """For a parameter of a module-level function walked as a loader whose batches are
        moved: tell the modules that pass it a loader, and report the blocking moves if one
        of them passes a pinned loader."""
        by_parameter: Dict[Tuple[str, ...], List[Tuple[cst.Call, Tuple[str, ...]]]] = {}
        for ref, move, indentation in self._moves:
            base = self.ctx.function_key(ref[1]) if ref[0] == "param" and move is not None else None
            position = parameter_position(ref[1], ref[2]) if base is not None else None
            if base is not None:
                keys = (f"{base}#{ref[2]}",) + ((f"{base}#{position}",) if position is not None else ())
                by_parameter.setdefault(keys, []).append((move, indentation))
        for keys, moves in by_parameter.items():
            for key in keys:
                self.ctx.offer(key, "moved")
            if any(self.ctx.need(f"{key}@loader") == "pinned" for key in keys):
                self._check_blocking(moves)

    def _check(self, loader: cst.Call, facts: "_Loader", moves: List[Tuple[cst.Call, Tuple[str, ...]]]) -> None:
        """Unpinned: one fix pins the loader and makes every move of its batches non-blocking.
        Pinned: each blocking move is reported on its own."""
        module = self.ctx.module
        blocking = [(move, indentation) for move, indentation in moves if _blocking(move)]
        if facts.pin is None and facts.workers:
            fixed = with_keyword(loader, "pin_memory", cst.Name("True"))
            replacements = [Replacement(loader, code_in_block(module, fixed, facts.indentation))]
            replacements += [self._non_blocking(move, indentation) for move, indentation in blocking
                             if keyword(move, "non_blocking") is None]
            self.report(loader, replacements=replacements)
        elif _pinned(facts.pin):
            self._check_blocking(moves)

    def _check_blocking(self, moves: List[Tuple[cst.Call, Tuple[str, ...]]]) -> None:
        """Report each move of a pinned loader's batches without ``non_blocking=True``."""
        for move, indentation in moves:
            if _blocking(move):
                fix = (self._non_blocking(move, indentation),) if keyword(move, "non_blocking") is None else ()
                self.report(move, self.non_blocking_message, fix)

    def _non_blocking(self, move: cst.Call, indentation: Tuple[str, ...]) -> Replacement:
        fixed = with_keyword(move, "non_blocking", cst.Name("True"))
        return Replacement(move, code_in_block(self.ctx.module, fixed, indentation))


@dataclass(frozen=True)
class _Loader:
    """What a DataLoader call was given, read where it stands."""

    pin: Optional[cst.BaseExpression]
    workers: bool
    indentation: Tuple[str, ...]
