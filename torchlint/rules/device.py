"""TL1xx: where tensors are created."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from torchlint.rules.base import Invalid, Replacement, Rule
from torchlint.rules.calls import has_star_args, keyword, method_call, positional

FACTORIES = frozenset(
    "randperm randn rand randint zeros ones empty full arange linspace logspace eye tensor as_tensor".split()
)
_DTYPES = frozenset(
    "float float16 float32 float64 half double bfloat16 long int int8 int16 int32 int64 short "
    "uint8 bool complex64 complex128 cfloat cdouble".split()
)
_DEVICE_NAME = re.compile(r"device|^dev$|^dev_|_dev$|gpu|rank|cuda", re.IGNORECASE)


def factory_qualname(ctx, node: cst.CSTNode) -> Optional[str]:
    """``torch.randn`` for a call of a tensor factory that picks no device itself."""
    if not isinstance(node, cst.Call):
        return None
    name = ctx.qualname(node.func)
    if name is None or not name.startswith("torch.") or name[6:] not in FACTORIES:
        return None
    if keyword(node, "device") or keyword(node, "out") or has_star_args(node):
        return None
    return name


def _last_identifier(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def is_device(ctx, node: cst.BaseExpression) -> bool:
    """Does ``node`` name an accelerator device (not the CPU, not a dtype)?"""
    if isinstance(node, cst.SimpleString):
        return not str(node.evaluated_value).startswith("cpu")
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call):
        return ctx.qualname(node.func) == "torch.device" and not (
            node.args and isinstance(node.args[0].value, cst.SimpleString)
            and str(node.args[0].value.evaluated_value).startswith("cpu")
        )
    identifier = _last_identifier(node)
    return identifier is not None and bool(_DEVICE_NAME.search(identifier))


def is_dtype(ctx, node: cst.BaseExpression) -> bool:
    name = ctx.qualname(node) or ""
    if name.startswith("torch.") and name[6:] in _DTYPES:
        return True
    identifier = _last_identifier(node)
    return identifier is not None and identifier.endswith("dtype")


@dataclass(frozen=True)
class Move:
    """A device move: where to, the dtype it also sets, and whether it can be folded."""

    device: Optional[cst.BaseExpression]
    dtype: Optional[cst.BaseExpression]
    foldable: bool


def device_move(ctx, call: cst.Call) -> Optional[Move]:
    """The move that ``x.to(...)`` / ``x.cuda(...)`` makes, or None if it is no device move."""
    attribute = method_call(call, "to", "cuda")
    if attribute is None or has_star_args(call):
        return None
    args = positional(call)
    if attribute.attr.value == "cuda":
        device_kw = keyword(call, "device")
        target = device_kw.value if device_kw else (args[0].value if args else None)
        if target is None:
            return Move(cst.SimpleString('"cuda"'), None, True)
        if isinstance(target, cst.Integer):
            return Move(cst.SimpleString(f'"cuda:{target.evaluated_value}"'), None, True)
        return Move(None, None, False)
    device_kw, dtype_kw = keyword(call, "device"), keyword(call, "dtype")
    device = device_kw.value if device_kw else None
    dtype = dtype_kw.value if dtype_kw else None
    if device is None:
        if not args or not is_device(ctx, args[0].value):
            return None
        device = args[0].value
        if len(args) > 1:
            dtype = args[1].value
    elif not is_device(ctx, device):
        return None
    foldable = keyword(call, "copy") is None and keyword(call, "memory_format") is None and len(args) <= 2
    return Move(device, dtype, foldable)


def _with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    existing = keyword(call, name)
    if existing is not None:
        return call.with_deep_changes(existing, value=value)
    arg = cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    return call.with_changes(args=(*call.args, arg))


class FactoryThenMoved(Rule):
    code = "TL101"
    name = "factory-without-device"
    message = "tensor created on the CPU and then moved to a device; pass `device=` to the factory"
    fix = "safe"
    what = (
        "Finds tensor factories (`torch.randperm`, `torch.randn`, `torch.zeros`, `torch.arange`, "
        "`torch.tensor`, ...) called without `device=` whose result is then moved with `.to(device)` "
        "or `.cuda()`, in the same expression or later in the same function."
    )
    why = (
        "The factory runs on the CPU (a `randperm` of 10 million elements takes hundreds of "
        "milliseconds there), then `.to(device)` copies the result from pageable memory. That copy is "
        "synchronous: the CPU waits for every kernel already queued on the GPU, so the GPU idles "
        "while the next work is prepared. Created with `device=`, the values are generated by a "
        "kernel on the device and nothing crosses the bus."
    )
    example = "perm = torch.randperm(n).to(device)\nnoise = torch.randn(b, 128).cuda()"
    use_instead = 'perm = torch.randperm(n, device=device)\nnoise = torch.randn(b, 128, device="cuda")'
    fix_safety = (
        "Safe for the chained form: the tensor gets the same shape, dtype and device. A `dtype` "
        "given to `.to()` moves into the factory; `non_blocking` is dropped because no copy is left. "
        "Random factories draw from the device's generator instead of the CPU's, so the values "
        "differ for the same seed, just as they would between two devices. When the move happens "
        "later (`idx = torch.randperm(n)` ... `idx.to(device)`) there is no fix: the CPU tensor may "
        "be used in between."
    )
    measured = (
        "Not yet measured on GPU: no GPU was available so far. The fixture (`fixtures/TL101`) is the "
        "field notes' loss that shuffles a feature map with `torch.randperm` over every element (131 "
        "thousand elements at small size, 51 million at full). `torchlint bench` skips it on CPU "
        "(AMD EPYC, 2 cores, torch 2.13.0, 2026-11-21): there `.to(device)` returns the same tensor, "
        "so both sides do the same work and a timing would prove nothing. On CPU the harness checks "
        "only that `--fix` turns `before.py` into `after.py`. See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "import torch\nx = torch.randn(3, 4, device=device)",
        "import torch\nidx = torch.randperm(n)\nx = data[idx]",
        "import torch\ny = torch.zeros(3).to(torch.float16)",
        "import torch\ny = torch.zeros(3).to(dtype=torch.float16)",
        'import torch\ny = torch.zeros(3).to("cpu")',
        "import torch\ny = torch.zeros_like(x).to(device)",
        "import torch\ny = x.new_zeros(3).to(device)",
        "import torch\ny = torch.zeros(3, **kw).to(device)",
        "import torch\ny = torch.zeros(3).to(other_tensor)",
        "import numpy as np\ny = np.zeros(3).to(device)",
        "import torch\nidx = torch.randperm(n)\nidx = other\nidx = idx.to(device)",
    )
    invalid = (
        Invalid(
            "import torch\nperm = torch.randperm(n).to(device)\n",
            "import torch\nperm = torch.randperm(n, device=device)\n",
        ),
        Invalid(
            "import torch as T\nx = T.randn(3, 4).cuda()\n",
            'import torch as T\nx = T.randn(3, 4, device="cuda")\n',
        ),
        Invalid(
            "from torch import zeros\nx = zeros(n).to('cuda', non_blocking=True)\n",
            "from torch import zeros\nx = zeros(n, device='cuda')\n",
        ),
        Invalid(
            "import torch\nx = torch.ones(n).cuda(1)\n",
            'import torch\nx = torch.ones(n, device="cuda:1")\n',
        ),
        Invalid(
            "import torch\nx = torch.arange(n).to(device, torch.float16)\n",
            "import torch\nx = torch.arange(n, device=device, dtype=torch.float16)\n",
        ),
        Invalid(
            "import torch\nx = torch.ones(n, dtype=torch.int32).to(device=dev, dtype=torch.int64)\n",
            "import torch\nx = torch.ones(n, dtype=torch.int64, device=dev)\n",
        ),
        Invalid(
            "import torch\ndef loss(x, n, device):\n    idx = torch.randperm(n)\n    idx = idx.to(device)\n    return x[idx]\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        attribute = method_call(node, "to", "cuda")
        if attribute is None:
            return
        inner = attribute.value
        if factory_qualname(self.ctx, inner):
            move = device_move(self.ctx, node)
            if move is not None:
                self.report(inner, replacements=self._fold(inner, node, move))
        elif isinstance(inner, cst.Name):
            value = self.ctx.value_of(inner.value)
            if value is not None and factory_qualname(self.ctx, value) and device_move(self.ctx, node):
                self.report(value)

    def _fold(self, factory: cst.Call, move_call: cst.Call, move: Move):
        if not move.foldable or move.device is None:
            return ()
        code_for = self.ctx.module.code_for_node
        if code_for(move_call).count("#") != code_for(factory).count("#"):
            return ()  # a comment lives in the part the fix would drop
        fixed = _with_keyword(factory, "device", move.device)
        if move.dtype is not None:
            fixed = _with_keyword(fixed, "dtype", move.dtype)
        return (Replacement(move_call, fixed),)
