"""TL2xx: host-device syncs and Python loops over tensors in hot paths."""

from __future__ import annotations

from typing import Iterable, List, Optional

import libcst as cst

from torchlint.context import TENSOR
from torchlint.context.dataflow import target_names
from torchlint.context.scopes import Scope, in_model_code
from torchlint.rules.base import Invalid, Rule
from torchlint.rules.calls import method_call, positional
from torchlint.walker import descendants

_SYNC_METHODS = ("item", "tolist", "cpu", "numpy")
_SYNC_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)
# Arguments an API takes only in host memory (name, position): a `.cpu()` for them cannot be
# avoided, and costs nothing when the value is on the host already (lengths from a collate function).
_HOST_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": ("lengths", 1)}


def _per_call_or_per_element(repeats: bool):
    """Keep a sync in model code always; in step code only where it repeats per element."""

    def keep(scope: Scope) -> bool:
        return in_model_code(scope) or repeats or scope.repeats_within_hot()

    return keep


class HostSyncInHotPath(Rule):
    code = "TL201"
    name = "host-sync-in-hot-path"
    message = (
        "host-device sync in a hot path: the CPU waits for every queued GPU kernel and copies the "
        "value back; keep it on the device"
    )
    what = (
        "Finds operations that need a tensor's value on the host: `.item()`, `.tolist()`, "
        "`.cpu()`, `.numpy()`, `float(t)`, `int(t)`, `bool(t)`, `if t:` / `while t:` / "
        "`x if t else y` on a tensor, and `print(t)`. In `forward`, loss functions and loss "
        "modules (and their helpers) every one is reported. In step code (`training_step` and its "
        "family, training-loop bodies) only those that run once per element are reported: inside "
        "a loop or comprehension nested in the step. A single `loss.item()` per step for logging, a "
        "running total or a progress bar is accepted: it costs one sync per step, the price of "
        "looking at the loss, and flagging it would bury the per-element syncs that cost thousands."
    )
    why = (
        "CUDA kernels run asynchronously: PyTorch queues them and the CPU runs ahead to prepare the "
        "next ones. Reading a value on the host needs a device-to-host copy and a stream "
        "synchronisation: the CPU stops until every queued kernel has finished, and the GPU then "
        "idles while the CPU launches the next kernels. Once per step that is a small bubble; in "
        "`forward` or a loss it happens on every call, and in a per-row loop once per element "
        "(each row adds its own kernel launches plus a copy and a sync)."
    )
    example = (
        "def l1_loss(pred, target):\n"
        "    total = 0.0\n"
        "    for i in range(pred.shape[0]):\n"
        "        total += (pred[i] - target[i]).abs().sum().item()\n"
        "    return total"
    )
    use_instead = (
        "def l1_loss(pred, target):\n"
        "    return (pred - target).abs().sum()  # a tensor; call .item() once, where you log it"
    )
    fix_safety = (
        "No fix: keeping the value on the device changes types (a tensor instead of a float) and "
        "control flow (`torch.where` instead of `if`). Not reported on host tensors "
        "(`torch.from_numpy(...)`, the result of `.cpu()`, factories without `device=`), inside a "
        "`raise` (its message is built only when training fails) or an `assert` (a debug check "
        "that `python -O` removes), for shapes and sizes (`int(x.shape[0])`), for identity tests "
        "(`if mask is None`), or for bare parameters whose use shows nothing tensor-like "
        "(`if use_cache:`), nor for the `lengths` given to `pack_padded_sequence`, which takes them "
        "only in host memory (already there when they come from the collate function)."
    )
    measured = (
        "CPU (AMD EPYC, 2 cores, 1 torch thread, torch 2.13.0, 2026-11-21, `torchlint bench --device "
        "cpu --size small --repeat 5`): **87x** (1.25 ms -> 14.3 us per call, paired range "
        "76-92x) for a per-sample L1 loss over a 256x128 batch that accumulates `.item()` row by "
        "row, against the vectorised loss (`fixtures/TL201`). On CPU the cost is the per-row "
        "operations; on a GPU each row adds a device-to-host copy and a sync (not yet measured on "
        "GPU). See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        if x.shape[0] == 0:\n"
        "            raise ValueError(f'empty batch, sum {x.sum().item()}')\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        assert (x >= 0).all(), x.min().item()\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, arr):\n"
        "        t = torch.from_numpy(arr)\n        return x * t.sum().item()",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        rates = torch.linspace(0, 0.1, len(self.blocks)).tolist()\n"
        "        for block, rate in zip(self.blocks, rates):\n            x = block(x, rate)\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, mask=None, use_cache=False):\n"
        "        if mask is None or use_cache:\n            return x\n"
        "        side = int(x.shape[-1] ** 0.5)\n        return x.view(-1, side, side) * mask",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, return_attn):\n"
        "        if return_attn:\n            return x, x\n        return x",
        "import torch\nimport torch.nn.functional as F\nfor x, y in loader:\n    loss = F.cross_entropy(model(x), y)\n"
        "    loss.backward()\n    optimizer.step()\n    running_loss += loss.item()\n"
        "    print(f'loss {loss.item():.3f}')\n    writer.add_scalar('loss', loss.item(), step)",
        "import torch\nimport torch.nn.functional as F\nclass Net(LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        x, y = batch\n"
        "        loss = F.cross_entropy(self(x), y)\n        if batch_idx % 100 == 0:\n"
        "            self.log('loss', loss.item())\n        return loss",
        "import torch\ndef evaluate(model, loader):\n    return [model(x).argmax(1).tolist() for x in loader]",
        "import torch\nclass M(nn.Module):\n    def __init__(self, w):\n        super().__init__()\n"
        "        self.n = int(torch.tensor(w).sum().item())",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        print(x.shape)\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, step):\n"
        "        if self._should_checkpoint(step):\n            return self.ckpt(x)\n        return x",
        "import torch\nfrom torch import nn\nclass Encoder(nn.Module):\n    def forward(self, x, lengths):\n"
        "        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True)\n"
        "        return self.rnn(packed)",
        "import torch\ndef check_finite_loss(loss: Optional[Tensor]) -> None:\n"
        "    if loss is not None and not torch.isfinite(loss).all():\n        raise ValueError(f'loss is {loss}')",
    )
    invalid = (
        Invalid(
            "import torch\ndef l1_loss(pred, target):\n    total = 0.0\n    for i in range(pred.shape[0]):\n"
            "        total += (pred[i] - target[i]).abs().sum().item()\n    return total\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        if x.sum() > 0:\n            x = x * 2\n        return x\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        scale = float(x.abs().max())\n        return x / scale\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        x = self.conv(x)\n"
            "        print(x)\n        return x.flatten(1)\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        boxes = self.head(x).cpu()\n        return boxes\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x, lengths):\n"
            "        return [x[i, :n] for i, n in enumerate(lengths.tolist())]\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        keep = torch.isfinite(x).all()\n        while not keep:\n            x = x.nan_to_num()\n"
            "            keep = torch.isfinite(x).all()\n        return x\n"
        ),
        Invalid(
            "import torch\nimport torch.nn.functional as F\nfor x, y in loader:\n    out = model(x)\n"
            "    loss = F.cross_entropy(out, y)\n    loss.backward()\n    optimizer.step()\n"
            "    probs = F.softmax(out, dim=1)\n    for p in probs:\n        confidences.append(p.max().item())\n"
        ),
        Invalid(
            "import torch\nimport torch.nn.functional as F\nclass Net(LightningModule):\n"
            "    def training_step(self, batch, batch_idx):\n        x, y = batch\n"
            "        logits = self.net(x)\n        loss = F.cross_entropy(logits, y)\n"
            "        preds = F.softmax(logits, dim=1).argmax(1)\n        for i in range(len(y)):\n"
            "            self.hits += int(preds[i] == y[i])\n        return loss\n"
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        method = method_call(node, *_SYNC_METHODS)
        if method is not None:
            if self.ctx.tensor_kind(method.value) == TENSOR and not self._host_argument(node):
                self._flag(node, f"`.{method.attr.value}()`")
            return
        name = self.ctx.qualname(node.func)
        args = positional(node)
        if name in _SYNC_BUILTINS and len(node.args) == 1 and args and self.ctx.surely_tensor(args[0].value):
            self._flag(node, f"`{name[9:]}(tensor)`")
        elif name == "builtins.print" and any(self._shows_tensor(arg.value) for arg in node.args):
            self._flag(node, "`print(tensor)`")

    def visit_If(self, node: cst.If) -> None:
        self._truth_test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._truth_test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth_test(node.test)

    def _truth_test(self, test: cst.BaseExpression) -> None:
        for operand in _truth_operands(test):
            if self.ctx.surely_tensor(operand):
                self._flag(operand, "a truth test on a tensor")

    def _host_argument(self, node: cst.Call) -> bool:
        """Is ``node`` passed where the callee requires a host value (``pack_padded_sequence``'s lengths)?"""
        arg, call = self.ctx.parent, self.ctx.ancestors[-2] if len(self.ctx.ancestors) > 1 else None
        if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
            return False
        wanted = _HOST_ARGUMENTS.get(self.ctx.qualname(call.func) or "")
        if wanted is None:
            return False
        name, position = wanted
        if arg.keyword is not None:
            return arg.keyword.value == name
        args = positional(call)
        return len(args) > position and args[position] is arg

    def _shows_tensor(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.FormattedString):
            return any(
                isinstance(part, cst.FormattedStringExpression) and self.ctx.surely_tensor(part.expression)
                for part in node.parts
            )
        return self.ctx.surely_tensor(node)

    def _flag(self, node: cst.CSTNode, what: str) -> None:
        if self.ctx.in_error_path() or self.ctx.in_definition():
            return
        message = f"host-device sync in a hot path: {what} waits for every queued GPU kernel; keep it on the device"
        self.report(node, message, hot_when=_per_call_or_per_element(self.ctx.in_comprehension()))


def _truth_operands(test: cst.BaseExpression) -> Iterable[cst.BaseExpression]:
    """The expressions whose truth value ``if test:`` asks for."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _truth_operands(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from _truth_operands(test.left)
        yield from _truth_operands(test.right)
    else:
        yield test


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
    example = (
        "def forward(self, x):  # x: (rows, cols); boundaries: (levels - 1,)\n"
        "    q = torch.zeros_like(x)\n"
        "    for i in range(x.shape[0]):\n"
        "        for level in range(1, self.levels):\n"
        "            q[i][x[i] >= self.boundaries[level - 1]] = level\n"
        "    return q"
    )
    use_instead = (
        "def forward(self, x):\n"
        "    return torch.bucketize(x, self.boundaries, right=True).to(x.dtype)"
    )
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
    measured = (
        "CPU (AMD EPYC, 2 cores, 1 torch thread, torch 2.13.0, 2026-11-21, `torchlint bench --device "
        "cpu --size small --repeat 5`): **35x** (4.90 ms -> 139 us per forward, paired range "
        "32-37x) for a quantiser binning a 64x256 tensor into 8 levels row by row and level by "
        "level, against one `torch.bucketize` with identical output (`fixtures/TL202`). Not yet "
        "measured on GPU, where every masked write also syncs. See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        for layer in self.layers:\n"
        "            x = layer(x)\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        for i in range(self.num_layers):\n"
        "            x = self.blocks[i](x)\n        return x",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        for c in range(3):\n"
        "            x[:, c] = x[:, c] * self.scale[c]\n        return x",
        "import torch\nclass FPN(nn.Module):\n    def forward(self, features):\n        outs = []\n"
        "        for i, f in enumerate(features):\n            outs.append(self.convs[i](f))\n        return outs",
        "import torch\nclass Head(nn.Module):\n    def forward(self, xs):\n"
        "        return [conv(x) for conv, x in zip(self.convs, xs)]",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        outs = []\n"
        "        for chunk in x.split(256):\n            outs.append(self.mlp(chunk))\n"
        "        return torch.cat(outs).view(x.shape)",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        outs = []\n"
        "        for h in range(x.shape[1]):\n            outs.append(self.heads[h](x))\n        return outs",
        "import torch\ndef detection_loss(preds, targets):\n    total = 0\n"
        "    for b in range(len(targets)):\n        total = total + preds[b][targets[b]['labels']].sum()\n"
        "    return total",
        "import torch\ndef collate(x):\n    return [row for row in x.view(x.shape[0], -1)]",
        "import torch\nfor x, y in loader:\n    for row in x.view(x.shape[0], -1):\n        pass\n"
        "    loss = model(x).backward()",
        "import torch\nclass RNN(nn.Module):\n    def forward(self, x, h):\n        outs = []\n"
        "        for t in range(x.shape[1]):\n            h = self.cell(x[:, t], h)\n            outs.append(h)\n"
        "        return torch.stack(outs, 1)",
        "import torch\nclass Decoder(nn.Module):\n    def forward(self, x, state):\n        B, T, C = x.shape\n"
        "        for t in range(T):\n            out, state = self.step(x[:, t], state)\n        return out",
        "import torch\ndef collate_loss(batch):\n    tensor = torch.zeros(len(batch), 3)\n"
        "    for j in range(len(batch[0][0])):\n        tensor[j] += batch[j][0][0]\n    return tensor",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        outs = []\n"
        "        for i in range(0, x.shape[0], 1024):\n            outs.append(self.mlp(x[i:i + 1024]))\n"
        "        return torch.cat(outs)",
        "import torch\ndef move_loss(value, device):\n    if isinstance(value, torch.Tensor):\n"
        "        return value.to(device)\n    return type(value)(move_loss(v, device) for v in value)",
        "import torch\nclass CellRNN(nn.Module):\n    def forward(self, x):\n"
        "        h = x.new_zeros(x.shape[0], self.hidden)\n        outs = []\n"
        "        for x_t in x.unbind(1):\n            h = self.cell(x_t, h)\n            outs.append(h)\n"
        "        return torch.stack(outs, 1)",
        "import torch\nclass IIR(nn.Module):\n    def forward(self, x):\n        y = torch.zeros_like(x)\n"
        "        for t in range(1, x.shape[1]):\n            y[:, t] = self.a * y[:, t - 1] + x[:, t]\n        return y",
    )
    invalid = (
        Invalid(
            "import torch\nclass Quantize(nn.Module):\n    def forward(self, x):\n        q = torch.zeros_like(x)\n"
            "        for i in range(x.shape[0]):\n            for level in range(1, self.levels):\n"
            "                q[i][x[i] >= self.boundaries[level - 1]] = level\n        return q\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        out = []\n"
            "        for row in x:\n            out.append(self.proj(row))\n"
            "        return torch.stack(out).view(x.shape[0], -1)\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        B, T, C = x.shape\n"
            "        y = x.new_zeros(B)\n        for b in range(B):\n            y[b] = x[b].norm()\n        return y\n"
        ),
        Invalid(
            "import torch\ndef l1_loss(pred, target):\n    total = 0.0\n"
            "    for i in range(pred.size(0)):\n        total = total + (pred[i] - target[i]).abs().sum()\n"
            "    return total\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return torch.stack([self.f(x[i]) for i in range(x.size(0))])\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        out = []\n"
            "        for b in range(x.shape[0]):\n            feat = x[b]\n            out.append(self.head(feat))\n"
            "        return torch.stack(out)\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x, y):\n"
            "        n = len(x)\n        s = x.new_zeros(n)\n        for i in range(n):\n            s[i] = (x[i] * y[i]).sum()\n"
            "        return s\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        x = x.flatten(1)\n"
            "        return [self.g(v) for i, v in enumerate(x.unbind(0))]\n"
        ),
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
