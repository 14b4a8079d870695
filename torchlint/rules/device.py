"""TL1xx: where tensors are created."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from torchlint.context import NOT, dotted_name
from torchlint.context.factories import (
    DATA_FACTORIES, FACTORIES, LEGACY_CONSTRUCTORS, constant_data, data_argument, factory_name, number_literal,
)
from torchlint.context.meeting import device_name, follow
from torchlint.context.scopes import in_model_code
from torchlint.rules.base import Invalid, Replacement, Rule
from torchlint.rules.calls import code_in_block, has_star_args, keyword, method_call, positional, with_keyword

_DTYPES = frozenset(
    "float float16 float32 float64 half double bfloat16 long int int8 int16 int32 int64 short "
    "uint8 bool complex64 complex128 cfloat cdouble".split()
)
# Methods that only change a tensor's shape: the factory under them can take `device=` itself.
_VIEWS = frozenset("view reshape unsqueeze squeeze permute transpose t flatten expand".split())
_DEVICE_NAME = re.compile(r"device|^dev$|^dev_|_dev$|gpu|rank|cuda", re.IGNORECASE)


def host_factory(ctx, node: cst.CSTNode) -> Optional[str]:
    """``randn`` for a call of a tensor factory (or legacy constructor) that picks no device."""
    if not isinstance(node, cst.Call):
        return None
    name = factory_name(ctx.qualname(node.func))
    if name is None or keyword(node, "device") or keyword(node, "out") or has_star_args(node):
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
    """The move that ``x.to(...)`` / ``x.cuda(...)`` / ``x.type_as(t)`` makes, or None if it
    is no device move."""
    attribute = method_call(call, "to", "cuda", "type_as")
    if attribute is None or has_star_args(call):
        return None
    args = positional(call)
    if attribute.attr.value == "type_as":
        if len(call.args) != 1 or len(args) != 1:
            return None
        other = args[0].value
        # Folding names `other` twice: only for a plain name, which is cheap and stable to re-read.
        return Move(_member(other, "device"), _member(other, "dtype"), dotted_name(other) is not None)
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


def _literal_data(call: cst.Call) -> bool:
    data = data_argument(call)
    return data is not None and (constant_data(data) or number_literal(data))


def _carries_host_data(call: cst.Call, factory: str) -> bool:
    """``torch.ByteTensor(storage)``: a legacy constructor given one non-literal argument
    copies data that lives on the host anyway (sizes would be several, or literal)."""
    if factory not in LEGACY_CONSTRUCTORS:
        return False
    args = positional(call)
    return len(args) == 1 and not isinstance(args[0].value, cst.Integer) and not _literal_data(call)


def _copies_host_data(call: cst.Call, factory: str) -> bool:
    """The factory copies data that lives on the host anyway (``torch.tensor(token_ids)``):
    with ``device=`` it would be built on the host and copied just the same."""
    return (factory in DATA_FACTORIES and not _literal_data(call)) or _carries_host_data(call, factory)


def _under_views(node: cst.BaseExpression) -> cst.BaseExpression:
    """The expression under a chain of view methods: ``f(...)`` for ``f(...).view(1, -1).t()``."""
    attribute = method_call(node, *_VIEWS)
    while attribute is not None:
        node = attribute.value
        attribute = method_call(node, *_VIEWS)
    return node


def _member(node: cst.BaseExpression, name: str) -> cst.Attribute:
    return cst.Attribute(value=node, attr=cst.Name(name))


class FactoryThenMoved(Rule):
    code = "TL101"
    name = "factory-without-device"
    message = "tensor created on the CPU and then moved to a device; pass `device=` to the factory"
    fix = "safe"
    what = (
        "Finds tensor factories (`torch.randperm`, `torch.randn`, `torch.rand`, `torch.randint`, "
        "`torch.zeros`, `torch.ones`, `torch.empty`, `torch.full`, `torch.arange`, `torch.linspace`, "
        "`torch.logspace`, `torch.eye`, `torch.tensor`, `torch.as_tensor`) and the legacy "
        "constructors (`torch.FloatTensor(...)`, `torch.LongTensor(...)`, ...) called without "
        "`device=` whose result (or a view of it: `.view(...)`, `.unsqueeze(...)`, ...) is then moved with "
        "`.to(device)`, `.cuda()` or `.type_as(t)`, in the same expression or later in the same function."
    )
    why = (
        "The factory runs on the CPU (a `randperm` of 10 million elements takes hundreds of "
        "milliseconds there), then `.to(device)` copies the result from pageable memory. That copy is "
        "synchronous: the CPU waits for every kernel already queued on the GPU, so the GPU idles "
        "while the next work is prepared. Created with `device=`, the values are generated by a "
        "kernel on the device and nothing crosses the bus. `.type_as(t)` is the same move in "
        "disguise: it converts to `t`'s type, device included."
    )
    example = (
        "perm = torch.randperm(n).to(device)\nnoise = torch.randn(b, 128).cuda()\n"
        "mask = torch.ones(b, t).type_as(x)\nidx = torch.LongTensor(index).cuda()"
    )
    use_instead = (
        'perm = torch.randperm(n, device=device)\nnoise = torch.randn(b, 128, device="cuda")\n'
        "mask = torch.ones(b, t, device=x.device, dtype=x.dtype)\n"
        "idx = torch.tensor(index, dtype=torch.long, device=device)"
    )
    fix_safety = (
        "Safe for the chained form: the tensor gets the same shape, dtype and device. A `dtype` "
        "given to `.to()` moves into the factory; `non_blocking` is dropped because no copy is left. "
        "`.type_as(t)` becomes `device=t.device, dtype=t.dtype` when `t` is a plain name (a more "
        "complex expression would be evaluated twice). Random factories draw from the device's "
        "generator instead of the CPU's, so the values differ for the same seed, just as they would "
        "between two devices. When the move happens later (`idx = torch.randperm(n)` ... "
        "`idx.to(device)`) there is no fix: the CPU tensor may be used in between. That later form "
        "is not reported when the tensor is filled in place before the move (`t[k] = ...`, "
        "`t.fill_()`: building element by element on the host and copying once is the right "
        "order). Neither form is reported when `torch.tensor`/`torch.as_tensor` copy non-literal "
        "data (`torch.tensor(token_ids).to(device)`): that data lives on the host, and with "
        "`device=` it would be built there and copied just the same. Legacy constructors are flagged without a fix (they cannot take a CUDA "
        "`device=`: rewrite them as a factory or `torch.tensor(..., dtype=..., device=...)`), "
        "except with a single non-literal argument (`torch.ByteTensor(storage)`): that is host "
        "data to copy, not a size."
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
        "import torch\ny = torch.zeros_like(x).type_as(x)",
        "import torch\ny = torch.cuda.FloatTensor(3).zero_()",
        "import torch\nw = torch.FloatTensor(3, 4)\nnn.init.normal_(w)",
        "import torch\nisinstance(x, torch.Tensor)",
        "import torch\ndata = torch.ByteTensor(byte_storage).to(device)",
        "import torch\ncfs = torch.zeros(n, dtype=torch.float64)\nfor k in range(1, n):\n"
        "    cfs[k] = cfs[k - 1] * factor\ncfs = cfs.to(device)",
        "import torch\nperm = torch.tensor(np.array(rows))\nperm = perm.to(device)",
        "import torch\nids = torch.tensor(tokenizer.encode(text)).unsqueeze(0).to(device)",
        "import torch\nlengths = torch.as_tensor(lengths, dtype=torch.long).to(device)",
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
        Invalid(
            "import torch\nmask = torch.ones(b, t).type_as(x)\n",
            "import torch\nmask = torch.ones(b, t, device=x.device, dtype=x.dtype)\n",
        ),
        Invalid(
            "import torch\nw = torch.zeros(n, dtype=torch.long).type_as(self.weight)\n",
            "import torch\nw = torch.zeros(n, dtype=self.weight.dtype, device=self.weight.device)\n",
        ),
        Invalid("import torch\nw = torch.zeros(n).type_as(get_ref())\n"),
        Invalid("import torch\nidx = torch.LongTensor([0, 2, 4]).cuda()\n"),
        Invalid('import torch\nx = torch.Tensor([1, 2]).to(dtype=torch.float16, device="cuda")\n'),
        Invalid("import torch\nx = torch.FloatTensor(3, 4).to(device)\n"),
        Invalid("import torch\ndef f(x):\n    y = torch.rand(3)\n    return y.type_as(x)\n"),
        Invalid(
            "import torch\nmean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).to(x.device)\n",
            "import torch\nmean = torch.tensor([0.485, 0.456, 0.406], device=x.device).view(1, 3, 1, 1)\n",
        ),
        Invalid("import torch\ndef f(n, device):\n    pos = torch.arange(n).unsqueeze(1)\n    return pos.to(device)\n"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        attribute = method_call(node, "to", "cuda", "type_as")
        if attribute is None:
            return
        moved = attribute.value
        inner = _under_views(moved)
        factory = host_factory(self.ctx, inner)
        if factory is not None:
            move = device_move(self.ctx, node)
            if move is not None and not _copies_host_data(inner, factory):
                fold = () if factory in LEGACY_CONSTRUCTORS else self._fold(inner, moved, node, move)
                self.report(inner, replacements=fold)
        elif isinstance(moved, cst.Name):
            value = self.ctx.value_of(moved.value)
            value = _under_views(value) if value is not None else None
            factory = host_factory(self.ctx, value) if value is not None else None
            if (
                factory is not None
                and device_move(self.ctx, node)
                and not self.ctx.written_into(moved.value)
                and not _copies_host_data(value, factory)
            ):
                self.report(value)

    def _fold(self, factory: cst.Call, moved: cst.BaseExpression, move_call: cst.Call, move: Move):
        """Put the move's device (and dtype) into ``factory``; ``moved`` is the factory or views of it."""
        if not move.foldable or move.device is None:
            return ()
        code_for = self.ctx.module.code_for_node
        if code_for(move_call).count("#") != code_for(moved).count("#"):
            return ()  # a comment lives in the part the fix would drop
        fixed = with_keyword(factory, "device", move.device)
        if move.dtype is not None:
            fixed = with_keyword(fixed, "dtype", move.dtype)
        if moved is not factory:
            fixed = moved.deep_replace(factory, fixed)
        return (Replacement(move_call, code_in_block(self.ctx.module, fixed, self.ctx.indentation())),)


