"""TL501 dataloader-without-workers: batches loaded in the training process."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.context.loaders import (
    DATASET_POSITION, LOADER_TRIGGERS, NUM_WORKERS_POSITION, argument, dataloader_call, unwrap_iteration,
)
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import is_name, literal_value
from torchlint.walker import descendants


_FEW_BATCHES = 10  # a loop that stops after this many batches at most shows samples, it does not train


class DataloaderWithoutWorkers(Rule):
    code = "TL501"
    name = "dataloader-without-workers"
    message = (
        "DataLoader loads batches in the training process (num_workers=0); set num_workers so "
        "loading overlaps the training step"
    )
    triggers = (*LOADER_TRIGGERS, "Dataset")  # also a dataset class of another file
    what = (
        "Finds `torch.utils.data.DataLoader(...)` (also monai's and PyG's subclasses, and torchdata's `StatefulDataLoader`) created without "
        "`num_workers` or with `num_workers=0`, under any import alias, reading `**loader_kwargs` "
        "when that dict is built in the same function. A subclass of the run (also re-exported by its "
        "package) counts unless its `__init__` fixes the workers (takes neither `num_workers` nor "
        "`**kwargs`). A dataset in memory (a list, `range`, `TensorDataset`, PyG's in-memory datasets (`TUDataset`, `Planetoid`), a class whose "
        "`__getitem__` only indexes what `__init__` stored, also one that a function or method of the "
        "file builds and returns, and the parts `Subset` or `random_split` take of one; a dataset built from a tensor "
        "already moved to the device, `to_dataset(x.to(device))`; a tensor itself, `DataLoader(x, batch_size=n)`) or an `IterableDataset` is not reported: workers cannot help it."
    )
    why = (
        "With no workers, every batch is read, decoded and augmented in the training process, "
        "between two steps: the GPU waits while the CPU prepares data, and the CPU waits while the "
        "GPU computes. Worker processes prepare the next batches while the current step runs. The "
        "gain depends on free CPU cores and on how much time loading takes compared with the step."
    )
    example = Invalid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, shuffle=True)  # expect: TL501
    """)
    use_instead = Valid("""
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=64, shuffle=True,
                            num_workers=8, persistent_workers=True, pin_memory=True)
    """)
    fix_safety = (
        "No fix: the right number of workers depends on the machine's cores and the cost of "
        "loading, and worker processes change where dataset code runs. Not reported when the "
        "call passes `*args`/`**kwargs`, which may carry `num_workers`; when the dataset is "
        "already in memory (a `TensorDataset`, a `range` or list, or a dataset class, of this file "
        "or another of the run, whose `__getitem__` only indexes stored data and at most converts "
        "it: `torch.from_numpy(self.x[i]).float()`), where workers would only add "
        "overhead; when it is an `IterableDataset` of the run, which every worker would "
        "replay unless it shards itself; or in test modules (importing pytest/unittest or "
        "defining `test_*` functions), whose loaders exercise code rather than train; or when "
        "the loader is read for its first batches only (every loop over it ends in `break` or "
        "stops after at most ten batches, `if i == 2: break` with `i` from `enumerate`, or "
        "`next(iter(loader))`), as demos that show a few samples do."
    )
    valid = (
        Valid("""
            from torch.utils.data import DataLoader

            def predict(model, x, batch_size):
                assert x.dim() == 2
                return [model(rows) for rows in DataLoader(x, batch_size=batch_size)]  # slices of a tensor
        """),
        Valid("""
            from torch.utils.data import DataLoader

            def fit(self, train_data):
                train_data = self.processor.process_data(train_data).to(self.device)
                loader = DataLoader(self.processor.to_dataset(train_data), batch_size=100, shuffle=True)
                for batch in loader:  # slices of a device tensor: nothing to load
                    self.step(batch)
        """),
        Valid("""
            from torch_geometric.datasets import TUDataset
            from torch_geometric.loader import DataLoader

            dataset = TUDataset("data", name="MUTAG")  # an InMemoryDataset: items are slices of stored tensors
            loader = DataLoader(dataset, batch_size=32, shuffle=True)
            for epoch in range(100):
                for data in loader:
                    data = data.to("cuda")
        """),
        Valid("""
            from torch.utils.data import DataLoader

            if __name__ == "__main__":
                loader = DataLoader(Images("train"), batch_size=1)
                shown = 5
                for i, (x, y) in enumerate(loader):  # shows five samples, trains nothing
                    show(x, y)
                    if i + 1 >= shown:
                        break
        """),
        Valid("""
            from torch.utils.data import DataLoader, IterableDataset

            class Experience(IterableDataset):
                def __iter__(self):
                    yield from self.play()

            class Agent:
                def __init__(self):
                    self.dataset = None  # a placeholder: built with the loader

                def train_dataloader(self):
                    self.dataset = Experience()
                    return DataLoader(dataset=self.dataset, batch_size=32)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            from torchvision.datasets import ImageFolder

            if __name__ == "__main__":
                images, labels = next(iter(DataLoader(ImageFolder("data"), batch_size=16)))
                print(images.shape)
        """),
        Valid("""
            import torch
            from torchvision.datasets import ImageFolder

            class DataLoader(torch.utils.data.DataLoader):
                def __init__(self, dataset, batch_size=1):
                    super().__init__(dataset, batch_size=batch_size, num_workers=0, collate_fn=list)

            loader = DataLoader(ImageFolder(root), batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(ds, batch_size=8, num_workers=4)
        """),
        Valid("""
            import matplotlib.pyplot as plt
            from torch.utils.data import DataLoader

            if __name__ == "__main__":
                loader = DataLoader(ImageFolderDataset("data"), batch_size=1)
                for x, y in loader:
                    plt.imshow(x[0].permute(1, 2, 0))
                    plt.show()
                    break
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(ds, batch_size=8, num_workers=args.workers)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(ds, **loader_kwargs)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(ds, 8, True, None, None, 4)
        """),
        Valid("""
            from torch.utils.data import DataLoader, TensorDataset
            DataLoader(TensorDataset(x, y), batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader, TensorDataset
            ds = TensorDataset(x, y)
            DataLoader(ds, batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader, TensorDataset, random_split
            train_set, val_set = random_split(TensorDataset(x, y), [0.9, 0.1])
            DataLoader(train_set, batch_size=8, shuffle=True)
        """),
        Valid("""
            from mylib import DataLoader
            DataLoader(ds, batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(range(64), batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader([1, 2, 3], batch_size=2)
        """),
        Valid("""
            import torch
            from torch.utils.data import DataLoader, Dataset

            class Random(Dataset):
                def __init__(self, n):
                    self.data = torch.randn(n, 32)

                def __getitem__(self, i):
                    return self.data[i]

            loader = DataLoader(Random(64), batch_size=8)
        """),
        Valid("""
            from torch.utils.data import DataLoader, IterableDataset

            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_shards()

            loader = DataLoader(Stream(), batch_size=8)
        """),
        Valid("""
            import pytest
            from torch.utils.data import DataLoader

            def test_loader(ds):
                assert len(DataLoader(ds, batch_size=8)) == 4
        """),
    )
    invalid = (
        Invalid("""
            from torchdata.stateful_dataloader import StatefulDataLoader  # a resumable DataLoader

            def setup_data(dataset, batch_size):
                return StatefulDataLoader(dataset, batch_size=batch_size, shuffle=True)  # expect: TL501
        """),
        Invalid("""
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            from torchvision.datasets import ImageFolder

            class Model:
                def train_model(self, examples, root):
                    features = DataLoader(self.load_and_cache_examples(examples), batch_size=8, shuffle=True)
                    images = DataLoader(self.images(root), batch_size=8)  # expect: TL501
                    return features, images

                def load_and_cache_examples(self, examples):
                    dataset = TensorDataset(torch.tensor([convert(example) for example in examples]))
                    return dataset

                def images(self, root):
                    return ImageFolder(root)
        """),
        Invalid("""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8)  # expect: TL501
        """),
        Invalid("""
            import torch
            loader = torch.utils.data.DataLoader(ds, num_workers=0)  # expect: TL501
        """),
        Invalid("""
            from torch.utils.data import DataLoader as DL
            loader = DL(ds, shuffle=True)  # expect: TL501
        """),
        Invalid("""
            from torch.utils.data.dataloader import DataLoader
            loader = DataLoader(ds)  # expect: TL501
        """),
        Invalid("""
            from PIL import Image
            from torch.utils.data import DataLoader, Dataset

            class Images(Dataset):
                def __getitem__(self, i):
                    return Image.open(self.paths[i])

            loader = DataLoader(Images(), batch_size=8)  # expect: TL501
        """),
        Invalid("""
            from torch.utils.data import DataLoader

            def train(model, dataset, opt):
                loader = DataLoader(dataset, batch_size=32)  # expect: TL501
                for x, y in loader:
                    loss = model(x, y)
                    if loss < 0.01:
                        break
                    loss.backward()
                    opt.step()
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or self.ctx.is_test_module:
            return
        workers = argument(self.ctx, node, "num_workers", NUM_WORKERS_POSITION)
        if workers is None or literal_value(workers) == 0:
            if not self.ctx.datasets.needs_no_workers(argument(self.ctx, node, "dataset", DATASET_POSITION)) \
                    and not self._first_batches_only():
                self.report(node)

    def _first_batches_only(self) -> bool:
        """Is the loader read for its first few batches only? It is ``next(iter(DataLoader(...)))``,
        or assigned to a name whose every use in the function is a ``for`` over it that ends in
        ``break`` or stops after a few batches (``if i == 2: break``: a demo that shows some), or
        ``next(iter(name))``."""
        assign = self.ctx.parent
        if isinstance(assign, cst.Arg) and len(self.ctx.ancestors) > 3:  # next(iter(DataLoader(...)))
            outer, inner = self.ctx.ancestors[-4], self.ctx.ancestors[-2]
            return all(isinstance(call, cst.Call) and is_name(call.func, name) and len(call.args) == 1
                       for call, name in ((inner, "iter"), (outer, "next")))
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                or not isinstance(assign.targets[0].target, cst.Name):
            return False
        name = assign.targets[0].target.value
        body = self.ctx.scope.function.node
        peeks = 0
        for node in descendants(body):
            if isinstance(node, cst.For) and is_name(unwrap_iteration(self.ctx, node.iter), name):
                if not (_leaves_after_first(node) or self._stops_after_a_few(node)):
                    return False
                peeks += 1
            elif isinstance(node, cst.Call) and is_name(node.func, "next") and node.args \
                    and isinstance(node.args[0].value, cst.Call) and is_name(node.args[0].value.func, "iter") \
                    and node.args[0].value.args and is_name(node.args[0].value.args[0].value, name):
                peeks += 1
        return peeks > 0 and _uses(body, name) == peeks + 1

    def _stops_after_a_few(self, loop: cst.For) -> bool:
        """``for i, batch in enumerate(loader): ... if i == 2: break``: the count ``enumerate``
        gives is compared with a small number (a literal, or a name assigned one), and the
        loop breaks on it."""
        if not (isinstance(loop.iter, cst.Call) and is_name(loop.iter.func, "enumerate")
                and isinstance(loop.target, cst.Tuple) and isinstance(loop.target.elements[0].value, cst.Name)):
            return False
        count = loop.target.elements[0].value.value
        return any(
            isinstance(node, cst.If) and _is_break(node.body) and self._count_reaches_few(node.test, count)
            for node in descendants(loop.body)
        )

    def _count_reaches_few(self, test: cst.BaseExpression, count: str) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        bound = test.comparisons[0].comparator
        if isinstance(bound, cst.Name):  # assigned once in the function, maybe after the loader is built
            bound = _only_assignment(self.ctx.scope.function.node, bound.value)
        limit = literal_value(bound) if bound is not None else None
        return count in {n.value for n in descendants(test.left) if isinstance(n, cst.Name)} \
            and isinstance(limit, int) and 0 <= limit <= _FEW_BATCHES


def _only_assignment(body: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    values = [
        node.value for node in descendants(body)
        if isinstance(node, cst.Assign) and any(is_name(target.target, name) for target in node.targets)
    ]
    return values[0] if len(values) == 1 else None


def _is_break(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return len(statements) == 1 and isinstance(statements[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
        and len(statements[0].body) == 1 and isinstance(statements[0].body[0], cst.Break)


def _uses(body: cst.CSTNode, name: str) -> int:
    """How often ``name`` is read or bound in ``body`` (not as an attribute, not in imports)."""
    skipped, count = set(), 0
    for node in descendants(body):  # a parent comes before its children
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            skipped.update(id(inner) for inner in descendants(node))
        elif is_name(node, name) and id(node) not in skipped:
            count += 1
    return count


def _leaves_after_first(loop: cst.For) -> bool:
    """Does every pass of ``loop`` end in an unconditional ``break``?"""
    last = loop.body.body[-1] if isinstance(loop.body, cst.IndentedBlock) else loop.body
    statements = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    return bool(statements) and isinstance(statements[-1], cst.Break)
