"""TL4xx: using several GPUs."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Invalid, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.data_parallel"})


class DataParallelUsed(Rule):
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
    example = "model = nn.DataParallel(model).cuda()"
    use_instead = (
        "# launched with: torchrun --nproc_per_node=NUM_GPUS train.py\n"
        "dist.init_process_group(\"nccl\")\n"
        "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
        "torch.cuda.set_device(local_rank)\n"
        "model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])"
    )
    fix_safety = (
        "No fix: moving to DistributedDataParallel changes how the program is launched (one process "
        "per GPU), how data is split (a `DistributedSampler`) and where logging and checkpoints "
        "happen (rank 0 only)."
    )
    measured = (
        "Needs at least two GPUs; not measured by `torchlint bench` on the machines available so "
        "far. On a CPU build `DataParallel` only calls the wrapped module (the project's CPU notes "
        "measured about 10-15 us of wrapper overhead per call), so nothing about its multi-GPU cost shows there."
    )
    valid = (
        "import torch.nn as nn\nif isinstance(model, nn.DataParallel):\n    model = model.module",
        "import torch\nWRAPPERS = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)",
        "import torch.nn as nn\nclass Wrapped(nn.DataParallel):\n    pass",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[rank])",
        "from mylib import DataParallel\nmodel = DataParallel(model)",
    )
    invalid = (
        Invalid("import torch.nn as nn\nmodel = nn.DataParallel(model).cuda()\n"),
        Invalid("import torch\nmodel = torch.nn.DataParallel(model, device_ids=[0, 1])\n"),
        Invalid("from torch.nn.parallel import DataParallel as DP\nmodel = DP(model)\n"),
        Invalid("from torch.nn.parallel import data_parallel\ny = data_parallel(model, x, device_ids=[0, 1])\n"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in _DATA_PARALLEL:
            self.report(node)
