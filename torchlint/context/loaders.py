"""DataLoaders: which calls build one, what they were given, and which loops iterate one."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.syntax import has_star_args, keyword, literal_value, positional

DATALOADER = "torch.utils.data.DataLoader"
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, ...)
DATASET_POSITION = 0
NUM_WORKERS_POSITION = 5
PIN_MEMORY_POSITION = 7
_ITERATION_WRAPPERS = frozenset({"builtins.enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "rich.progress.track"})


def dataloader_call(ctx, node: cst.Call) -> bool:
    """A call of ``torch.utils.data.DataLoader`` whose arguments are all visible."""
    return ctx.qualname(node.func) == DATALOADER and not has_star_args(node)


def argument(node: cst.Call, name: str, position: int) -> Optional[cst.BaseExpression]:
    """The argument passed as ``name=`` or at ``position``, if any."""
    arg = keyword(node, name)
    if arg is not None:
        return arg.value
    args = positional(node)
    return args[position].value if len(args) > position else None


def has_workers(loader: cst.Call) -> bool:
    """``num_workers`` is given and is not a literal 0."""
    workers = argument(loader, "num_workers", NUM_WORKERS_POSITION)
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
