"""TL202 python-loop-over-tensor: a Python loop that walks a tensor element by element in a hot path."""

from __future__ import annotations

from typing import Iterable, List, Optional

import libcst as cst

from torchlint.context import TENSOR
from torchlint.context.scopes import in_model_code
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import method_call, positional, target_names
from torchlint.walker import descendants


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)


class PythonLoopOverTensor(Rule):
    code = "TL202"
    name = "python-loop-over-tensor"
    message = (
        "Python loop over the elements of a tensor in a hot path: kernel launches per element; "
        "vectorise (broadcasting, gather/scatter, einsum, bucketize/searchsorted)"
    )
    what = (
        "Finds `for` loops and comprehensions in `forward`, losses and their helpers that walk a "
        "tensor element by element: iterating the tensor itself (`for row in x`, "
        "`enumerate(x)`, `zip(x, y)`, `x.unbind(0)`), or a `range` over one of its dimensions "
        "(`range(x.shape[0])`, `range(x.size(1))`, `range(len(x))`, or `B` from `B, T, C = x.shape`) "
        "whose body indexes a tensor with the loop variable (`x[i]`, `out[:, i]`). The iterated name "
        "must be used like a tensor in the function (`x.shape`, `x.view(...)`), which tells a tensor "
        "from a list of feature maps."
    )
    why = (
        "Each iteration issues its own small operations: `x[i]` makes a view, and every op on it is "
        "one or more kernel launches (several microseconds each on a GPU, a few of dispatch on the "
        "CPU) doing almost no work, so the loop costs launches x elements and grows with the batch "
        "or sequence length. Writes through boolean masks (`q[m] = v`) and Python reads of values "
        "add a host sync per iteration. A vectorised formulation does the whole tensor in a handful "
        "of kernels: broadcasting, `torch.gather`/`scatter_add`, `einsum`, "
        "`torch.bucketize`/`searchsorted` for binning, `torch.where` for conditionals."
    )
    example = Invalid("""
        import torch
        from torch import nn

        class Quantize(nn.Module):
            def forward(self, x):  # x: (rows, cols); boundaries: (levels - 1,)
                q = torch.zeros_like(x)
                for i in range(x.shape[0]):  # expect: TL202
                    for level in range(1, self.levels):
                        q[i][x[i] >= self.boundaries[level - 1]] = level
                return q
    """)
    use_instead = Valid("""
        import torch
        from torch import nn

        class Quantize(nn.Module):
            def forward(self, x):
                return torch.bucketize(x, self.boundaries, right=True).to(x.dtype)
    """)
    fix_safety = (
        "No fix: the vectorised form depends on what the loop computes. Not reported for loops over "
        "modules (`self.layers`, `nn.ModuleList`, lists of blocks), over Python lists of tensors "
        "(`for f in features`), over `zip` of lists, over a literal or attribute range "
        "(`range(3)`, `range(self.num_layers)`), over chunks (`x.split(n)`, `x.chunk(k)`: a few "
        "large pieces), over a dimension whose body does not index per element (`for h in "
        "range(x.shape[1]): outs.append(self.heads[h](x))`), for recurrences where each step needs "
        "the previous one (an RNN cell fed its own state, `h = self.cell(x[:, t], h)` or `for x_t in x.unbind(1)`, or a filter "
        "reading `y[:, t - 1]`), in training-loop code, or in `while` loops (their trip count is "
        "not visible)."
    )
    valid = (
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for i in range(self.num_layers):
                        x = self.blocks[i](x)
                    return x
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    for c in range(3):
                        x[:, c] = x[:, c] * self.scale[c]
                    return x
        """),
        Valid("""
            import torch
            class FPN(nn.Module):
                def forward(self, features):
                    outs = []
                    for i, f in enumerate(features):
                        outs.append(self.convs[i](f))
                    return outs
        """),
        Valid("""
            import torch
            class Head(nn.Module):
                def forward(self, xs):
                    return [conv(x) for conv, x in zip(self.convs, xs)]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for chunk in x.split(256):
                        outs.append(self.mlp(chunk))
                    return torch.cat(outs).view(x.shape)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for h in range(x.shape[1]):
                        outs.append(self.heads[h](x))
                    return outs
        """),
        Valid("""
            import torch
            def detection_loss(preds, targets):
                total = 0
                for b in range(len(targets)):
                    total = total + preds[b][targets[b]['labels']].sum()
                return total
        """),
        Valid("""
            import torch
            def collate(x):
                return [row for row in x.view(x.shape[0], -1)]
        """),
        Valid("""
            import torch
            for x, y in loader:
                for row in x.view(x.shape[0], -1):
                    pass
                loss = model(x).backward()
        """),
        Valid("""
            import torch
            class RNN(nn.Module):
                def forward(self, x, h):
                    outs = []
                    for t in range(x.shape[1]):
                        h = self.cell(x[:, t], h)
                        outs.append(h)
                    return torch.stack(outs, 1)
        """),
        Valid("""
            import torch
            class Decoder(nn.Module):
                def forward(self, x, state):
                    B, T, C = x.shape
                    for t in range(T):
                        out, state = self.step(x[:, t], state)
                    return out
        """),
        Valid("""
            import torch
            def collate_loss(batch):
                tensor = torch.zeros(len(batch), 3)
                for j in range(len(batch[0][0])):
                    tensor[j] += batch[j][0][0]
                return tensor
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    outs = []
                    for i in range(0, x.shape[0], 1024):
                        outs.append(self.mlp(x[i:i + 1024]))
                    return torch.cat(outs)
        """),
        Valid("""
            import torch
            def move_loss(value, device):
                if isinstance(value, torch.Tensor):
                    return value.to(device)
                return type(value)(move_loss(v, device) for v in value)
        """),
        Valid("""
            import torch
            class CellRNN(nn.Module):
                def forward(self, x):
                    h = x.new_zeros(x.shape[0], self.hidden)
                    outs = []
                    for x_t in x.unbind(1):
                        h = self.cell(x_t, h)
                        outs.append(h)
                    return torch.stack(outs, 1)
        """),
        Valid("""
            import torch
            class IIR(nn.Module):
                def forward(self, x):
                    y = torch.zeros_like(x)
                    for t in range(1, x.shape[1]):
                        y[:, t] = self.a * y[:, t - 1] + x[:, t]
                    return y
        """),
    )
    invalid = (
        Invalid("""
            import torch
            class Quantize(nn.Module):
                def forward(self, x):
                    q = torch.zeros_like(x)
                    for i in range(x.shape[0]):  # expect: TL202
                        for level in range(1, self.levels):
                            q[i][x[i] >= self.boundaries[level - 1]] = level
                    return q
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    out = []
                    for row in x:  # expect: TL202
                        out.append(self.proj(row))
                    return torch.stack(out).view(x.shape[0], -1)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    B, T, C = x.shape
                    y = x.new_zeros(B)
                    for b in range(B):  # expect: TL202
                        y[b] = x[b].norm()
                    return y
        """),
        Invalid("""
            import torch
            def l1_loss(pred, target):
                total = 0.0
                for i in range(pred.size(0)):  # expect: TL202
                    total = total + (pred[i] - target[i]).abs().sum()
                return total
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return torch.stack([self.f(x[i]) for i in range(x.size(0))])  # expect: TL202
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    out = []
                    for b in range(x.shape[0]):  # expect: TL202
                        feat = x[b]
                        out.append(self.head(feat))
                    return torch.stack(out)
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x, y):
                    n = len(x)
                    s = x.new_zeros(n)
                    for i in range(n):  # expect: TL202
                        s[i] = (x[i] * y[i]).sum()
                    return s
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    x = x.flatten(1)
                    return [self.g(v) for i, v in enumerate(x.unbind(0))]  # expect: TL202
        """),
    )

    def visit_For(self, node: cst.For) -> None:
        if self._walks_tensor(node.iter, node.target, [node.body]):
            self.report(node, hot_when=in_model_code)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        holder = self.ctx.parent
        body: List[cst.CSTNode] = list(node.ifs)
        if isinstance(holder, _COMPREHENSIONS):
            body.append(holder.elt)
        elif isinstance(holder, cst.DictComp):
            body.extend((holder.key, holder.value))
        if self._walks_tensor(node.iter, node.target, body):
            self.report(node, hot_when=in_model_code)

    def _walks_tensor(self, iterable: cst.BaseExpression, target: cst.BaseExpression, body) -> bool:
        if self.ctx.in_definition():
            return False
        nodes = [node for part in body for node in descendants(part)]
        variable = target.value if isinstance(target, cst.Name) else ""
        if any(self._is_tensor_rows(candidate) for candidate in _iterated(self.ctx, iterable)):
            return not _recurrence(self.ctx, nodes, variable)  # `for x_t in x.unbind(1): h = cell(x_t, h)`
        stop = _range_stop(self.ctx, iterable)
        if stop is None or not variable:
            return False
        sized = self.ctx.sized_tensor(stop)
        if sized is None or not self._evident_tensor(sized, stop):
            return False
        if _recurrence(self.ctx, nodes, variable):
            return False
        return any(self._indexes_by(node, variable) for node in nodes)

    def _is_tensor_rows(self, node: cst.BaseExpression) -> bool:
        """``x``, ``x[0]`` or ``x.unbind(...)`` for a name ``x`` used like a tensor."""
        unbind = method_call(node, "unbind")
        base = unbind.value if unbind is not None else node
        while isinstance(base, cst.Subscript):
            base = base.value
        return (
            isinstance(base, cst.Name)
            and self.ctx.tensor_kind(base) == TENSOR
            and self.ctx.used_as_tensor(base.value)
        )

    def _evident_tensor(self, sized: cst.BaseExpression, stop: cst.BaseExpression) -> bool:
        """``x.shape[0]`` / ``x.size(0)`` prove ``x`` is a tensor; ``len(x)`` needs more."""
        length = stop if not isinstance(stop, cst.Name) else self.ctx.value_of(stop.value)
        is_len = isinstance(length, cst.Call) and isinstance(length.func, cst.Name) and length.func.value == "len"
        return not is_len or self._is_tensor_rows(sized)

    def _indexes_by(self, node: cst.CSTNode, variable: str) -> bool:
        if not isinstance(node, cst.Subscript) or self.ctx.tensor_kind(node.value) != TENSOR:
            return False
        return any(
            isinstance(inner, cst.Name) and inner.value == variable
            for element in node.slice
            for inner in descendants(element)
        )


def _recurrence(ctx, nodes: List[cst.CSTNode], variable: str) -> bool:
    """Does each iteration depend on the previous one, so the loop is inherently sequential?
    A state fed back through a call (``h = self.cell(x[:, t], h)``) or a neighbour read
    (``y[:, t] = a * y[:, t - 1] + x[:, t]``). Running sums (``total += ...``) do not count."""
    assigned = set()  # names the body rebinds that already held a value before the loop
    for node in nodes:
        if isinstance(node, cst.AssignTarget):
            assigned.update(name for name in target_names(node.target) if ctx.bound(name))
    for node in nodes:
        if isinstance(node, cst.Call) and not (ctx.qualname(node.func) or "").startswith("torch."):
            if any(name in assigned for arg in node.args for name in _names(arg.value)):
                return True
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, (cst.Subtract, cst.Add))
            and isinstance(node.left, cst.Name)
            and node.left.value == variable
            and isinstance(node.right, cst.Integer)
        ):
            return True
    return False


def _names(node: cst.CSTNode) -> Iterable[str]:
    return (n.value for n in descendants(node) if isinstance(n, cst.Name))


def _iterated(ctx, iterable: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a ``for`` walks: the iterable, or the arguments of ``enumerate``/``zip``/``reversed``."""
    if isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) in (
        "builtins.enumerate", "builtins.zip", "builtins.reversed",
    ):
        args = positional(iterable)
        return [arg.value for arg in (args[:1] if ctx.qualname(iterable.func) != "builtins.zip" else args)]
    return [iterable]


def _range_stop(ctx, iterable: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    if not (isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) == "builtins.range"):
        return None
    args = positional(iterable)
    if len(args) != len(iterable.args) or not 1 <= len(args) <= 2:
        return None  # with a step, the loop walks chunks (`range(0, n, chunk)`), not elements
    return args[0].value if len(args) == 1 else args[1].value
