"""TL205 checkpoint-every-step: ``torch.save`` on every iteration of a training loop."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.context.loaders import walks_batches
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import literal_value, method_call, positional
from torchlint.walker import descendants

_TRAINING_LOOP = "training loop"  # the hot reason FileContext gives a loop that takes a step itself
_EXITS = (cst.Continue, cst.Break, cst.Return, cst.Raise)


class CheckpointEveryStep(Rule):
    code = "TL205"
    name = "checkpoint-every-step"
    message = (
        "torch.save on every training step: serialising and writing the state stalls each step; "
        "save every N steps (`if step % save_every == 0`), once per epoch, or on a new best"
    )
    preview = True  # the accuracy benchmark holds no positive for it yet: its precision is unmeasured
    triggers = ("save(",)
    what = (
        "Finds `torch.save(...)` directly inside the per-step loop of training code, with no `if` around it: "
        "a loop whose own body takes an optimisation step (`loss.backward()`, `optimizer.step()`), or a loop "
        "over a DataLoader or batches (`for batch in train_loader`) that saves a `state_dict()`. Any `if` "
        "between the loop and the save counts as a guard (`if step % N == 0`, `if (i + 1) % save_every == 0`, "
        "save-on-best `if val_loss < best`, a rank check), as does an earlier `if ...: continue` in the loop. "
        "Saves in `except` handlers (an interrupt or crash handler), in an epoch loop whose body does not "
        "itself iterate batches, after the loop, in helpers (often called under a guard) and in test code "
        "are not reported."
    )
    why = (
        "`torch.save` copies every tensor of the state to the host (a device-to-host copy that waits for the "
        "queued GPU work), pickles it and writes the whole file, on the training thread, while the GPU "
        "idles. A checkpoint is as large as the model plus the optimizer state (Adam keeps two more copies of "
        "the parameters), so writing one per step can cost more than the step itself. Saving every N steps "
        "bounds the work a crash loses to N steps at 1/N of the cost."
    )
    example = Invalid("""
        import torch

        def train(model, optimizer, loader, path):
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                torch.save(model.state_dict(), path)  # expect: TL205
    """)
    use_instead = Valid("""
        import torch

        def train(model, optimizer, loader, path, save_every=500):
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if (step + 1) % save_every == 0:
                    torch.save(model.state_dict(), path)
    """)
    fix_safety = (
        "No fix: how often to save is a trade between the time the saves cost and the work a crash loses, and "
        "only the author can pick N (or choose per-epoch or save-on-best checkpoints). The loop that is the "
        "per-step one is the innermost loop around the save that takes the step itself or walks a loader; an "
        "epoch loop that calls `train_one_epoch(...)` and then saves is per epoch, and is not reported."
    )
    valid = (
        Valid("""
            import torch
            def train(model, optimizer, loader, epochs, path):
                for epoch in range(epochs):
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        optimizer.step()
                    torch.save(model.state_dict(), path)
        """),
        Valid("""
            import torch
            def fit(model, optimizer, loader, path, save_every):
                for step, (x, y) in enumerate(loader):
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
                    if step % save_every == 0:
                        torch.save({'model': model.state_dict(), 'step': step}, path)
        """),
        Valid("""
            import torch
            def fit(model, optimizer, loader, val, path):
                best = float('inf')
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
                    val_loss = val(model)
                    if val_loss < best:
                        best = val_loss
                        torch.save(model.state_dict(), path)
        """),
        Valid("""
            import torch
            def fit(model, optimizer, loader, path, every):
                for i, batch in enumerate(loader):
                    model(batch).backward()
                    optimizer.step()
                    if (i + 1) % every != 0:
                        continue
                    torch.save(model.state_dict(), path)
        """),
        Valid("""
            import torch
            def fit(model, optimizer, batches, path, every):
                for i, batch in enumerate(batches):
                    model(batch).backward()
                    optimizer.step()
                    if i % every: continue
                    with open(path, 'wb') as f:
                        torch.save(model.state_dict(), f)
        """),
        Valid("""
            import torch
            def fit(model, optimizer, loader, path):
                for x, y in loader:
                    model(x, y).backward()
                    optimizer.step()
                torch.save(model.state_dict(), path)
        """),
        Valid("""
            import torch
            def run(trainer, epochs, path):
                for epoch in range(epochs):
                    trainer.train_one_epoch()
                    torch.save(trainer.model.state_dict(), f'{path}/epoch{epoch}.pt')
        """),
        Valid("""
            import torch
            def predict(model, loader, out_dir):
                for i, x in enumerate(loader):
                    torch.save(model(x), f'{out_dir}/preds_{i}.pt')
        """),
        Valid("""
            import torch
            def save_network(net, path, retry=3):
                while retry > 0:
                    try:
                        torch.save(net.state_dict(), path)
                    except Exception:
                        retry -= 1
                    else:
                        break
        """),
        Valid("""
            import torch
            class Cache:
                def fill(self, items):
                    for uid, item in items:
                        torch.save(self.process(item), self.path(uid))
        """),
        Valid("""
            import torch
            import pytest
            def test_resume(tmp_path, model, optimizer, loader):
                for x, y in loader:
                    model(x, y).backward()
                    optimizer.step()
                    torch.save(model.state_dict(), tmp_path / 'ckpt.pt')
        """),
        Valid("""
            import torch
            def fit(model, optimizer, loader, path):
                for x, y in loader:
                    model(x, y).backward()
                    optimizer.step()
                    try:
                        pass
                    except KeyboardInterrupt:
                        torch.save(model.state_dict(), path)
                        raise
        """),
    )
    invalid = (
        Invalid("""
            import torch
            def train(model, optimizer, loader, path):
                for x, y in loader:
                    optimizer.zero_grad()
                    model(x, y).backward()
                    optimizer.step()
                    torch.save(model.state_dict(), path)  # expect: TL205
        """),
        Invalid("""
            import torch as T
            def train(model, opt, data, max_steps):
                step = 0
                while step < max_steps:
                    loss = model(next(data))
                    loss.backward()
                    opt.step()
                    step += 1
                    state = {'model': model.state_dict(), 'opt': opt.state_dict(), 'step': step}
                    T.save(state, 'last.pt')  # expect: TL205
        """),
        Invalid("""
            from torch import save
            def train(model, train_loader, train_step, epochs):
                for epoch in range(epochs):
                    for batch in train_loader:
                        train_step(model, batch)
                        save(model.state_dict(), 'checkpoint.pt')  # expect: TL205
        """),
        Invalid("""
            import torch
            for epoch in range(10):
                for i, (x, y) in enumerate(loader):
                    with torch.autocast('cuda'):
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    for name, net in nets.items():
                        torch.save(net.state_dict(), f'{name}.pt')  # expect: TL205
        """),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.scope.kind != "loop" or self.ctx.qualname(node.func) != "torch.save":
            return
        if self.ctx.in_rare_path() or self.ctx.is_test_module:
            return
        loop = self._step_loop(node)
        if loop is not None and not self._guarded(loop):
            self.report(node)

    def _step_loop(self, save: cst.Call) -> Optional[cst.CSTNode]:
        """The innermost loop around the save (in its function) that runs once per step."""
        scope = self.ctx.scope
        while scope.kind == "loop":
            loop = scope.node
            if scope.hot_reason == _TRAINING_LOOP or (isinstance(loop, cst.For) and self._saves_state(loop, save)):
                return loop
            scope = scope.parent
        return None

    def _saves_state(self, loop: cst.For, save: cst.Call) -> bool:
        """A loop over a DataLoader or batches that saves a ``state_dict()``."""
        if not walks_batches(loop):
            return False
        args = positional(save)
        return bool(args) and any(method_call(inner, "state_dict") is not None for inner in descendants(args[0].value))

    def _guarded(self, loop: cst.CSTNode) -> bool:
        """Is there an ``if`` between ``loop`` and the visited save (not ``if True:``), or an
        earlier ``if ...: continue`` in a block around it?"""
        ancestors = self.ctx.ancestors
        start = max(index for index, node in enumerate(ancestors) if node is loop)
        for index in range(start + 1, len(ancestors)):
            node = ancestors[index]
            if isinstance(node, cst.If) and not _always(node.test):
                return True
            if isinstance(node, cst.IndentedBlock) and index + 1 < len(ancestors):
                here = ancestors[index + 1]
                for statement in node.body:
                    if statement is here:
                        break
                    if isinstance(statement, cst.If) and _exits(statement.body):
                        return True
        return False


def _always(test: cst.BaseExpression) -> bool:
    """``if True:`` / ``if 1:``: a test that is trivially true."""
    value = literal_value(test)
    return isinstance(value, (bool, int)) and bool(value)


def _exits(block: cst.BaseSuite) -> bool:
    """Does ``block`` leave the iteration (``continue``, ``break``, ``return``, ``raise``) at its end?"""
    if isinstance(block, cst.SimpleStatementSuite):
        small = block.body
    else:
        last = block.body[-1] if block.body else None
        small = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return bool(small) and isinstance(small[-1], _EXITS)
