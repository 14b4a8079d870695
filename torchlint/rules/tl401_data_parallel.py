"""TL401 data-parallel: ``nn.DataParallel``, one process driving every GPU."""

from __future__ import annotations

from typing import FrozenSet, Optional

import libcst as cst

from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name
from torchlint.walker import descendants


_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.data_parallel"})
_SUBCLASS = "@data_parallel_subclass"  # the key a module's DataParallel subclass is offered by


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
        "(...)`. A wrapper built only to load a checkpoint saved from one and unwrapped again in the "
        "same function (`model = nn.DataParallel(model)` ... `model = model.module`) is not reported. References that only test for it (`isinstance(model, nn.DataParallel)`, a tuple of "
        "wrapper types, the definition of a subclass) are not reported; calls of a subclass the file "
        "defines, or another module of the project does (`class DataParallelWithAttributes(nn."
        "DataParallel)`), are."
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
        Valid("""
            import torch
            from torch import nn

            class Classifier(nn.Module):
                def __init__(self, backbone, weights):
                    super().__init__()
                    self.model = nn.DataParallel(backbone)  # the checkpoint was saved from a wrapper
                    self.model.load_state_dict(torch.load(weights, map_location="cpu"))
                    self.model = self.model.module
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
            from torch import nn

            def build(backbone):
                model = nn.DataParallel(backbone).cuda()  # expect: TL401
                return model

            def export(model):
                model = model.module  # unwrapped for saving only: the training ran replicas
                return model.state_dict()
        """),
        Invalid("""
            from torch.nn.parallel import DataParallel as DP
            model = DP(model)  # expect: TL401
        """),
        Invalid("""
            import torch.nn as nn

            class DataParallelWithAttributes(nn.DataParallel):
                def __getattr__(self, name):
                    try:
                        return super().__getattr__(name)
                    except AttributeError:
                        return getattr(self.module, name)

            model = DataParallelWithAttributes(model)  # expect: TL401
        """),
        Invalid("""
            from torch.nn.parallel import data_parallel
            y = data_parallel(model, x, device_ids=[0, 1])  # expect: TL401
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._subclasses: Optional[FrozenSet[str]] = None  # the file's own DataParallel subclasses

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in _DATA_PARALLEL or (
            isinstance(node.func, cst.Name) and node.func.value in self._own_subclasses()
        ) or self._subclass_elsewhere(node.func):
            if not self._unwrapped(node):
                self.report(node)

    def _unwrapped(self, call: cst.Call) -> bool:
        """Is the wrapper only there to load a checkpoint saved from one: ``model =
        nn.DataParallel(model)``, ``model.load_state_dict(...)``, then ``model = model.module``
        in the same function? The replicas never run."""
        parent = self.ctx.parent
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and parent.value is call):
            return False
        wrapper = dotted_name(parent.targets[0].target)
        return wrapper is not None and any(
            isinstance(node, cst.Assign) and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "module" and dotted_name(node.value.value) == wrapper
            and any(dotted_name(target.target) == wrapper for target in node.targets)
            for node in descendants(self.ctx.scope.function.node or self.ctx.module)
        )

    def leave_Module(self, node: cst.Module) -> None:
        for name in self._own_subclasses():  # for the files that import it
            self.ctx.offer(f"{self.ctx.module_name}.{name}{_SUBCLASS}", "yes")

    def _subclass_elsewhere(self, func: cst.BaseExpression) -> bool:
        """A DataParallel subclass another module of the project defines (only names that say
        `Parallel` are asked about)."""
        key = self.ctx.project_callee(func) if "Parallel" in (dotted_name(func) or "") else None
        return key is not None and self.ctx.need(f"{key}{_SUBCLASS}") == "yes"

    def _own_subclasses(self) -> FrozenSet[str]:
        """Classes the module defines on top of DataParallel (``class BalancedDataParallel(DataParallel)``)."""
        if self._subclasses is None:
            self._subclasses = frozenset(
                statement.name.value for statement in self.ctx.module.body
                if isinstance(statement, cst.ClassDef)
                and any(self.ctx.qualname_ahead(base.value) in _DATA_PARALLEL for base in statement.bases)
            )
        return self._subclasses
