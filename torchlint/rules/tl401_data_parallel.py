"""TL401 data-parallel: ``nn.DataParallel``, one process driving every GPU."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Invalid, Rule, Valid


_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.data_parallel"})


class DataParallel(Rule):
    code = "TL401"
    name = "data-parallel"
    message = (
        "`nn.DataParallel` replicates the model and gathers outputs on one GPU every step; "
        "use `DistributedDataParallel` (one process per GPU)"
    )
    triggers = ("DataParallel", "data_parallel")
    what = (
        "Finds calls of `torch.nn.DataParallel(...)` (any import path or alias, including "
        "`torch.nn.parallel.DataParallel`) and of the functional `torch.nn.parallel.data_parallel"
        "(...)`. References that only test for it (`isinstance(model, nn.DataParallel)`, a tuple of "
        "wrapper types, a subclass) are not reported."
    )
    why = (
        "DataParallel is one process driving all GPUs with Python threads. Every step it copies the "
        "module's parameters from the first GPU to the others again, splits the batch, runs the "
        "replicas in threads that contend for the GIL, gathers all outputs on the first GPU (which "
        "therefore does more work and holds more memory than the others) and reduces the gradients "
        "there. DistributedDataParallel runs one process per GPU, broadcasts the parameters once, "
        "and averages gradients in buckets while the backward pass is still running."
    )
    example = Invalid("""
        from torch import nn

        def wrap(model):
            return nn.DataParallel(model).cuda()  # expect: TL401
    """)
    use_instead = Valid("""
        # launched with: torchrun --nproc_per_node=NUM_GPUS train.py
        import os

        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        def wrap(model):
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            return DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    """)
    fix_safety = (
        "No fix: moving to DistributedDataParallel changes how the program is launched (one process "
        "per GPU), how data is split (a `DistributedSampler`) and where logging and checkpoints "
        "happen (rank 0 only)."
    )
    valid = (
        Valid("""
            import torch.nn as nn
            if isinstance(model, nn.DataParallel):
                model = model.module
        """),
        Valid("""
            import torch
            WRAPPERS = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)
        """),
        Valid("""
            import torch.nn as nn
            class Wrapped(nn.DataParallel):
                pass
        """),
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank])
        """),
        Valid("""
            from mylib import DataParallel
            model = DataParallel(model)
        """),
    )
    invalid = (
        Invalid("""
            import torch.nn as nn
            model = nn.DataParallel(model).cuda()  # expect: TL401
        """),
        Invalid("""
            import torch
            model = torch.nn.DataParallel(model, device_ids=[0, 1])  # expect: TL401
        """),
        Invalid("""
            from torch.nn.parallel import DataParallel as DP
            model = DP(model)  # expect: TL401
        """),
        Invalid("""
            from torch.nn.parallel import data_parallel
            y = data_parallel(model, x, device_ids=[0, 1])  # expect: TL401
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in _DATA_PARALLEL:
            self.report(node)