# Uses of a host tensor that show it is meant for the host, or moved (TL101's case).
_HOST_OR_MOVE = frozenset("cpu numpy tolist item to cuda type_as".split())


class FactoryMeetsDeviceTensor(Rule):
    code = "TL102"
    name = "factory-meets-device-tensor"
    message = (
        "tensor created on the CPU in a hot path is combined with a tensor on the model's device; "
        "create it there with `device=`"
    )
    fix = "unsafe"
    what = (
        "Finds tensor factories called without `device=` in `forward`, a loss, or a helper of "
        "those, whose result meets a tensor that lives on the model's device: an operand of the "
        "same arithmetic or comparison, an index into it, another argument of the same torch call, "
        "or an argument of its method (`x.masked_fill(mask, 0)`). The result is followed through "
        "assignments in the same function (`mask = torch.ones(x.shape[0])` ... `x * mask`) and "
        "through tensor-preserving steps (`.bool()`, `[None]`, `torch.triu(...)`)."
    )
    why = (
        "Without `device=`, the factory fills a tensor in host memory on every call. Indexing a "
        "CUDA tensor with it makes PyTorch copy the index to the GPU first: a blocking copy from "
        "pageable memory, which waits for every queued kernel. Combined by arithmetic with a CUDA "
        "tensor it fails outright (`Expected all tensors to be on the same device`), so such code "
        "only ever ran on the CPU. Created with `device=x.device`, the values are made by a kernel "
        "on the tensor's own device."
    )
    example = (
        "def forward(self, x, lengths):\n"
        "    mask = torch.arange(x.shape[1]) < lengths[:, None]\n"
        "    return x * mask[..., None]"
    )
    use_instead = (
        "def forward(self, x, lengths):\n"
        "    mask = torch.arange(x.shape[1], device=lengths.device) < lengths[:, None]\n"
        "    return x * mask[..., None]"
    )
    fix_safety = (
        "Unsafe: `device=` names the first tensor the result meets (`device=x.device`). That "
        "changes where the tensor lives, which is what the code needs on a GPU, but random "
        "factories then draw from the device's generator, and any other use of the CPU tensor "
        "(printing, numpy) now sees a device tensor. Not reported when the tensor is meant for the "
        "host (`.cpu()`, `.numpy()`, `.tolist()`, `.item()` on it), when it is moved (TL101), for "
        "`*_like`/`new_*` factories (they inherit the device), when `device=` or `**kwargs` is "
        "passed, for `torch.tensor(t)` of a tensor `t` (it keeps `t`'s device), for 0-d "
        "`torch.tensor(1.0)` (a CPU scalar mixes with CUDA tensors without a copy), and for "
        "constant literals, which TL103 reports. Legacy constructors get no fix (they cannot take "
        "a CUDA device)."
    )
    measured = (
        "Not yet measured on GPU: no GPU was available so far. The fixture (`fixtures/TL102`) is a "
        "large-margin loss module that picks each row's target logit with `torch.arange(batch)` "
        "built without `device=`. `torchlint bench` skips it on CPU (AMD EPYC, 2 cores, torch "
        "2.13.0, 2026-11-21): there the index already lives with the logits, so both sides do the "
        "same work. On CPU the harness checks that `--fix --unsafe-fixes` turns `before.py` into "
        "`after.py` and that both compute the same loss. See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(x.shape[0], device=x.device)\n        return x * mask",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones_like(x)\n        return x * mask",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x * x.new_ones(x.shape[0])",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        idx = torch.arange(x.shape[0]).to(x.device)\n        return x[idx]",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        counts = torch.zeros(10)\n        counts += x.sum()\n        return counts.numpy()",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return torch.where(x > 0, x, torch.tensor(0.0))",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, **kw):\n"
        "        return x * torch.ones(x.shape[0], **kw)",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x[torch.tensor(self.index)]",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x * torch.tensor([0.5, 2.0])",
        "import torch\ndef build(x):\n    mask = torch.ones(x.shape[0])\n    return x * mask",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(3)\n        mask = x > 0\n        return x * mask",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        steps = torch.arange(4)\n        return [self.blocks[i](x) for i in steps.tolist()]",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, shape=torch.zeros(2)):\n        return x",
        "import torch\ndef psnr_loss(preds, target, base: float = 10.0):\n"
        "    return (preds - target).pow(2).mean().log() * (10 / torch.log(torch.tensor(base)))",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        buf = torch.empty(x.shape)\n"
        "        buf.copy_(x)\n        return buf",
        "import torch\nclass Net(nn.Module):\n    def training_step(self, batch, batch_idx):\n"
        "        x, y = batch\n        return x * torch.ones(x.shape[0])",
        "import torch\nclass M(nn.Module):\n    def causal(self, n):\n"
        "        mask = torch.triu(torch.ones(n, n), diagonal=1)\n"
        "        return mask.masked_fill(mask == 1, float('-inf'))\n"
        "    def forward(self, x):\n        return x + self.causal(x.shape[1]).to(x.device)",
        "import torch\nclass Patchify(nn.Module):\n    def forward(self, img):\n"
        "        valid = torch.ones(img.shape[0], dtype=torch.bool)\n        return img, valid",
    )
    invalid = (
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        mask = torch.ones(x.shape[0])\n        return x * mask\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        mask = torch.ones(x.shape[0], device=x.device)\n        return x * mask\n",
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x, lengths):\n"
            "        mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]\n        return x * mask[..., None]\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, x, lengths):\n"
            "        mask = torch.arange(x.shape[1], device=lengths.device)[None, :] < lengths[:, None]\n"
            "        return x * mask[..., None]\n",
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        keep = torch.ones(x.shape[1], dtype=torch.bool)\n        keep[0] = False\n        return x[:, keep]\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        keep = torch.ones(x.shape[1], dtype=torch.bool, device=x.device)\n        keep[0] = False\n"
            "        return x[:, keep]\n",
        ),
        Invalid(
            "import torch\nimport torch.nn.functional as F\ndef my_loss(pred, target):\n"
            "    return F.cross_entropy(pred, target, weight=torch.ones(pred.shape[1]))\n",
            "import torch\nimport torch.nn.functional as F\ndef my_loss(pred, target):\n"
            "    return F.cross_entropy(pred, target, weight=torch.ones(pred.shape[1], device=pred.device))\n",
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, scores):\n"
            "        causal = torch.triu(torch.ones(scores.shape[-1], scores.shape[-1]), diagonal=1).bool()\n"
            "        return scores.masked_fill(causal, float('-inf'))\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, scores):\n"
            "        causal = torch.triu(torch.ones(scores.shape[-1], scores.shape[-1], device=scores.device), diagonal=1).bool()\n"
            "        return scores.masked_fill(causal, float('-inf'))\n",
        ),
        Invalid(
            "import torch\nclass Shuffle(nn.Module):\n    def forward(self, x):\n"
            "        if self.training:\n            B, H, W, C = x.shape\n            r = torch.randperm(H * W)\n"
            "            x = x.reshape(B, -1, C)\n            x = x[:, r, :].reshape(B, H, W, -1)\n        return x\n",
            "import torch\nclass Shuffle(nn.Module):\n    def forward(self, x):\n"
            "        if self.training:\n            B, H, W, C = x.shape\n            r = torch.randperm(H * W, device=x.device)\n"
            "            x = x.reshape(B, -1, C)\n            x = x[:, r, :].reshape(B, H, W, -1)\n        return x\n",
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return self.head(x[torch.randperm(x.shape[0])])\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return self.head(x[torch.randperm(x.shape[0], device=x.device)])\n",
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        size = torch.tensor(x.shape[2:])\n        return self.proj(x) / size.prod()\n",
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        size = torch.tensor(x.shape[2:], device=x.device)\n        return self.proj(x) / size.prod()\n",
        ),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # (function, name) -> (factory call, the expression the name was assigned, its indentation)
        self._stored = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not self._builds_on_host(node):
            return
        flow = follow(node, self.ctx.ancestors, self.ctx.tensor_kind, self.ctx.qualname)
        if flow.meets is not None:
            self._flag(node, flow.meets, self.ctx.indentation())
            return
        target = _stored_name(flow.parent, flow.top)
        if target is not None:
            self._stored[(self.ctx.scope.function, target)] = (node, flow.top, self.ctx.indentation())

    def visit_Name(self, node: cst.Name) -> None:
        stored = self._stored.get((self.ctx.scope.function, node.value))
        if stored is None or self.ctx.value_of(node.value) is not stored[1]:
            return
        if self.ctx.uses_member(node.value, _HOST_OR_MOVE):
            return
        flow = follow(node, self.ctx.ancestors, self.ctx.tensor_kind, self.ctx.qualname)
        if flow.meets is not None:
            self._flag(stored[0], flow.meets, stored[2])

    def _builds_on_host(self, node: cst.Call) -> bool:
        factory = host_factory(self.ctx, node)
        if factory not in FACTORIES or self.ctx.in_definition():
            return False
        if factory in DATA_FACTORIES:
            data = data_argument(node)
            return data is not None and self._sequence_data(data) and not constant_data(data)
        return True

    def _sequence_data(self, data: cst.BaseExpression) -> bool:
        """Data that makes a tensor of at least one dimension and is not a tensor itself: a
        list, tuple or shape. (A 0-d CPU tensor mixes with CUDA tensors without any copy.)"""
        if isinstance(data, cst.Name):
            data = self.ctx.value_of(data.value) or data
        if isinstance(data, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if isinstance(data, cst.Call) and self.ctx.qualname(data.func) in ("builtins.list", "builtins.tuple"):
            return True
        if isinstance(data, cst.Subscript):  # x.shape[2:]
            data = data.value
        return _is_shape(data) and self.ctx.tensor_kind(data) == NOT

    def _flag(self, factory: cst.Call, meets: cst.BaseExpression, indentation) -> None:
        name = device_name(meets, self.ctx.tensor_kind)
        fix = ()
        if name is not None:
            fixed = with_keyword(factory, "device", _member(cst.Name(name.value), "device"))
            fix = (Replacement(factory, code_in_block(self.ctx.module, fixed, indentation)),)
        self.report(factory, replacements=fix, hot_when=in_model_code)


def _is_shape(node: cst.BaseExpression) -> bool:
    """``x.shape`` or ``x.size()``."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    return isinstance(node, cst.Call) and not node.args and method_call(node, "size") is not None


def _stored_name(holder: Optional[cst.CSTNode], value: cst.CSTNode) -> Optional[str]:
    """``mask`` when ``holder`` is ``mask = value`` (or ``mask: T = value``)."""
    if isinstance(holder, cst.Assign) and holder.value is value and len(holder.targets) == 1:
        target = holder.targets[0].target
    elif isinstance(holder, cst.AnnAssign) and holder.value is value:
        target = holder.target
    else:
        return None
    return target.value if isinstance(target, cst.Name) else None


class ConstantTensorInHotPath(Rule):
    code = "TL103"
    name = "constant-tensor-in-hot-path"
    message = (
        "constant tensor built from literals on every call; build it once in `__init__` with "
        "`self.register_buffer(...)`"
    )
    what = (
        "Finds `torch.tensor(...)`, `torch.as_tensor(...)` and legacy constructors "
        "(`torch.FloatTensor(...)`) whose data is a literal list or tuple of numbers (nested lists "
        "allowed, e.g. `[0.485, 0.456, 0.406]`), in `forward`, a loss, or a helper of those."
    )
    why = (
        "The values never change, yet every call converts a Python list element by element into a "
        "new host tensor (several microseconds of CPU time). With `device=` (or a later "
        "`.to(x.device)`) it is then copied to the GPU with a blocking copy from pageable memory: "
        "the CPU waits for all queued kernels before it can launch the next ones, on every forward. "
        "The copy also breaks CUDA-graph capture. A buffer registered in `__init__` is built once, "
        "moves with the module (`model.to(device)`), and is saved in its `state_dict` (or not, with "
        "`persistent=False`)."
    )
    example = (
        "class Normalize(nn.Module):\n"
        "    def forward(self, x):\n"
        "        mean = torch.tensor([0.485, 0.456, 0.406], device=x.device).view(1, 3, 1, 1)\n"
        "        std = torch.tensor([0.229, 0.224, 0.225], device=x.device).view(1, 3, 1, 1)\n"
        "        return (x - mean) / std"
    )
    use_instead = (
        "class Normalize(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer(\"mean\", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1), persistent=False)\n"
        "        self.register_buffer(\"std\", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1), persistent=False)\n\n"
        "    def forward(self, x):\n"
        "        return (x - self.mean) / self.std"
    )
    fix_safety = (
        "No fix: a buffer needs a name, a line in `__init__` and a decision about `persistent`. Not "
        "reported for data that is not all literal (`torch.tensor([h, w])`, `torch.tensor(x.shape)`), "
        "for 0-d scalars (`torch.tensor(0.0)`: write a Python number, or it is an accumulator's "
        "start), in `__init__`, at module level, in parameter defaults, or in training-loop code "
        "(where the constant belongs before the loop, not in a buffer)."
    )
    measured = (
        "CPU (AMD EPYC, 2 cores, 1 torch thread, torch 2.13.0, 2026-11-21, `torchlint bench --device "
        "cpu --size small --repeat 5`): **1.69x** (12.7 us -> 7.53 us per forward, paired range "
        "1.69-1.70x) for a module normalising one uint8 32x32 image with the ImageNet mean and std "
        "(`fixtures/TL103`). The gain is a fixed cost per call (the two constants), so on CPU it "
        "shows only for small inputs. Not yet measured on GPU, where each rebuilt constant is also a "
        "blocking host-to-device copy. See [benchmarks](../benchmarks.md)."
    )
    valid = (
        "import torch\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('mean', torch.tensor([0.485, 0.456, 0.406]))",
        "import torch\nMEAN = torch.tensor([0.485, 0.456, 0.406])",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return x * torch.tensor([h, w])",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return x / torch.tensor(x.shape[2:])",
        "import torch\ndef my_loss(pred, target):\n    total = torch.tensor(0.0, device=pred.device)\n"
        "    return total + (pred - target).abs().sum()",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return x * torch.tensor(self.scale)",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return x * torch.tensor([])",
        "import torch\ndef make_weights():\n    return torch.tensor([1.0, 2.0])",
        "import torch\nclass M(nn.Module):\n    def forward(self, x, w=torch.tensor([1.0, 2.0])):\n        return x * w",
        "import torch\nfor x, y in loader:\n    w = torch.tensor([1.0, 5.0])\n    loss = F.cross_entropy(model(x), y, weight=w)\n"
        "    loss.backward()",
    )
    invalid = (
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)\n        return x - mean\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        std = torch.tensor([0.229, 0.224, 0.225], device=x.device)\n        return x / std[:, None, None]\n"
        ),
        Invalid(
            "import torch\ndef focal_loss(pred, target):\n"
            "    alpha = torch.as_tensor([[0.25], [0.75]], dtype=pred.dtype)\n    return (alpha * pred).sum()\n"
        ),
        Invalid(
            "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return x * self._scale()\n"
            "    def _scale(self):\n        return torch.FloatTensor([1 / 255, -0.5 * 2])\n"
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        factory = factory_name(self.ctx.qualname(node.func))
        if factory not in DATA_FACTORIES and factory not in LEGACY_CONSTRUCTORS:
            return
        data = data_argument(node)
        if data is not None and constant_data(data) and not self.ctx.in_definition():
            self.report(node, hot_when=in_model_code)
