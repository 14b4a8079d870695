"""TL501 dataloader-without-workers: batches loaded in the training process."""

from __future__ import annotations

import libcst as cst

from torchlint.context.loaders import DATASET_POSITION, NUM_WORKERS_POSITION, argument, dataloader_call
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import literal_value


class DataloaderWithoutWorkers(Rule):
    code = "TL501"
    name = "dataloader-without-workers"
    message = (
        "DataLoader loads batches in the training process (num_workers=0); set num_workers so "
        "loading overlaps the training step"
    )
    triggers = ("DataLoader", "Dataset")  # a dataset class of another file tells whether workers help
    what = (
        "Finds `torch.utils.data.DataLoader(...)` (also monai's and PyG's subclasses) created without "
        "`num_workers` or with `num_workers=0`, under any import alias, reading `**loader_kwargs` "
        "when that dict is built in the same function."
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
        "defining `test_*` functions), whose loaders exercise code rather than train."
    )
    valid = (
        Valid("""
            from torch.utils.data import DataLoader
            DataLoader(ds, batch_size=8, num_workers=4)
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
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or self.ctx.is_test_module:
            return
        workers = argument(self.ctx, node, "num_workers", NUM_WORKERS_POSITION)
        if workers is None or literal_value(workers) == 0:
            if not self.ctx.datasets.needs_no_workers(argument(self.ctx, node, "dataset", DATASET_POSITION)):
                self.report(node)
