"""TL6xx: measuring GPU code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import libcst as cst

from torchlint.context import TENSOR
from torchlint.context.scopes import Scope, is_training_step_call
from torchlint.rules.base import Invalid, Rule
from torchlint.walker import descendants

_TIMERS = frozenset(
    "time.time time.perf_counter time.monotonic time.time_ns time.perf_counter_ns time.monotonic_ns "
    "timeit.default_timer".split()
)
# Calls that wait for the device (or may: a helper named so), after which a timestamp is honest.
_SYNC_METHODS = frozenset(
    "synchronize item cpu tolist numpy elapsed_time wait block_until_ready barrier wait_stream".split()
)
_SYNC_BUILTINS = frozenset({"builtins.print", "builtins.float", "builtins.int", "builtins.bool"})


@dataclass
class _Region:
    """What happened since a timestamp was stored in a name."""

    gpu_work: bool = False
    synced: bool = False
    scope: Optional[Scope] = None  # where the timestamp was taken


class TimingWithoutSync(Rule):
    code = "TL601"
    name = "timing-without-sync"
    message = (
        "timer stopped without `torch.cuda.synchronize()`: CUDA kernels run asynchronously, so this "
        "measures how long launching took, not the GPU work"
    )
    triggers = ("cuda",)
    what = (
        "Finds a closing timestamp (`time.perf_counter() - start`, `end = time.time()`, also "
        "`time.monotonic` and `timeit.default_timer`, under any alias) taken after GPU work since "
        "`start = time.perf_counter()` in the same function, with nothing in between that waits for "
        "the device: `torch.cuda.synchronize()`, `.item()`, `.cpu()`, `.tolist()`, `.numpy()`, an "
        "event's `elapsed_time`/`synchronize`, `print`/`float(...)` of a result, or a helper whose "
        "name contains `sync`. GPU work is a "
        "`.backward()`, an `optimizer.step()`, arithmetic on tensors, or a call on or with a tensor. Only in files that use "
        "CUDA. A clock read inside a loop that never restarts it (`elapsed = time.time() - "
        "start_time` for an ETA or a progress line) is not reported: it spans every iteration so "
        "far, so at most the last few queued steps are missing from it."
    )
    why = (
        "CUDA calls return as soon as the kernel is queued; the GPU runs it later. A timer around "
        "unsynchronised GPU code therefore stops when the launches return, which can be 10 to 1000 "
        "times earlier than when the work ends. The missing time is then charged to whatever "
        "synchronises next (a `.item()`, a copy to the host, the data loader), so the profile "
        "points at the wrong code and optimisations are judged on wrong numbers."
    )
    example = (
        "start = time.perf_counter()\n"
        "out = model(x)\n"
        "elapsed = time.perf_counter() - start"
    )
    use_instead = (
        "torch.cuda.synchronize()\n"
        "start = time.perf_counter()\n"
        "out = model(x)\n"
        "torch.cuda.synchronize()\n"
        "elapsed = time.perf_counter() - start\n"
        "# or: CUDA events, or torch.utils.benchmark.Timer, which synchronise for you"
    )
    fix_safety = (
        "No fix: where to synchronise (before the start too, once per measurement, or with events "
        "so the GPU is not stalled) depends on what is being measured."
    )
    measured = (
        "A correctness rule, not a speed one: the unsynchronised figure is wrong, not slow. On CPU "
        "every op has finished when it returns, so the two timings agree (the project's CPU notes: a "
        "512x512 matmul, 4.49 vs 4.51 ms, torch 2.13.0 on 2 CPU cores). The size of the error needs a CUDA device and "
        "has not been measured by `torchlint bench` yet."
    )
    valid = (
        "import time, torch\nx = torch.randn(8, 8, device='cuda')\nstart = time.perf_counter()\n"
        "y = x @ x\ntorch.cuda.synchronize()\nelapsed = time.perf_counter() - start",
        "import time, torch\nx = torch.randn(8, 8, device='cuda')\nstart = time.time()\n"
        "loss = (x @ x).sum()\nvalue = loss.item()\nelapsed = time.time() - start",
        "import time, torch\nx = torch.randn(8, 8)\nstart = time.time()\ny = x @ x\nelapsed = time.time() - start",
        "import time, torch\nmodel.cuda()\nstart = time.time()\nbatch = next(loader_iter)\n"
        "data_time = time.time() - start",
        "import time, torch\nx = torch.randn(8, 8, device='cuda')\nstart = time.time()\ny = x @ x\n"
        "print(y)\nelapsed = time.time() - start",
        "import time, torch\nx = torch.randn(8, 8, device='cuda')\ny = x @ x\ndeadline = time.time() + 60",
        "import time, torch\nfrom utils import cuda_sync\nx = torch.randn(8, 8, device='cuda')\n"
        "start = time.time()\ny = x @ x\ncuda_sync()\nelapsed = time.time() - start",
        "import time, torch\nmodel.cuda()\nstart_time = time.time()\nfor i, (x, y) in enumerate(loader):\n"
        "    criterion(model(x.cuda()), y.cuda()).backward()\n    optimizer.step()\n"
        "    if i % 10 == 0:\n        eta = (time.time() - start_time) / (i + 1) * (len(loader) - i - 1)",
    )
    invalid = (
        Invalid(
            "import time\nimport torch\n\ndef bench(model):\n    x = torch.randn(64, 3, 224, 224, device='cuda')\n"
            "    start = time.perf_counter()\n    out = model(x)\n    return time.perf_counter() - start\n"
        ),
        Invalid(
            "from time import time as now\nimport torch\nmodel.cuda()\nfor x, y in loader:\n"
            "    t0 = now()\n    loss = criterion(model(x), y)\n    loss.backward()\n"
            "    optimizer.step()\n    t1 = now()\n    print(t1 - t0)\n"
        ),
        Invalid(
            "import time, torch\nx = torch.randn(8, 8, device='cuda')\nstart = time.time()\ny = x @ x\n"
            "print(f'took {time.time() - start:.3f}s')\n"
        ),
        Invalid(
            "import time, torch\nmodel.cuda()\nend = time.time()\nfor x, y in loader:\n"
            "    data_time = time.time() - end\n    loss = criterion(model(x), y)\n    loss.backward()\n"
            "    batch_time = time.time() - end\n    end = time.time()\n"
        ),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._regions: Dict[object, Dict[str, _Region]] = {}  # function scope -> start name -> region

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in _TIMERS:
            return
        regions = self._regions.setdefault(self.ctx.scope.function, {})
        parent = self.ctx.parent
        region: Optional[_Region] = None
        if (
            isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract)
            and parent.left is node and isinstance(parent.right, cst.Name)
        ):
            region = regions.get(parent.right.value)
        stored = _assigned_name(parent, node)
        if stored is not None and region is None and regions:
            region = list(regions.values())[-1]
        if region is not None:
            if region.gpu_work and not region.synced and self.ctx.uses_cuda and not self._running_clock(region):
                self.report(node)
            region.gpu_work = region.synced = False  # this timestamp closed the measurement
        if stored is not None:
            regions.pop(stored, None)
            regions[stored] = _Region(scope=self.ctx.scope)

    def _running_clock(self, region: _Region) -> bool:
        """Read inside a loop that does not restart it: a clock over all iterations so far
        (`elapsed = time.time() - start_time` for an ETA), not a measurement of this step."""
        names = [name for name, other in self._regions[self.ctx.scope.function].items() if other is region]
        scope: Optional[Scope] = self.ctx.scope
        while scope is not None and scope is not region.scope and scope.kind == "loop":
            if not any(_assigns(scope.node, name) for name in names):
                return True
            scope = scope.parent
        return False

    def leave_Call(self, node: cst.Call) -> None:
        regions = self._regions.get(self.ctx.scope.function)
        if not regions:
            return
        if self._syncs(node):
            for region in regions.values():
                region.synced = True
        elif self._gpu_work(node):
            for region in regions.values():
                region.gpu_work = True

    def leave_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        regions = self._regions.get(self.ctx.scope.function)
        if regions and self.ctx.tensor_kind(node) == TENSOR:
            for region in regions.values():
                region.gpu_work = True

    def _syncs(self, node: cst.Call) -> bool:
        """A call that waits for the device, or may: a helper whose name says it syncs."""
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if name in _SYNC_METHODS or "sync" in str(name).lower():
            return True
        return self.ctx.qualname(func) in _SYNC_BUILTINS

    def _gpu_work(self, node: cst.Call) -> bool:
        func = node.func
        if is_training_step_call(func):
            return True
        if isinstance(func, cst.Attribute) and self.ctx.tensor_kind(func.value) == TENSOR:
            return True
        return any(self.ctx.tensor_kind(arg.value) == TENSOR for arg in node.args)


def _assigned_name(parent: Optional[cst.CSTNode], node: cst.Call) -> Optional[str]:
    """``name`` for ``name = <node>``."""
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None


def _assigns(root: cst.CSTNode, name: str) -> bool:
    """Does ``root`` assign ``name`` (``name = ...``)?"""
    return any(
        isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name
        for node in descendants(root)
    )
