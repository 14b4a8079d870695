"""TL702 loss-accumulated-with-graph: a running total of the loss that keeps every step's graph."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional, Set, Tuple

import libcst as cst

from torchlint.context import STEP, Scope
from torchlint.rewrite import Replacement, attribute, code_in_block
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name
from torchlint.walker import descendants

_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
# Calls whose result carries no graph: `loss.item()`, `loss.detach()`, `float(loss)`, `loss.tolist()`.
_DETACHING_METHODS = frozenset("item detach tolist numpy".split())
_DETACHING_BUILTINS = frozenset({"builtins.float", "builtins.int"})
_BACKWARD_CALLS = frozenset({"backward", "manual_backward"})  # `fabric.backward(loss)`, `self.manual_backward(loss)`
# The callee of a call whose result requires grad: a loss function or criterion, or a model.
_GRAD_SOURCE = re.compile(r"loss|criterion|(^|_)(model|net)$", re.IGNORECASE)
_LOSS_NAME = re.compile(r"loss", re.IGNORECASE)
_COLLECTIONS = (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_MAX_DEPTH = 4


class LossAccumulatedWithGraph(Rule):
    code = "TL702"
    name = "loss-accumulated-with-graph"
    message = (
        "loss summed across training steps with its graph: the running total keeps every step's autograd graph "
        "alive; add `loss.detach()` (or `.item()`)"
    )
    fix = "unsafe"
    preview = True  # its fixture shows no effect in time or tensor memory: the nodes kept are host memory
    triggers = ("backward", ".step(")
    what = (
        "Finds `total += loss` and `total = total + loss` in a training loop (one that calls `.backward()` or "
        "`optimizer.step()`), where `loss` requires grad (the result of a loss function, a criterion or a "
        "model, or a name that is back-propagated) and the total is carried from one iteration to the next "
        "(it is not reset at the top of the iteration, nor back-propagated itself). Accumulating "
        "`loss.item()`, `loss.detach()` or `float(loss)`, summing loss terms within one step before "
        "`backward()`, and totals kept under `torch.no_grad()` or `torch.inference_mode()` are fine."
    )
    why = (
        "`total + loss` is itself an autograd operation: the result records `loss` as an input, and through it "
        "the whole graph of the step that made `loss`. `backward()` frees the tensors that graph saved, but "
        "not its nodes: they stay reachable from `total`, each step adds its own, and host memory grows with "
        "the number of steps until the total is reset. Where the summed value is not back-propagated at all "
        "(a term summed only for logging), the tensors its graph saved, activations on the device, stay "
        "alive too."
    )
    example = Invalid("""
        import torch

        running_loss = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            running_loss += loss  # expect: TL702
    """)
    use_instead = Valid("""
        import torch

        running_loss = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            running_loss += loss.detach()  # a tensor on the device, no graph; .item() when you log it
    """)
    fix_safety = (
        "The fix adds `.detach()` to the accumulated value: the total holds the same numbers, stays on the "
        "device (no host sync, unlike `.item()`), and no longer records a graph. It is unsafe: the linter "
        "reads one function, and code elsewhere (a caller the total is returned to, a hook reading "
        "`self.total`) may back-propagate through the total or check its `requires_grad`, which the fix "
        "changes. Not reported where the total is back-propagated in the same function (gradient "
        "accumulation, `loss += reg` before `loss.backward()`), where it is reset at the top of each "
        "iteration, or under `torch.no_grad()`/`torch.inference_mode()`."
    )
    valid = (
        Valid("""
            import torch
            for x, y in loader:
                loss_batch = loss_fn(model(x), y)
                loss_batch.backward()
                optimizer.step()
                loss_batch = loss_batch.detach().cpu()  # rebound without its graph
                loss += loss_batch
        """),
        Valid("""
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss.item()
        """),
        Valid("""
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += float(loss)
                epoch_loss = epoch_loss + loss.detach()
        """),
        Valid("""
            import torch
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
                loss = loss + 0.1 * aux_criterion(out, y)
                loss += weight_decay * l2(model)
                loss.backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            def train(model, loader, optimizer, accumulation):
                acc_loss = 0
                for i, (x, y) in enumerate(loader):
                    acc_loss += criterion(model(x), y) / accumulation
                    if (i + 1) % accumulation == 0:
                        acc_loss.backward()
                        optimizer.step()
                        acc_loss = 0
        """),
        Valid("""
            import torch
            for x, y in loader:
                loss = 0
                for head in heads:
                    loss += criterion(head(model(x)), y)
                loss.backward()
                optimizer.step()
        """),
        Valid("""
            import torch
            for x, y in loader:
                step_loss = 0.0
                for chunk_x, chunk_y in zip(x.chunk(4), y.chunk(4)):
                    chunk_loss = criterion(model(chunk_x), chunk_y)
                    chunk_loss.backward()
                    step_loss += chunk_loss
                optimizer.step()
        """),
        Valid("""
            import torch
            def evaluate(model, loader, criterion):
                total = 0
                with torch.no_grad():
                    for x, y in loader:
                        loss = criterion(model(x), y)
                        total += loss
                optimizer.step()
                return total / len(loader)
        """),
        Valid("""
            import torch
            def deep_supervision_loss(preds, target):
                total = 0
                for pred in preds:
                    total += F.cross_entropy(pred, target)
                return total / len(preds)
        """),
        Valid("""
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                batch_loss = loss.item()
                running_loss += batch_loss
                seen += x.shape[0]
        """),
        Valid("""
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses += [loss]
        """),
        Valid("""
            import torch
            for batch in loader:
                loss, chosen_rewards, rejected_rewards = loss_fn(policy(batch), reference(batch))
                loss.backward()
                optimizer.step()
                metrics['rewards/chosen'] += chosen_rewards.mean()
        """),
    )
    invalid = (
        Invalid("""
            import torch
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = torch.nn.MSELoss()
            running_loss = 0.0
            for x in torch.randn(4, 2, 3):
                optimizer.zero_grad()
                loss = criterion(model(x), x.sum(1, keepdim=True))
                loss.backward()
                optimizer.step()
                running_loss += loss  # expect: TL702
            mean_loss = running_loss / 4
        """, fixed="""
            import torch
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            criterion = torch.nn.MSELoss()
            running_loss = 0.0
            for x in torch.randn(4, 2, 3):
                optimizer.zero_grad()
                loss = criterion(model(x), x.sum(1, keepdim=True))
                loss.backward()
                optimizer.step()
                running_loss += loss.detach()
            mean_loss = running_loss / 4
        """),
        Invalid("""
            import torch
            def train_epoch(self):
                total = 0
                for idx, batch in enumerate(self._dataloader):
                    current_loss = self._loss_step(batch) * batch['tokens'].numel()
                    current_loss.backward()
                    total = total + current_loss  # expect: TL702
                    if (idx + 1) % self.accumulate == 0:
                        self._optimizer.step()
                        self.log(total.item())
                        total = 0
        """, fixed="""
            import torch
            def train_epoch(self):
                total = 0
                for idx, batch in enumerate(self._dataloader):
                    current_loss = self._loss_step(batch) * batch['tokens'].numel()
                    current_loss.backward()
                    total = total + current_loss.detach()
                    if (idx + 1) % self.accumulate == 0:
                        self._optimizer.step()
                        self.log(total.item())
                        total = 0
        """),
        Invalid("""
            import torch
            for epoch in range(epochs):
                class_total, kd_total = 0, 0
                for batch in loader:
                    class_loss, kd_loss = loss_step(batch)
                    class_total += class_loss * scale  # expect: TL702
                    self.kd_total += kd_loss  # expect: TL702
                    (class_loss + kd_loss).backward()
                    optimizer.step()
        """, fixed="""
            import torch
            for epoch in range(epochs):
                class_total, kd_total = 0, 0
                for batch in loader:
                    class_loss, kd_loss = loss_step(batch)
                    class_total += (class_loss * scale).detach()
                    self.kd_total += kd_loss.detach()
                    (class_loss + kd_loss).backward()
                    optimizer.step()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        self._assigned_in: Dict[Tuple[Scope, str], Scope] = {}  # (function, target) -> where it was last assigned
        self._backpropagated: Dict[Scope, FrozenSet[str]] = {}

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._check(node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target, value = node.targets[0].target, node.value
        if (
            isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
            and not value.lpar and dotted_name(target) is not None and dotted_name(value.left) == dotted_name(target)
        ):
            self._check(target, value.right)
            return
        for name in filter(None, (dotted_name(element) for element in _targets(target))):
            self._assigned_in[self._key(name)] = self.ctx.scope

    def _key(self, name: str) -> Tuple[Scope, str]:
        return self.ctx.scope.function, name

    def _check(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        ctx = self.ctx
        loop = _outermost_training_loop(ctx.scope)
        base = target.value if isinstance(target, cst.Subscript) else target
        name = dotted_name(base)
        if loop is None or name is None or isinstance(value, _COLLECTIONS):
            return
        if ctx.in_rare_path() or self._under_no_grad():
            return
        reset = self._assigned_in.get(self._key(name))
        if reset is not None and _within(reset, loop):
            return  # reset earlier in the same training iteration: a sum within one step
        backpropagated = self._backpropagated_names(ctx.scope.function)
        if name in backpropagated or not self._requires_grad(value, backpropagated, 0):
            return
        self.report(target, replacements=(self._detach(value),))

    def _requires_grad(self, value: cst.BaseExpression, backpropagated: FrozenSet[str], depth: int) -> bool:
        """Does ``value`` carry a graph: a loss, criterion or model output, or a name back-propagated
        or assigned from one, with nothing that detaches it on the way?"""
        if depth > _MAX_DEPTH or _detaches(value, self.ctx.qualname):
            return False
        nodes = (value, *descendants(value))
        attributes = {id(node.attr) for node in nodes if isinstance(node, cst.Attribute)}
        for node in nodes:
            if isinstance(node, cst.Call):
                callee = dotted_name(node.func)
                if callee is not None and _GRAD_SOURCE.search(callee.rsplit(".", 1)[-1]):
                    return True
            elif isinstance(node, cst.Name) and id(node) not in attributes:
                assigned = self.ctx.value_of(node.value, before=value if depth else None)
                if assigned is not None and _detaches(assigned, self.ctx.qualname):
                    continue  # `loss = loss.detach().cpu()` after its backward: rebound without the graph
                if node.value in backpropagated:
                    return True
                if assigned is None:
                    if _LOSS_NAME.search(node.value) and self.ctx.tensor_kind(node) is None:
                        return True  # unpacked or passed in: `class_loss, kd_loss = step(batch)`
                elif self._requires_grad(assigned, backpropagated, depth + 1):
                    return True
        return False

    def _backpropagated_names(self, function: Scope) -> FrozenSet[str]:
        """Names (and ``self.`` attributes) the function back-propagates: ``loss.backward()``,
        ``scaler.scale(loss).backward()``, ``self.manual_backward(loss)``."""
        found = self._backpropagated.get(function)
        if found is None:
            names: Set[str] = set()
            for node in descendants(function.node):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                    if node.func.attr.value in _BACKWARD_CALLS:
                        for root in (node.func.value, *(arg.value for arg in node.args)):
                            names.update(filter(None, map(dotted_name, (root, *descendants(root)))))
            found = self._backpropagated[function] = frozenset(names)
        return found

    def _under_no_grad(self) -> bool:
        for node in self.ctx.ancestors:
            if isinstance(node, cst.With) and any(self._no_grad(item.item) for item in node.items):
                return True
            if isinstance(node, cst.FunctionDef) and any(self._no_grad(d.decorator) for d in node.decorators):
                return True
        return False

    def _no_grad(self, expression: cst.BaseExpression) -> bool:
        return self.ctx.qualname(expression.func if isinstance(expression, cst.Call) else expression) in _NO_GRAD

    def _detach(self, value: cst.BaseExpression) -> Replacement:
        """``value.detach()``, parenthesised where ``value`` is an operation."""
        operand = value
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
            operand = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        detached = cst.Call(func=attribute(operand, "detach"))
        return Replacement(value, code_in_block(self.ctx.module, detached, self.ctx.indentation()))


def _outermost_training_loop(scope: Scope) -> Optional[Scope]:
    """The outermost loop around ``scope`` in the same function that takes a training step."""
    found = None
    while scope.kind == "loop":
        if scope.hot_kind == STEP:
            found = scope
        scope = scope.parent
    return found


def _within(scope: Scope, outer: Scope) -> bool:
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False


def _targets(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _targets(element.value)
    else:
        yield target


def _detaches(value: cst.BaseExpression, qualname) -> bool:
    """Is a value detached anywhere in ``value`` (``loss.item()``, ``float(loss)``, ``loss.data``)?"""
    for node in (value, *descendants(value)):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _DETACHING_METHODS:
                return True
            if qualname(func) in _DETACHING_BUILTINS:
                return True
        elif isinstance(node, cst.Attribute) and node.attr.value == "data":
            return True
    return False
