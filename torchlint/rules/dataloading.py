"""TL5xx: feeding data to the model."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.rules.base import Invalid, Rule
from torchlint.rules.calls import has_star_args, keyword, positional

DATALOADER = "torch.utils.data.DataLoader"
_NUM_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)


def dataloader_call(ctx, node: cst.Call) -> bool:
    """A call of ``torch.utils.data.DataLoader`` whose arguments are all visible."""
    return ctx.qualname(node.func) == DATALOADER and not has_star_args(node)


def argument(node: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    arg = keyword(node, name)
    if arg is not None:
        return arg.value
    args = positional(node)
    return args[position].value if len(args) > position else None


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
        "call passes `*args`/`**kwargs`, which may carry `num_workers`, or when the dataset is an "
        "in-memory `TensorDataset`, where workers would only add overhead."
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
    )
    invalid = (
        Invalid("from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\n"),
        Invalid("import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=0)\n"),
        Invalid("from torch.utils.data import DataLoader as DL\nloader = DL(ds, shuffle=True)\n"),
        Invalid("from torch.utils.data.dataloader import DataLoader\nloader = DataLoader(ds)\n"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not dataloader_call(self.ctx, node) or self._in_memory_dataset(node):
            return
        workers = argument(node, "num_workers", _NUM_WORKERS_POSITION)
        if workers is None or (isinstance(workers, cst.Integer) and workers.evaluated_value == 0):
            self.report(node)

    def _in_memory_dataset(self, node: cst.Call) -> bool:
        dataset = argument(node, "dataset", 0)
        if isinstance(dataset, cst.Name):
            dataset = self.ctx.value_of(dataset.value) or dataset
        return isinstance(dataset, cst.Call) and (self.ctx.qualname(dataset.func) or "").endswith("TensorDataset")
