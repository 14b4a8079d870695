"""TL601 timing-without-sync: a wall-clock interval around GPU work that does not wait for it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from torchlint.context import NOT, STEP, TENSOR
from torchlint.context.datasets import module_classes
from torchlint.context.devices import waiting_copy_to_host
from torchlint.context.scopes import Scope, callee, is_training_step_call, method_def
from torchlint.context.tensors import DEVICE_METHODS, HOST_READ_BUILTINS, HOST_READ_METHODS, host_read
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import COMPREHENSIONS, assigned_name, dotted_name, is_name, method_call
from torchlint.walker import descendants, simple_statements


_TIMERS = frozenset(
    "time.time time.perf_counter time.monotonic time.time_ns time.perf_counter_ns time.monotonic_ns "
    "timeit.default_timer".split()
)


# What only a module (a model) is asked for: `model.train()`, `model.parameters()`.
_MODULE_MEMBERS = frozenset({"train", "eval", "parameters", "named_parameters", "modules", "zero_grad"})
_TIMER = "@timer"  # the key a module's timing context manager (function or class) is offered by
_TIMER_METHOD = "@timer_method."  # the key, with the method's name, a timing context-manager method is offered by
_BATCH_END = re.compile(r"^on_(\w+_)?batch_end$")  # a callback's hook after each batch: `on_train_batch_end`
_LEAVES_STEP = "@leaves_step."  # the key, with a method's name, a method that steps without waiting is offered by
_STOPWATCH = "@stopwatch"  # the key a stopwatch class is offered by: "its start methods|its stop methods"
# What a file storing a clock reading on `self` shows (`self.start = time.time()`): only then are
# its classes looked at as stopwatches.
_STORES_CLOCK = re.compile(r"self\.\w+\s*=\s*[\w.]*(time|perf_counter|monotonic|default_timer)(_ns)?\(\)")
# Imported classes whose construction may start a stopwatch (`watch = Stopwatch()`): asking the
# project about every constructor would cost, so only classes named like a timer are asked about.
_STOPWATCH_CLASS = re.compile(r"timer|watch|clock", re.IGNORECASE)
# Method names a stopwatch class of another module may start or stop with (the file's own are known).
_STOPWATCH_METHODS = frozenset(
    "tic toc tick tock start stop reset restart begin end resume seconds elapsed lap split since_start "
    "since_last_check".split()
)


# Calls that wait for the device (or may: a helper named so), after which a timestamp is honest;
# besides the host reads (`host_read`).
_WAITING_METHODS = frozenset("synchronize elapsed_time wait block_until_ready barrier wait_stream".split())
# `print`, and torch calls that hand back host values: a saved tensor is copied to the host, a
# comparison of whole tensors returns a Python bool.
_WAITING_BUILTINS = HOST_READ_BUILTINS | frozenset({"builtins.print", "torch.save", "torch.allclose", "torch.equal"})
# Helpers whose name says they bring a tensor to the host: `to_numpy(loss)`, `tensor2np(x)`, `to_cpu(t)`.
_TO_HOST_NAME = re.compile(r"(^|_|2)(numpy|np|cpu)$", re.IGNORECASE)


@dataclass
class _Region:
    """What happened since a timestamp was stored in a name."""

    unwaited: bool = False  # GPU work queued since the timestamp, or since the last wait for the device
    measured: bool = False  # an explicit `timer() - start` has already closed it
    scope: Optional[Scope] = None  # where the timestamp was taken
    work_loop: Optional[Scope] = None  # the loop, opened after the timestamp, that queued the unwaited work
    helpers_since_work: Tuple[str, ...] = ()  # this file's functions called since the last unwaited work
    on_device: bool = False  # the work was queued by another module's method known to train on the device


class TimingWithoutSync(Rule):
    code = "TL601"
    name = "timing-without-sync"
    message = (
        "timer stopped without `torch.cuda.synchronize()`: CUDA kernels run asynchronously, so this "
        "measures how long launching took, not the GPU work"
    )
    # What `uses_cuda` looks for (CUDA, or a move to a device variable), and the clocks of the
    # timers (context managers, stopwatch classes) a file may offer to the others.
    triggers = ("cuda", "device", "gpu", "time()", "time_ns", "perf_counter", "monotonic", "default_timer")
    what = (
        "Finds a closing timestamp (`time.perf_counter() - start`, `end = time.time()`, also "
        "`time.monotonic` and `timeit.default_timer`, under any alias) taken after GPU work since "
        "`start = time.perf_counter()` in the same function, with nothing in between that waits for "
        "the device: `torch.cuda.synchronize()`, `.item()`, `.cpu()`, `.tolist()`, `.numpy()`, an "
        "event's `elapsed_time`/`synchronize`, `print`/`float(...)` of a result, a tensor tested by "
        "`if`/`while` (`if not torch.isfinite(loss):`), a tensor formatted into an f-string, a helper "
        "whose name contains `sync` or says it copies to the host (`to_numpy(loss)`, `tensor2np`), or a "
        "function of the same file that waits itself or through the functions it calls (`val_loss = "
        "validate(model, loader)` reading `.item()` per batch). A stamp that is only ever "
        "subtracted (`turn_start = time.perf_counter()` ... `time.perf_counter() - turn_start`) starts "
        "an interval; it closes none. GPU work is a "
        "`.backward()`, an `optimizer.step()`, arithmetic on tensors, a call on or with a tensor (also an "
        "entry of a batch moved to the device: `batch[\"frame\"].to(device)`), or a call of a model the "
        "function moves to the device (`model = model.cuda()` ... `model(inputs)`) or, in a training loop, "
        "trains (`model.train()` ... `model(**batch)`). Only in files that use "
        "CUDA or move data to a device held in a variable (`x.to(device)`). A clock read inside a loop that never restarts it (`elapsed = time.time() - "
        "start_time` for an ETA or a progress line) is not reported: it spans every iteration so "
        "far, so at most the last few queued steps are missing from it. Nor is one read after a whole "
        "loop that queued the work (`(time.time() - t0) / 3600` hours after the epoch loop): over "
        "many iterations the work still queued at the end is a small part. Unless the loop repeats "
        "the same work over a `range` (a flat loop whose counter is unread) with nothing in it that waits or copies "
        "data to the device (`for _ in range(iters): model(x)`, a benchmark's repeats): then the host runs ahead by the whole launch "
        "queue, and most of the work may still be queued when the clock is read. The same holds for the "
        "project's timing context managers: a `with` block of a generator that reads the clock around "
        "its `yield` (`@contextmanager def timer(name): start = time.time(); yield; ...`), of a class "
        "whose `__enter__` and `__exit__` read it (`with Timer():`, also held in a name: `watch = Timer()` ... "
        "`with watch:`), or of such a method "
        "(`with reporter.measure_time(\"backward\"):`), defined in the file or in another module of the "
        "project, ends by reading the clock (one that first waits for the device, a `torch.cuda.synchronize()` "
        "before its last clock read, times honestly); it is reported at the `with` when the block queues GPU "
        "work and nothing in it waits afterwards. GPU work includes a call of a function of the "
        "file that takes one training step after its last wait (`self.run_iter(batch)` reading "
        "`loss.item()` before `loss.backward()`), and of a method of that name that a class of the "
        "project defines so (`trainer.update(batch)`, whose module then stands for the CUDA use). So are stopwatch classes (`tic()` stores "
        "`self.start = time.time()`, `toc()` returns `time.time() - self.start`; also one whose "
        "`__init__` starts it): `timer.toc()` after unwaited work since `timer.tic()` is reported (unless `toc()` "
        "synchronises), for a timer held in a name, a `self` attribute or a dict of timers (`_t[\"im_detect\"].toc()`). "
        "A callback that stores `self.start = time.time()` in `on_train_batch_start` and reads `time.time() - "
        "self.start` in `on_train_batch_end` times the step the framework runs between the hooks: reported unless "
        "the end hook waits for the device (in files that use CUDA or Lightning)."
    )
    why = (
        "CUDA calls return as soon as the kernel is queued; the GPU runs it later. A timer around"
        " unsynchronised GPU code therefore stops when the launches return, long before the work "
        "ends (the fixture's timer misses most of a forward and backward pass: *Measured* below)."
        " The missing time is then charged to whatever synchronises next (a `.item()`, a copy to "
        "the host, the data loader), so the profile points at the wrong code and optimisations "
        "are judged on wrong numbers."
    )
    example = Invalid("""
        import time

        import torch

        def bench(model):
            x = torch.randn(64, 3, 224, 224, device="cuda")
            start = time.perf_counter()
            out = model(x)
            return out, time.perf_counter() - start  # expect: TL601
    """)
    use_instead = Valid("""
        import time

        import torch

        def bench(model):
            x = torch.randn(64, 3, 224, 224, device="cuda")
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = model(x)
            torch.cuda.synchronize()
            return out, time.perf_counter() - start
            # or: CUDA events, or torch.utils.benchmark.Timer, which synchronise for you
    """)
    fix_safety = (
        "No fix: where to synchronise (before the start too, once per measurement, or with events "
        "so the GPU is not stalled) depends on what is being measured."
    )
    valid = (
        Valid("""
            import time
            import torch
            import lightning.pytorch as pl

            class BatchTimer(pl.Callback):
                def on_train_batch_start(self, trainer, module, batch, batch_idx):
                    torch.cuda.synchronize()
                    self.start = time.time()

                def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
                    torch.cuda.synchronize()  # the step queued between the hooks has run
                    self.total += time.time() - self.start
        """),
        Valid("""
            import time

            def train(model, loader, optimizer, num_tokens, device="cuda"):
                for batch in loader:
                    t0 = time.perf_counter()
                    loss = model(batch.to(device))
                    loss.backward()
                    optimizer.step()
                    per_token = loss / num_tokens
                    log(f"loss {per_token}")  # formatting the tensor waits for it
                    step_time = time.perf_counter() - t0
                    stats = {"loss": to_numpy(loss), "time": time.perf_counter() - t0}  # so does a copy to numpy
        """),
        Valid("""
            import time, torch
            cpu_device = torch.device("cpu")
            model.cuda()
            for images in loader:
                start = time.time()
                outputs = [{k: v.to(cpu_device) for k, v in t.items()} for t in model(images)]
                model_time = time.time() - start
        """),
        Valid("""
            import time, torch
            model.cuda()
            t0 = time.time()
            for epoch in range(epochs):
                for x, y in loader:
                    criterion(model(x.cuda()), y.cuda()).backward()
                    optimizer.step()
            print(f"{epochs} epochs in {(time.time() - t0) / 3600:.3f} hours")
        """),
        Valid("""
            import time, torch
            batches, labels = batches.cuda(), labels.cuda()  # every batch on the device up front
            start = time.time()
            for step in range(steps):  # a training run (its counter read), not a benchmark's repeats
                criterion(model(batches[step]), labels[step]).backward()
                optimizer.step()
            print(f"{steps} steps in {time.time() - start:.0f} s")
        """),
        Valid("""
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            start = time.perf_counter()
            y = x @ x
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
        """),
        Valid("""
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            start = time.time()
            loss = (x @ x).sum()
            value = loss.item()
            elapsed = time.time() - start
        """),
        Valid("""
            import time, torch
            def evaluate(model, loader, losses, batch_time):
                end = time.time()
                for images, target in loader:
                    loss = model(images.cuda(non_blocking=True), target.cuda(non_blocking=True))
                    losses.update(loss.item(), images.size(0))
                    batch_time.update(time.time() - end)
                    end = time.time()
        """),
        Valid("""
            import time, torch
            x = torch.randn(8, 8)
            start = time.time()
            y = x @ x
            elapsed = time.time() - start
        """),
        Valid("""
            import time, torch
            model.cuda()
            start = time.time()
            batch = next(loader_iter)
            data_time = time.time() - start
        """),
        Valid("""
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            start = time.time()
            y = x @ x
            print(y)
            elapsed = time.time() - start
        """),
        Valid("""
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            y = x @ x
            deadline = time.time() + 60
        """),
        Valid("""
            import time, torch
            from utils import cuda_sync
            x = torch.randn(8, 8, device='cuda')
            start = time.time()
            y = x @ x
            cuda_sync()
            elapsed = time.time() - start
        """),
        Valid("""
            import time, torch
            model.cuda()
            start_time = time.time()
            for i, (x, y) in enumerate(loader):
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
                if i % 10 == 0:
                    eta = (time.time() - start_time) / (i + 1) * (len(loader) - i - 1)
        """),
        Valid("""
            import time, torch
            model.cuda()
            def main(loader):
                t0 = time.perf_counter()
                val_loss = validate(model, loader)
                t1 = time.perf_counter() - t0
            def validate(model, loader):
                return sum(model(x.cuda()).item() for x in loader)
        """),
        Valid("""
            import time, torch
            model.cuda()
            start_time = time.perf_counter()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                turn_start = time.perf_counter()  # a start: only ever subtracted, it closes nothing
                optimizer.step()
                if not torch.isfinite(loss):  # reads the loss on the host: waits for the step
                    break
                log(turn=time.perf_counter() - turn_start, step=time.perf_counter() - start_time)
                start_time = time.perf_counter()
        """),
        Valid("""
            import time
            from contextlib import contextmanager

            @contextmanager
            def timer(name, stats):
                start = time.perf_counter()
                yield
                stats[name] = time.perf_counter() - start

            @contextmanager
            def section(name):
                yield name

            def train_epoch(model, loader, criterion, optimizer, stats):
                with timer("epoch", stats):  # a whole loop: at most the last step is still queued
                    for x, y in loader:
                        criterion(model(x.cuda()), y.cuda()).backward()
                        optimizer.step()
                for x, y in loader:
                    with timer("step", stats):
                        loss = criterion(model(x.cuda()), y.cuda())
                        loss.backward()
                        stats["loss"] = loss.item()  # waits for the step before the block ends
                    with section("update"):  # no clock: not a timer
                        optimizer.step()
        """),
        Valid("""
            import time
            from contextlib import contextmanager
            import torch

            @contextmanager
            def cuda_timer(stats, name):
                start = time.perf_counter()
                yield
                torch.cuda.synchronize()
                stats[name] = time.perf_counter() - start

            class CudaTimer:
                def __enter__(self):
                    self.start = time.perf_counter()
                    return self

                def __exit__(self, *exc):
                    torch.cuda.current_stream().synchronize()
                    self.seconds = time.perf_counter() - self.start

            class Stopwatch:
                def tic(self):
                    self.t0 = time.time()

                def toc(self):
                    torch.cuda.synchronize()
                    return time.time() - self.t0

            def bench(model, x, stats):  # each timer waits for the device before it reads the clock
                model = model.cuda()
                with cuda_timer(stats, "forward"):
                    model(x.cuda())
                with CudaTimer():
                    model(x.cuda())
                watch = Stopwatch()
                watch.tic()
                model(x.cuda())
                return watch.toc()
        """),
    )
    invalid = (
        Invalid("""
            import time
            from contextlib import contextmanager
            import torch

            @contextmanager
            def timer(name, stats):
                start = time.perf_counter()
                yield
                stats[name] = time.perf_counter() - start

            def train_epoch(model, loader, optimizer, stats):
                model.train()
                for batch in loader:
                    batch = {k: v.to("cuda", non_blocking=True) for k, v in batch.items()}
                    with timer("forward_time", stats):  # expect: TL601
                        loss = model(**batch)["loss"]  # the model this loop trains
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
        """),
        Invalid("""
            import time

            class Stopwatch:
                def __enter__(self):
                    self.start = time.perf_counter()
                    return self

                def __exit__(self, *exc):
                    self.seconds = time.perf_counter() - self.start

            def timed_forward(model, x):
                x = x.cuda()
                watch = Stopwatch()
                with watch:  # expect: TL601
                    y = model(x)
                return y, watch.seconds
        """),
        Invalid("""
            import time
            import lightning.pytorch as pl

            class BatchTimer(pl.Callback):
                def on_train_batch_start(self, trainer, module, batch, batch_idx):
                    self.start = time.time()

                def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
                    self.total += time.time() - self.start  # expect: TL601
        """),
        Invalid("""
            import time, torch
            model.cuda()
            for images in loader:
                start = time.time()
                outputs = [out.to("cpu", non_blocking=True) for out in model(images)]  # does not wait
                model_time = time.time() - start  # expect: TL601
        """),
        Invalid("""
            import time
            import torch
            import torch.nn.functional as F

            def bench_layer_norm(n, d, iters=50):
                x = torch.randn(n, d, device="cuda")
                start = time.perf_counter_ns()
                for _ in range(iters):  # nothing in the repeats waits: most are still queued at the end
                    F.layer_norm(x, (d,))
                return (time.perf_counter_ns() - start) / iters  # expect: TL601
        """),
        Invalid("""
            import time
            from torch import nn

            class TwoTower(nn.Module):
                def timed_embed(self, user_ids, item_ids):
                    user_ids, item_ids = user_ids.cuda(), item_ids.cuda()
                    start = time.perf_counter()
                    users = self.user(user_ids)
                    items = self.item(item_ids)  # an embedding named `item`: it reads no tensor
                    return users, items, time.perf_counter() - start  # expect: TL601
        """),
        Invalid("""
            import time

            def generator_step(netG, netD, noise, optG):
                netG.cuda()
                start = time.time()
                score = netD(netG(noise.cuda())).mean()
                score.backward()
                d_g_z = score.item()
                optG.step()  # a GAN's generator optimizer: the step is queued after the last wait
                return d_g_z, time.time() - start  # expect: TL601
        """),
        Invalid("""
            import time
            import torch

            def evaluate(model, loader):
                model = model.cuda()  # runs on the device: calling it launches kernels
                compute = 0.0
                with torch.no_grad():
                    for inputs in loader:
                        start = time.perf_counter()
                        outputs = model(inputs)
                        compute += time.perf_counter() - start  # expect: TL601
                return compute

            def timed_forward(model, batch, device):
                frames = batch["frame"].to(device)
                start = time.perf_counter()
                logits = model(frames)
                return logits, time.perf_counter() - start  # expect: TL601

            def demo(model, image, device):
                model.eval().to(device)  # the module's methods return it: this moves `model`
                start = time.time()
                outputs = model([image])
                return outputs, time.time() - start  # expect: TL601
        """),
        Invalid("""
            import time

            class Runner:
                def run_iter(self, batch):
                    x, y = batch
                    loss = self.criterion(self.model(x.to(self.device)), y.to(self.device))
                    self.last_loss = loss.item()  # read before the step: the step is still queued
                    loss.backward()
                    self.optimizer.step()

                def train(self, loader):
                    for batch in loader:
                        tic = time.time()
                        self.run_iter(batch)
                        self.iter_time = time.time() - tic  # expect: TL601
        """),
        Invalid("""
            import time
            from contextlib import contextmanager

            @contextmanager
            def timer(name, stats):
                start = time.perf_counter()
                yield
                stats[name] = time.perf_counter() - start

            class Timer:
                def __enter__(self):
                    self.start = time.time()
                    return self

                def __exit__(self, *exc):
                    self.seconds = time.time() - self.start

            def train_step(model, x, y, criterion, optimizer, stats):
                with timer("forward", stats):  # expect: TL601
                    loss = criterion(model(x.cuda()), y.cuda())
                with Timer() as backward:  # expect: TL601
                    loss.backward()
                    optimizer.step()
                return loss, backward.seconds
        """),
        Invalid("""
            import time

            class Timer:
                def tic(self):
                    self.start_time = time.time()

                def toc(self):
                    self.diff = time.time() - self.start_time
                    return self.diff

            def detect(net, images):
                timers = {"detect": Timer(), "misc": Timer()}
                for image in images:
                    x = image.unsqueeze(0).cuda()
                    timers["detect"].tic()
                    detections = net(x)
                    detect_time = timers["detect"].toc()  # expect: TL601
                    timers["misc"].tic()
                    boxes = detections[0].cpu().numpy()
                    misc_time = timers["misc"].toc()  # the copy to numpy waited
        """),
        Invalid("""
            import time, torch
            model.cuda()
            def main(x):
                t0 = time.perf_counter()
                out = forward_all(model, x.cuda())
                return time.perf_counter() - t0  # expect: TL601
            def forward_all(model, x):
                return [model(x), model(x.flip(0))]
        """),
        Invalid("""
            import time
            def timed_step(model, x, device):
                x = x.to(device)
                start = time.perf_counter()
                model(x).sum().backward()
                return time.perf_counter() - start  # expect: TL601
        """),
        Invalid("""
            import time
            import torch

            def bench(model):
                x = torch.randn(64, 3, 224, 224, device='cuda')
                start = time.perf_counter()
                out = model(x)
                return time.perf_counter() - start  # expect: TL601
        """),
        Invalid("""
            from time import time as now
            import torch
            model.cuda()
            for x, y in loader:
                t0 = now()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                t1 = now()  # expect: TL601
                print(t1 - t0)
        """),
        Invalid("""
            import time, torch
            x = torch.randn(8, 8, device='cuda')
            start = time.time()
            y = x @ x
            print(f'took {time.time() - start:.3f}s')  # expect: TL601
        """),
        Invalid("""
            import time, torch
            model.cuda()
            end = time.time()
            for x, y in loader:
                data_time = time.time() - end
                loss = criterion(model(x), y)
                loss.backward()
                batch_time = time.time() - end  # expect: TL601
                end = time.time()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._regions: Dict[object, Dict[str, _Region]] = {}  # function scope -> start name -> region
        self._suspects: List[Tuple[cst.Call, Scope, Tuple[str, ...]]] = []  # reads waiting on this file's helpers
        self._helper_waits: Dict[int, bool] = {}  # id(function scope) -> does calling it wait for the device
        self._timed_blocks: Dict[object, Dict[cst.With, _Region]] = {}  # function scope -> open `with timer():` blocks
        self._classes: Optional[Dict[str, cst.ClassDef]] = None  # the module's classes by name
        self._stopwatches: Optional[Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]]] = None  # its stopwatch classes
        self._stopwatch_names: Optional[FrozenSet[str]] = None  # the method names a stopwatch may have
        self._stepping: Dict[int, bool] = {}  # id(function) -> does it take a training step it does not wait for
        self._stepping_methods: Optional[FrozenSet[str]] = None  # such methods of the file's classes

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in _TIMERS:
            self._stopwatch_call(node)
            return
        if self._batch_hook_interval(node):
            self.report(node)
            return
        regions = self._regions.setdefault(self.ctx.scope.function, {})
        parent = self.ctx.parent
        region: Optional[_Region] = None
        if (
            isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract)
            and parent.left is node and isinstance(parent.right, cst.Name)
        ):
            region = regions.get(parent.right.value)
            if region is not None:
                region.measured = True
        stored = assigned_name(parent, node)
        if stored is not None and region is None and not self._opens(stored):
            # `end = time.time()` closes the last open interval
            region = next((other for other in reversed(list(regions.values())) if not other.measured), None)
        if region is not None:
            if self._measures_launches(region):
                self._suspect(node, region)
            region.unwaited = False  # this timestamp closed the measurement
        if stored is not None:
            regions.pop(stored, None)
            regions[stored] = _Region(scope=self.ctx.scope)

    def _batch_hook_interval(self, node: cst.Call) -> bool:
        """``time.time() - self.start`` in a callback's ``on_train_batch_end`` that waits for
        nothing, where its ``on_train_batch_start`` stores ``self.start = time.time()``: the
        interval spans the step the framework queues on the device between the two hooks."""
        function = self.ctx.scope.function
        hook = _BATCH_END.match(function.name) if function.kind == "function" else None
        cls = function.enclosing_class
        parent = self.ctx.parent
        if hook is None or cls is None or not (
            isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract)
            and parent.left is node and (dotted_name(parent.right) or "").startswith("self.")
        ) or not (self.ctx.uses_cuda or "lightning" in self.ctx.text):
            return False
        started, phase = dotted_name(parent.right), hook.group(1) or ""
        starts = (method_def(cls.node, f"on_{phase}batch_{word}") for word in ("start", "begin"))
        return any(
            isinstance(stamp, cst.Assign) and isinstance(stamp.value, cst.Call)
            and self.ctx.qualname(stamp.value.func) in _TIMERS
            and any(dotted_name(target.target) == started for target in stamp.targets)
            for start in starts if start is not None for stamp in descendants(start)
        ) and not any(isinstance(call, cst.Call) and self._syncs(call) for call in descendants(function.node))

    def _stopwatch_call(self, node: cst.Call) -> None:
        """``timer.tic()`` ... ``timer.toc()`` of a stopwatch class of the project (one method
        stores the clock on ``self``, another subtracts it): the start and the end of an interval,
        named by the receiver (``t``, ``_t["im_detect"]``, ``self.timer``). A class whose
        ``__init__`` stores the clock starts it when built (``t = Timer()``)."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self._stopwatch_method_names():
            receiver, method = func.value, func.attr.value
        elif (
            isinstance(func, cst.Name) and (func.value in self._own_stopwatches() or _STOPWATCH_CLASS.search(func.value))
            and (held := assigned_name(self.ctx.parent, node)) is not None
        ):
            receiver, method = cst.Name(held), "__init__"
            if self._stopwatch_class(func) is None:
                return
        else:
            return
        methods = self._stopwatch(receiver) if method != "__init__" else self._stopwatch_class(func)
        if methods is None:
            return
        regions = self._regions.setdefault(self.ctx.scope.function, {})
        key = self.ctx.module.code_for_node(receiver)
        if method in methods[0]:
            regions.pop(key, None)
            regions[key] = _Region(scope=self.ctx.scope, measured=True)  # closed only by its own stop
        elif method in methods[1] and (region := regions.get(key)) is not None:
            if self._measures_launches(region):
                self._suspect(node, region)
            region.unwaited = False

    def _stopwatch(self, receiver: cst.BaseExpression) -> Optional[Tuple[FrozenSet[str], FrozenSet[str]]]:
        """The start and stop methods of the stopwatch class every value ``receiver`` may hold
        was built by (``t = Timer()``, ``self.timer = Timer()``, ``_t = {"fwd": Timer(), ...}``)."""
        if isinstance(receiver, cst.Name):
            values = [self.ctx.value_of(receiver.value)]
        elif isinstance(receiver, cst.Attribute) and dotted_name(receiver.value) == "self":
            values = [self.ctx.attribute_value(receiver.attr.value)]
        elif isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Name):
            held = self.ctx.value_of(receiver.value.value)
            values = [element.value for element in held.elements] if isinstance(held, cst.Dict) else []
        else:
            return None
        classes = {self._stopwatch_class(value.func) if isinstance(value, cst.Call) else None for value in values}
        return classes.pop() if len(classes) == 1 else None

    def _stopwatch_class(self, func: cst.BaseExpression) -> Optional[Tuple[FrozenSet[str], FrozenSet[str]]]:
        """The start and stop methods of the stopwatch class ``func`` names: one of the file, or
        of another module of the project (offered by key)."""
        if isinstance(func, cst.Name) and func.value in self._own_classes():
            return self._own_stopwatches().get(func.value)
        key = self.ctx.project_callee(func)
        offered = self.ctx.need(f"{key}{_STOPWATCH}") if key is not None else None
        if offered is None:
            return None
        starts, _, stops = offered.partition("|")
        return frozenset(starts.split(",")), frozenset(stops.split(","))

    def _own_stopwatches(self) -> Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]]:
        """The file's stopwatch classes by name: their start and stop methods (only looked for
        when the file stores a clock reading on ``self``)."""
        if self._stopwatches is None:
            self._stopwatches = {}
            if _STORES_CLOCK.search(self.ctx.text):
                for name, cls in self._own_classes().items():
                    methods = _stopwatch_methods(cls, self.ctx.qualname)
                    if methods is not None:
                        self._stopwatches[name] = methods
        return self._stopwatches

    def _stopwatch_method_names(self) -> FrozenSet[str]:
        """The method names a stopwatch may start or stop with: the usual ones and the file's own."""
        if self._stopwatch_names is None:
            own = (name for starts, stops in self._own_stopwatches().values() for name in starts | stops)
            self._stopwatch_names = _STOPWATCH_METHODS.union(own)
        return self._stopwatch_names

    def _measures_launches(self, region: _Region) -> bool:
        """Does a clock read now close ``region`` over device work nothing waited for (not a
        running clock over a loop, nor a total after one)?"""
        return (
            region.unwaited and (self.ctx.uses_cuda or region.on_device) and not self._running_clock(region)
            and not self._after_loop(region)
        )

    def _opens(self, stored: str) -> bool:
        """Is ``stored = time.time()`` a start, only ever subtracted (``time.time() - stored``)?"""
        sides = {
            "left" if node.left is operand else "right"
            for node in descendants(self.ctx.scope.function.node)
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract)
            for operand in (node.left, node.right)
            if isinstance(operand, cst.Name) and operand.value == stored
        }
        return sides == {"right"}

    def _suspect(self, node: cst.Call, region: _Region) -> None:
        """A clock read after unwaited work: reported, unless a function of this file called
        after that work waits for the device (known once the file is walked)."""
        if region.helpers_since_work:
            self._suspects.append((node, self.ctx.scope, region.helpers_since_work))
        else:
            self.report(node)

    def leave_Module(self, node: cst.Module) -> None:
        for read, scope, helpers in self._suspects:
            if not any(self._waits_in(scope, name) for name in helpers):
                self.report(read)
        if self.ctx.module_name:
            self._offer_timers(node)
        for name in self._own_stepping_methods():  # for the files that call such a method
            self.ctx.offer(f"{_LEAVES_STEP}{name}", "yes")

    def _offer_timers(self, module: cst.Module) -> None:
        """Tell the files that import them which context managers of this module time their block,
        and which classes are stopwatches (with their start and stop methods)."""
        qualname = self.ctx.qualname
        for statement in module.body:
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            qualified = f"{self.ctx.module_name}.{statement.name.value}"
            if isinstance(statement, cst.FunctionDef):
                if _timing_generator(statement, qualname):
                    self.ctx.offer(f"{qualified}{_TIMER}", "yes")
                continue
            if _timing_class(statement, qualname):
                self.ctx.offer(f"{qualified}{_TIMER}", "yes")
            stopwatch = self._own_stopwatches().get(statement.name.value)
            if stopwatch is not None:
                starts, stops = (",".join(sorted(methods)) for methods in stopwatch)
                self.ctx.offer(f"{qualified}{_STOPWATCH}", f"{starts}|{stops}")
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef) and _timing_generator(method, qualname):
                    self.ctx.offer(f"{_TIMER_METHOD}{method.name.value}", "yes")

    def _waits_in(self, caller: Scope, name: str, depth: int = 0) -> bool:
        """Does the function of this file that ``caller`` calls as ``name`` wait for the device,
        itself or through the functions of the file it calls?"""
        function = callee(caller, self.ctx.module_scope, name)
        if function is None or function.node is None or depth > 2:
            return False
        if id(function) not in self._helper_waits:
            self._helper_waits[id(function)] = False  # a recursive call does not wait by itself
            calls = [node for node in descendants(function.node) if isinstance(node, cst.Call)]
            self._helper_waits[id(function)] = any(self._syncs(call) for call in calls) or any(
                self._waits_in(function, helper, depth + 1) for helper in filter(None, map(_helper_name, calls))
            )
        return self._helper_waits[id(function)]

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

    def _after_loop(self, region: _Region) -> bool:
        """Is the clock read after a whole loop that queued the unwaited work (a total training
        time)? Over many iterations that wait the work still queued at the end is a small part;
        not so over a benchmark's repeats that never wait (``_repeats_without_waiting``)."""
        scope: Optional[Scope] = self.ctx.scope
        while scope is not None and scope is not region.work_loop:
            scope = scope.parent
        return region.work_loop is not None and scope is None and not self._repeats_without_waiting(region.work_loop)

    def _repeats_without_waiting(self, loop: Scope) -> bool:
        """``for _ in range(iters): y = model(x)``: a flat loop repeating the same work (its
        counter unread) that nothing in it waits for, nor copies data to the device (a blocking
        copy waits for the queue). The host runs ahead of the device by the whole launch queue,
        so most of the work may be unfinished (an epoch loop reads its counter, or holds a loop over batches)."""
        node = loop.node
        if not (
            isinstance(node, cst.For) and isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Call)
            and self.ctx.qualname(node.iter.func) == "builtins.range"
        ):
            return False
        inner = list(descendants(node.body))
        if any(type(part) in (cst.For, cst.While) or is_name(part, node.target.value) for part in inner):
            return False
        calls = [part for part in inner if isinstance(part, cst.Call)]
        return not any(
            self._syncs(call) or method_call(call, *DEVICE_METHODS) is not None
            or (helper := _helper_name(call)) is not None and self._waits_in(self.ctx.scope, helper)
            for call in calls
        )

    def leave_Call(self, node: cst.Call) -> None:
        regions = self._open_regions()
        if not regions:
            return
        if self._syncs(node):
            self._waited(regions)
            return
        own = self.ctx.function_here(node.func)
        if own is not None and self._leaves_step(own):
            self._queued(regions)  # self.run_iter(batch): a function of the file that steps, waiting for nothing after
            return
        if self._gpu_work(node) and not self._waited_for_by_elements(node):
            self._queued(regions)
        elif self._steps_elsewhere(node):
            self._queued(regions, on_device=True)  # that method's module trains on the device
        helper = _helper_name(node)
        if helper is not None:
            for region in regions:
                region.helpers_since_work += (helper,)

    def _waited_for_by_elements(self, node: cst.Call) -> bool:
        """Is ``node`` what a comprehension walks, whose elements wait for the device
        (``[v.to(cpu) for v in model(images)]``: the walk runs first, the waits after)?"""
        walk, comprehension = self.ctx.parent, self.ctx.ancestors[-2] if len(self.ctx.ancestors) > 1 else None
        if not (isinstance(walk, cst.CompFor) and walk.iter is node and isinstance(comprehension, COMPREHENSIONS)):
            return False
        elements = (comprehension.key, comprehension.value) if isinstance(comprehension, cst.DictComp) else (comprehension.elt,)
        return any(isinstance(inner, cst.Call) and self._syncs(inner) for part in elements for inner in descendants(part))

    def _open_regions(self) -> List[_Region]:
        """The intervals the current function has open: its timestamps and its `with timer():` blocks."""
        function = self.ctx.scope.function
        stamps, blocks = self._regions.get(function), self._timed_blocks.get(function)
        return [*(stamps.values() if stamps else ()), *(blocks.values() if blocks else ())]

    def visit_With(self, node: cst.With) -> None:
        if any(self._times(item.item) for item in node.items):
            self._timed_blocks.setdefault(self.ctx.scope.function, {})[node] = _Region(scope=self.ctx.scope)

    def leave_With(self, node: cst.With) -> None:
        """The end of a `with timer():` block reads the clock: after unwaited work (not queued by a
        whole loop in the block, see `_after_loop`), it measures the launches."""
        region = self._timed_blocks.get(self.ctx.scope.function, {}).pop(node, None)
        if region is not None and region.unwaited and region.work_loop is None and (self.ctx.uses_cuda or region.on_device):
            self._suspect(next(item.item for item in node.items if self._times(item.item)), region)

    def _times(self, item: cst.BaseExpression) -> bool:
        """Is ``item`` of a `with` a timing context manager of the project: a generator that reads
        the clock around its `yield` (``timer("step")``, ``self.timed(...)``, ``reporter.measure_time(...)``)
        or a class whose ``__enter__`` and ``__exit__`` read it (``Timer()``, also held in a name:
        ``sw = Stopwatch()`` ... ``with sw:``)?"""
        if isinstance(item, cst.Name):
            item = self.ctx.value_of(item.value)
        if not isinstance(item, cst.Call):
            return False
        func = item.func
        own = self.ctx.function_here(func)
        if own is not None:
            return _timing_generator(own, self.ctx.qualname)
        if isinstance(func, cst.Name):
            cls = self._own_classes().get(func.value)
            if cls is not None:
                return _timing_class(cls, self.ctx.qualname)
        key = self.ctx.project_callee(func)
        if key is not None:
            return self.ctx.need(f"{key}{_TIMER}") == "yes"
        return isinstance(func, cst.Attribute) and self.ctx.need(f"{_TIMER_METHOD}{func.attr.value}") == "yes"

    def _own_classes(self) -> Dict[str, cst.ClassDef]:
        if self._classes is None:
            self._classes = module_classes(self.ctx.module)
        return self._classes

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._branch_opened(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._branch_opened(node)

    def _branch_opened(self, body: cst.BaseSuite) -> None:
        """``if not torch.isfinite(grad_norm):`` reads a tensor on the host before its body runs."""
        regions = self._open_regions()
        test = getattr(self.ctx.parent, "test", None)
        if regions and test is not None and self.ctx.parent.body is body and self._tests_tensor(test):
            self._waited(regions)

    def _tests_tensor(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._tests_tensor(test.expression)
        if isinstance(test, cst.BooleanOperation):
            return self._tests_tensor(test.left) or self._tests_tensor(test.right)
        return self.ctx.tensor_kind(test) == TENSOR

    def leave_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        """``f"loss {loss}"`` formats a tensor's values: it waits for them."""
        regions = self._open_regions()
        if regions and self.ctx.tensor_kind(node.expression) == TENSOR:
            self._waited(regions)

    @staticmethod
    def _waited(regions: Iterable[_Region]) -> None:
        for region in regions:
            region.unwaited = region.on_device = False
            region.helpers_since_work = ()

    def leave_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        regions = self._open_regions()
        if regions and self.ctx.tensor_kind(node) == TENSOR:
            self._queued(regions)

    def _queued(self, regions: Iterable[_Region], on_device: bool = False) -> None:
        """GPU work was queued here: each region is unwaited, in the outermost loop opened since its timestamp."""
        for region in regions:
            region.unwaited = True
            region.on_device = region.on_device or on_device
            region.helpers_since_work = ()
            region.work_loop = None
            scope: Optional[Scope] = self.ctx.scope
            while scope is not None and scope is not region.scope:
                if scope.kind == "loop":
                    region.work_loop = scope
                scope = scope.parent
            if scope is None:
                region.work_loop = None  # the timestamp was taken in a loop this code is not inside

    def _syncs(self, node: cst.Call) -> bool:
        """A call that waits for the device, or may: a helper whose name says it syncs."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in HOST_READ_METHODS:
            return host_read(node) is not None  # not `self.item(ids)`, an embedding
        name = _called_name(func)
        if name in _WAITING_METHODS or "sync" in name.lower() or _TO_HOST_NAME.search(name):
            return True
        if waiting_copy_to_host(self.ctx, node) is not None:
            return True  # x.to(cpu_device): a copy to the host waits for x
        return self.ctx.qualname(func) in _WAITING_BUILTINS

    def _gpu_work(self, node: cst.Call) -> bool:
        func = node.func
        if is_training_step_call(func):
            return True
        if isinstance(func, cst.Attribute) and self.ctx.tensor_kind(func.value) == TENSOR:
            return self.ctx.tensor_kind(node) != NOT  # x.size(0), x.dim(): metadata, no kernel
        if isinstance(func, cst.Name) and self.ctx.uses_member(func.value, DEVICE_METHODS):
            return True  # model(x) of a model the function moves to the device (`model = model.cuda()`)
        if isinstance(func, cst.Name) and self.ctx.uses_member(func.value, _MODULE_MEMBERS) and self._in_training_loop():
            return True  # model(**batch) in a loop that back-propagates and steps, of a `model.train()`
        return any(self.ctx.tensor_kind(arg.value) == TENSOR for arg in node.args)

    def _in_training_loop(self) -> bool:
        source = self.ctx.scope.hot_source()
        return source is not None and source.kind == "loop" and source.hot_kind == STEP

    def _steps_elsewhere(self, node: cst.Call) -> bool:
        """``trainer.update(batch)``: a method of that name of a class of the file or of the
        project takes a training step after its last wait for the device (``loss.item()`` read
        before ``loss.backward()``); the object's class is not known, its name is."""
        func = node.func
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) == "self" or self.ctx.qualname(func):
            return False
        name = func.attr.value
        return name in self._own_stepping_methods() or self.ctx.need(f"{_LEAVES_STEP}{name}") == "yes"

    def _leaves_step(self, function: cst.FunctionDef) -> bool:
        """Does ``function`` take one training step (``.backward()``, ``optimizer.step()``) after
        the last statement that waits for the device? (One that steps in a loop is a whole run,
        timed like a loop: see ``_after_loop``.)"""
        if id(function) not in self._stepping:
            looped = {
                id(line) for loop in descendants(function.body) if isinstance(loop, (cst.For, cst.While))
                for line in simple_statements(loop.body)
            }
            stepped = waited = -1
            runs = False  # steps in a loop
            for index, line in enumerate(simple_statements(function.body)):
                for call in descendants(line):
                    if isinstance(call, cst.Call):
                        if is_training_step_call(call.func):
                            stepped, runs = index, runs or id(line) in looped
                        elif self._syncs(call):
                            waited = index
            self._stepping[id(function)] = not runs and stepped > waited
        return self._stepping[id(function)]

    def _own_stepping_methods(self) -> FrozenSet[str]:
        """The methods of the file's classes that take a training step and return without waiting."""
        if self._stepping_methods is None:
            steps = ".backward(" in self.ctx.text
            self._stepping_methods = frozenset(
                method.name.value for cls in (self._own_classes().values() if steps else ()) for method in cls.body.body
                if isinstance(method, cst.FunctionDef) and self._leaves_step(method)
            )
        return self._stepping_methods


def _assigns(root: cst.CSTNode, name: str) -> bool:
    """Does ``root`` assign ``name`` (``name = ...``)?"""
    return any(
        isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name
        for node in descendants(root)
    )


def _helper_name(node: cst.Call) -> Optional[str]:
    """``helper`` or ``self.helper`` of ``helper(...)``: a call that may run a function of this file."""
    name = dotted_name(node.func)
    if name is None or name.count(".") > 1 or (name.count(".") == 1 and not name.startswith("self.")):
        return None
    return name


def _clock_read(node: cst.CSTNode, qualname) -> bool:
    """Does ``node`` read the clock somewhere?"""
    return any(_clock_call(inner, qualname) for inner in descendants(node))


def _timing_generator(function: cst.FunctionDef, qualname) -> bool:
    """``@contextmanager`` ``def timer(): start = time.time(); yield; ... time.time() - start``:
    a context manager reading the clock before its ``yield`` and after it."""
    if not any(qualname(decorator.decorator) == "contextlib.contextmanager" for decorator in function.decorators):
        return False
    statements = list(function.body.body)
    at = next((i for i, statement in enumerate(statements) if any(isinstance(node, cst.Yield) for node in descendants(statement))), None)
    return at is not None and any(_clock_read(statement, qualname) for statement in statements[:at]) and any(
        _clock_read(statement, qualname) for statement in statements[at:]
    ) and not any(_synchronizes(statement) for statement in statements[at:])


def _timing_class(cls: cst.ClassDef, qualname) -> bool:
    """A class whose ``__enter__`` and ``__exit__`` read the clock (``with Timer() as t:``), and
    whose ``__exit__`` does not wait for the device first."""
    enter, leave = (method_def(cls, name) for name in ("__enter__", "__exit__"))
    return (
        enter is not None and leave is not None and _clock_read(enter, qualname) and _clock_read(leave, qualname)
        and not _synchronizes(leave)
    )


def _stopwatch_methods(cls: cst.ClassDef, qualname) -> Optional[Tuple[FrozenSet[str], FrozenSet[str]]]:
    """A stopwatch class (``tic`` stores ``self.start = time.time()``, ``toc`` reads
    ``time.time() - self.start``): its start methods and its stop methods, or None."""
    starts: Dict[str, Set[str]] = {}  # attribute -> methods storing the clock in it
    stops: Dict[str, Set[str]] = {}  # attribute -> methods subtracting it from the clock
    for method in cls.body.body:
        if not isinstance(method, cst.FunctionDef) or method.name.value in ("__enter__", "__exit__"):
            continue
        for node in descendants(method):
            if isinstance(node, cst.Assign) and _clock_call(node.value, qualname):
                for target in node.targets:
                    if isinstance(target.target, cst.Attribute) and dotted_name(target.target.value) == "self":
                        starts.setdefault(target.target.attr.value, set()).add(method.name.value)
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract) and _clock_call(node.left, qualname):
                right = node.right
                if isinstance(right, cst.Attribute) and dotted_name(right.value) == "self":
                    stops.setdefault(right.attr.value, set()).add(method.name.value)
    started = {name for attribute in starts.keys() & stops.keys() for name in starts[attribute]}
    stopped = {name for attribute in starts.keys() & stops.keys() for name in stops[attribute]} - started
    stopped -= {name for name in stopped if _synchronizes(method_def(cls, name))}  # `toc()` waiting first is honest
    return (frozenset(started), frozenset(stopped)) if started and stopped else None


def _synchronizes(node: cst.CSTNode) -> bool:
    """Does ``node`` call something named for waiting on the device (``torch.cuda.synchronize()``,
    ``self.sync()``)? A timer that does so before reading the clock measures honestly."""
    return any(
        isinstance(call, cst.Call) and "sync" in _called_name(call.func).lower() for call in descendants(node)
    )


def _called_name(func: cst.BaseExpression) -> str:
    """The name a call ends in: ``synchronize`` of ``torch.cuda.current_stream().synchronize``."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _clock_call(node: cst.BaseExpression, qualname) -> bool:
    return isinstance(node, cst.Call) and qualname(node.func) in _TIMERS
