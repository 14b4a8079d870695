"""TL101 factory-without-device: a tensor built on the CPU, then moved to a device."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.context import HOST, TENSOR
from torchlint.context.dataflow import MAX_TRAIL
from torchlint.context.devices import Move, device_move, host_factory, moved_by_helper
from torchlint.context.factories import (
    DATA_FACTORIES, LEGACY_CONSTRUCTORS, RANDOM_FACTORIES, WINDOWS, builds_empty, factory_name, variable_of,
)
from torchlint.context.scopes import constructing
from torchlint.context.tensors import is_dtype
from torchlint.diagnostics import SAFE, UNSAFE
from torchlint.rewrite import Replacement, code_in_block, with_keyword
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import dotted_name, is_name, keyword, method_call, positional
from torchlint.walker import descendants


# Methods that return the same tensor, reshaped or filled in place: the factory under them can
# take `device=` itself.
_PASS_THROUGH = frozenset(
    "view reshape unsqueeze squeeze permute transpose t flatten expand "
    "fill_ zero_ uniform_ normal_ random_ bernoulli_ exponential_ "
    "float double half bfloat16 long int short bool byte".split()
)
# Factories whose values do not depend on the dtype they are made in: made in the target
# dtype, they equal the cast of the float result.
_DTYPE_EXACT = frozenset({"zeros", "ones", "empty", "eye"})
_RANDOM_INITIALISERS = frozenset("uniform_ normal_ random_ bernoulli_ exponential_".split())
# Further steps a host tensor goes through and stays on the host (not foldable into the factory).
_STAYS_ON_HOST = _PASS_THROUGH | frozenset(
    "repeat expand_as contiguous clone detach round abs scatter_ scatter_add_ index_fill_ index_add_ masked_fill_ "
    "masked_fill type".split()
)
# Element-wise methods: on the host when their operands are (`(mem - ctx).clamp(-k, k)`, `mask.triu(1)`).
_ELEMENT_WISE = frozenset(
    "clamp clamp_ clamp_min clamp_max triu tril flip roll cumsum cumprod neg exp sqrt log sin cos floor ceil "
    "sigmoid tanh mul add sub div pow mul_ add_ sub_ div_ requires_grad_ eq ne lt le gt ge logical_not".split()
)
# Wrappers whose result is the tensor they are given (`nn.Parameter(torch.zeros(1)).to(device)`:
# followed back to the factory, not folded: `.to()` of a parameter returns a plain tensor).
_WRAPPERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


_JOINING = frozenset({"torch.cat", "torch.concat", "torch.stack"})  # of host tensors only: a host tensor
# What a host tensor was built by: a factory call, the call of a function of the file that
# returns it (followed into that function's `return`; with a position, an element of the tuple it
# returns: `h, c = self.init_hidden(b)`), or the qualified name of a function of another module
# of the project whose result it is (that module knows what it returns).
_Built = Union[cst.Call, cst.FunctionDef, Tuple[cst.FunctionDef, int], str]
_RESULT_MOVED = "@result_moved"  # the key a module is told by that a caller moves its function's result
# Torch (and einops) functions whose result is where their first argument is (followed back to a factory).
_HOST_KEEPING = frozenset(
    f"torch.{name}" for name in
    "round floor ceil sqrt exp log abs sigmoid sin cos triu tril diag flip roll clamp cumsum cumprod bernoulli "
    "multinomial nn.functional.normalize nn.functional.one_hot".split()
) | frozenset({"einops.rearrange", "einops.repeat"})


def _nothing_to_spare(call: cst.Call, factory: str) -> bool:
    """Would ``device=`` spare no copy? The factory copies data the host holds
    (``torch.tensor(ids)``, ``torch.tensor([0.5, 2.0])``, ``torch.LongTensor(indices)``: built
    on the device, it is copied just the same), or builds an empty tensor (``torch.Tensor()``,
    ``torch.zeros(0, d)``): there is nothing to copy. Legacy constructors given sizes
    (``torch.FloatTensor(3, 4)``) make data."""
    if factory in DATA_FACTORIES or builds_empty(factory, call):
        return True
    if factory not in LEGACY_CONSTRUCTORS:
        return False
    args = positional(call)
    return not call.args or len(args) == 1 and not isinstance(args[0].value, cst.Integer)


def _has_call(node: cst.BaseExpression) -> bool:
    return any(isinstance(child, cst.Call) for child in descendants(node))


def _single_comparison(node: cst.BaseExpression) -> bool:
    """``a > b``: one comparison, whose result is a tensor where ``a`` or ``b`` is one."""
    return isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
        and not isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))


def _operands(node) -> Tuple[cst.BaseExpression, cst.BaseExpression]:
    """The two sides of a binary operation or of a single comparison."""
    if isinstance(node, cst.BinaryOperation):
        return node.left, node.right
    return node.left, node.comparisons[0].comparator


def _grid_axes(meshgrid: cst.Call) -> List[Optional[cst.BaseExpression]]:
    """The axes ``torch.meshgrid`` is given, ``meshgrid(a, b)`` or ``meshgrid([a, b])`` (None
    for a starred one)."""
    args = positional(meshgrid)
    if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
        return [None if isinstance(element, cst.StarredElement) else element.value for element in args[0].value.elements]
    return [None if arg.star else arg.value for arg in args]


def _copy(values: Optional[Dict[str, List[cst.BaseExpression]]]) -> Optional[Dict[str, List[cst.BaseExpression]]]:
    """Another method's values by name, for one more branch of the trail to use up."""
    return None if values is None else {name: list(listed) for name, listed in values.items()}


def _under_chain(ctx, node: cst.BaseExpression) -> cst.BaseExpression:
    """The expression under a chain of pass-through methods and ``Variable`` wrappers: ``f(...)``
    for ``f(...).view(1, -1).t()`` and for ``Variable(f(...))``."""
    while True:
        method = method_call(node, *_PASS_THROUGH)
        if method is not None:
            node = method.value
        elif (wrapped := variable_of(ctx, node)) is not None:
            node = wrapped
        else:
            return node


class FactoryWithoutDevice(Rule):
    code = "TL101"
    name = "factory-without-device"
    message = "tensor created on the CPU and then moved to a device; pass `device=` to the factory"
    fix = "safe"
    what = (
        "Finds tensor factories (`torch.randperm`, `torch.randn`, `torch.rand`, `torch.randint`, "
        "`torch.zeros`, `torch.ones`, `torch.empty`, `torch.full`, `torch.arange`, `torch.linspace`, "
        "`torch.logspace`, `torch.eye`, and the windows `torch.hann_window` and its kin) and legacy constructors given sizes (`torch.FloatTensor(b, "
        "n)`) called without `device=` whose result (or a view of it, `.view(...)`, the tensor "
        "wrapped in a `Variable(...)` (a no-op since PyTorch 0.4) or an `nn.Parameter(...)`, a grid "
        "`torch.meshgrid` makes of it (`y, x = torch.meshgrid(torch.arange(h), torch.arange(w))`, also given a list, "
        "`torch.meshgrid([torch.arange(ny), torch.arange(nx)])`), the tensor "
        "filled or scaled in place, `.uniform_()`, `t *= math.pi`, cast with `.type(dtype)`, or passed through a torch "
        "function of host tensors, `torch.triu(...)`, `torch.bernoulli(...)`, `nn.init.zeros_(...)`, "
        "`F.one_hot(...)`, einops' `rearrange(...)`, "
        "or an element-wise method, `.triu(1)`, `.clamp(-k, k)`, `.mul(2)`, "
        "`torch.eye(n)[labels.cpu()]`, compared, `torch.rand(n) > p`, `.eq(1)`, or joined with other host tensors, `torch.cat([...])`, "
        "also of a list a loop fills with factories' tensors, `pieces.append(torch.full(...))`, or handed to a "
        "function of the file that names no device but its inputs' own (`device=t.device`), `self.bucket(positions)`; "
        "every factory it is built from, both aranges of `memory - context`) is then moved "
        "with `.to(device)` (also `.to(state[DEVICE])`, `.to(cfg[\"device\"])`, `.to(**self.tpdv)` of a dict that names a device), `.cuda()`, "
        "`.type_as(t)`, `.type(torch.cuda.FloatTensor)` "
        "or `x.new_tensor(...)`, in the same expression or later in the same function, or by the "
        "caller of a function of the file, or of another module of the project, that builds it and "
        "returns it (`_make_causal_mask(shape, dtype).to(x.device)`, `sample_noise(b, nz).to(device)` "
        "of `from .utils import sample_noise`; an element of a tuple it returns, `h, c = "
        "self.init_hidden(b)` ... `h.to(x.device)`; also given a tensor when all it returns are new "
        "tensors, `init_hidden(x)` returning `torch.zeros(2, x.size(0), d)`), or, kept in a plain `self` attribute "
        "(not a buffer), by a method that moves it every call (`self.table.to(x.device)` in "
        "`forward`; the attribute's value is followed through the names of the method that "
        "assigned it: `eye = torch.eye(n)` ... `self.table = eye.repeat(3, 1)`). Not in the "
        "code a test module runs once (its module level, `test_*` functions and their set-up): a "
        "test's inputs are built once, often on the CPU on purpose."
    )
    why = (
        "The factory runs on the CPU (a `randperm` of 10 million elements takes hundreds of "
        "milliseconds there), then `.to(device)` copies the result from pageable memory. That copy is "
        "synchronous: the CPU waits for every kernel already queued on the GPU, so the GPU idles "
        "while the next work is prepared. Created with `device=`, the values are generated by a "
        "kernel on the device and nothing crosses the bus. `.type_as(t)` is the same move in "
        "disguise: it converts to `t`'s type, device included."
    )
    example = Invalid("""
        import torch

        def sample(n, b, t, x, device):
            perm = torch.randperm(n).to(device)  # expect: TL101
            noise = torch.randn(b, 128).cuda()  # expect: TL101
            mask = torch.ones(b, t).type_as(x)  # expect: TL101
            return perm, noise, mask
    """)
    use_instead = Valid("""
        import torch

        def sample(n, b, t, x, device):
            perm = torch.randperm(n, device=device)
            noise = torch.randn(b, 128, device="cuda")
            mask = torch.ones(b, t, device=x.device, dtype=x.dtype)
            return perm, noise, mask
    """)
    fix_safety = (
        "The chained form (`torch.ones(n).to(device)`) is folded into the factory (`torch.ones(n, "
        "device=device)`), through views (`.view(...)`), casts (`.float()`) and in-place "
        "initialisers (`.fill_(0)`). The fix is **safe** when the values cannot change: a "
        "deterministic factory (`zeros`, `ones`, `empty`, `full`, `eye`, `arange`, `linspace`, "
        "`logspace`) moved with a device only, or with a dtype for `zeros`/`ones`/`empty`/`eye` "
        "(made in that dtype they equal the cast). It is **unsafe** for windows (`hann_window`: "
        "their cosines computed on the device may differ in the last bits) and for random factories "
        "(`randn`, `rand`, `randint`, `randperm`) and random initialisers (`.normal_()`): on "
        "another device they draw from another generator, so a seeded run draws other numbers and "
        "later draws on the CPU (a seeded DataLoader shuffle) change too; and when the factory "
        "passes `requires_grad=True`, which makes the folded result a leaf whose `.grad` fills. "
        "There is **no fix** when a dtype would change the values or fail (`torch.arange(0, 1, "
        "0.25).to(device, torch.long)` gives other values, `torch.randn(...)` cannot be made in "
        "`long`), when the factory draws from a `generator=` (a CPU generator cannot fill a CUDA "
        "tensor; the generator must move too), for a move through a keyword dict (`.to(**self.tpdv)`: "
        "the factory would need the dict's keys spelled out), for `.to(t)` of another tensor (it also takes `t`'s dtype), for `.type_as(t)` of "
        "an expression (folding would evaluate it twice), when a comment sits in the dropped part, "
        "and when the move happens later (`idx = torch.randperm(n)` ... `idx.to(device)`: the host "
        "tensor may be used in between). `non_blocking` is dropped with the move: no copy is left. "
        "The later form is not reported when the tensor is filled element by element before the "
        "move (`t[k] = ...`, or scattered into from host data, `counts.scatter_add_(0, labels, ones)` of labels "
        "from numpy: building on the host and copying once is the right order; a "
        "whole-tensor initialiser such as `uniform_()` or `fill_()` does not count, it could run on "
        "the device), nor when the move of an attribute is dropped (`self.bank.to(device)` as a statement: a "
        "tensor's `.to()` returns a copy and leaves the attribute where it was built; a local "
        "moved so is reported, since `device=` is what its author meant), nor when only rows picked by "
        "indices brought to the host are moved (`self.u[ids.cpu()].to(device)` of a running table kept on "
        "the host by design; of a factory's own result, `torch.eye(n)[labels.cpu()]`, it is). Neither form is reported when the factory copies data the host holds: "
        "`torch.tensor(...)`/`torch.as_tensor(...)` of a list, a literal or an array, or a legacy "
        "constructor given data (`torch.LongTensor(indices)`): with `device=` the data would be "
        "built on the host and copied just the same (TL103 reports literal constants rebuilt in a "
        "hot path); nor when it builds an empty tensor (`torch.Tensor()`, `torch.zeros(0, d)`): "
        "there is nothing to copy; nor for `.to(t)`/`.type_as(t)` of the module's own tensors while "
        "it is built (in `__init__` or a method only `__init__` calls): they are still on the CPU. Legacy constructors given sizes (`torch.FloatTensor(b, n)`) are flagged "
        "without a fix: they cannot take a CUDA `device=`; write `torch.empty(b, n, device=device)` "
        "or another factory. `x.new_tensor(torch.rand(3))` is the same move through `new_tensor`, "
        "also without a fix."
    )
    valid = (
        Valid("""
            import torch
            from torch import nn

            class ListwiseLoss(nn.Module):
                def __init__(self, items):
                    super().__init__()
                    self.u = torch.zeros(items)  # a running estimate per item, kept on the host by design

                def forward(self, scores, ids):
                    u = 0.9 * self.u[ids.cpu()].to(scores.device) + 0.1 * scores.exp().mean(1).detach()
                    self.u[ids.cpu()] = u.cpu()
                    return (scores.exp() / u[:, None]).mean()
        """),
        Valid("""
            import numpy as np
            import torch

            def pool_clusters(tokens, labels: np.ndarray, device):
                groups, inverse = torch.unique(torch.from_numpy(labels), return_inverse=True)
                counts = torch.zeros(groups.numel(), dtype=torch.long)
                counts.scatter_add_(0, inverse, torch.ones_like(inverse))  # counted on the host, from host labels
                return (tokens.cpu() / counts.unsqueeze(1)).to(device)
        """),
        Valid("""
            import torch
            from torch import nn

            class DenseNN(nn.Module):
                def __init__(self, param_dims):
                    super().__init__()
                    ends = torch.cumsum(torch.tensor(param_dims), dim=0)
                    starts = torch.cat((torch.zeros(1).type_as(ends), ends[:-1]))  # a cast to a host tensor's dtype
                    self.slices = [slice(s.item(), e.item()) for s, e in zip(starts, ends)]
        """),
        Valid("""
            import torch
            from torch import nn

            class Embed(nn.Module):
                def __init__(self, table):
                    super().__init__()
                    self.table = table  # the caller's tensor, wherever it lives

                def forward(self, x):
                    table = torch.zeros(x.shape[0], 4)  # another `table`, never moved
                    self.record(table)
                    return x @ self.table.to(x.device)
        """),
        Valid("""
            import torch

            def grid(n):
                return torch.arange(n).float()

            def offsets(n):
                return grid(n) - n / 2  # returned on the host: nothing here moves it
        """),
        Valid("""
            import torch

            def place(t, device):
                return t.to(device)

            def grid(n, device):
                return place(torch.arange(n), device).to(device)  # the helper moves it first
        """),
        Valid("""
            import torch

            def keep_rows(batch_size, prefix_tokens, visible, device):
                prefix = torch.arange(prefix_tokens)
                rows = []
                for i in range(batch_size):
                    rows.append(torch.cat([prefix, visible[i].nonzero().flatten()]))  # host rows: one copy at the end
                return torch.stack(rows).to(device)
        """),
        Valid("""
            import torch

            def as_float(n):
                return torch.zeros(n).type(torch.FloatTensor)  # a cast on the host, no move
        """),
        Valid("""
            import pytest
            import torch

            X = torch.randn(128, 16).to("cuda")

            def test_forward(model, device):
                x = torch.rand(10, 3, 32, 32).to(device)
                assert model(x).shape == (10, 4)
        """),
        Valid("""
            import torch
            class MemoryBank(nn.Module):
                def __init__(self, size):
                    super().__init__()
                    self.register_buffer("bank", torch.empty(size))
                    self._init_bank(size)
                def _init_bank(self, size):
                    self.bank = torch.randn(size).type_as(self.bank)  # the buffer is on the CPU: a dtype match
        """),
        Valid("""
            import torch
            from torch import nn

            class ModelWithTemperature(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.temperature = nn.Parameter(torch.ones(1, 1))  # a parameter: moved with the module

                def forward(self, logits):
                    return logits / self.temperature.expand(logits.size(0), 1).to(logits.device)
        """),
        Valid("""
            import torch
            class ContrastMemory(nn.Module):
                def __init__(self, k):
                    super().__init__()
                    self.probs = torch.zeros(k)

                def forward(self, x):
                    self.probs.to(x.device)  # the copy is dropped: `probs` stays where it is
                    return x
        """),
        Valid("""
            import torch
            def embed(self, cat_vars):
                out = torch.Tensor().to(cat_vars.device)  # empty: nothing is copied
                for layer in self.layers:
                    out = torch.cat((out, layer(cat_vars)), dim=1)
                return out, torch.zeros(0, 4).to(cat_vars.device)
        """),
        Valid("""
            import torch
            idx = torch.LongTensor([0, 2, 4]).cuda()
            mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).to(x.device)
            x = torch.Tensor([1, 2]).to(dtype=torch.float16, device="cuda")
        """),
        Valid("""
            import torch
            def build(n, device):
                w = torch.zeros(n)
                w[0] = 1.0
                return w.to(device)
        """),
        Valid("""
            import torch
            x = torch.randn(3, 4, device=device)
        """),
        Valid("""
            import torch
            idx = torch.randperm(n)
            x = data[idx]
        """),
        Valid("""
            import torch
            y = torch.zeros(3).to(torch.float16)
        """),
        Valid("""
            import torch
            y = torch.zeros(3).to(dtype=torch.float16)
        """),
        Valid("""
            import torch
            y = torch.zeros(3).to("cpu")
        """),
        Valid("""
            import torch
            y = torch.zeros_like(x).to(device)
        """),
        Valid("""
            import torch
            y = x.new_zeros(3).to(device)
        """),
        Valid("""
            import torch
            y = torch.zeros(3, **kw).to(device)
        """),
        Valid("""
            import torch
            y = torch.zeros(3).to(other_tensor)
        """),
        Valid("""
            import numpy as np
            y = np.zeros(3).to(device)
        """),
        Valid("""
            import torch
            idx = torch.randperm(n)
            idx = other
            idx = idx.to(device)
        """),
        Valid("""
            import torch
            y = torch.zeros_like(x).type_as(x)
        """),
        Valid("""
            import torch
            y = torch.cuda.FloatTensor(3).zero_()
        """),
        Valid("""
            import torch
            w = torch.FloatTensor(3, 4)
            nn.init.normal_(w)
        """),
        Valid("""
            import torch
            isinstance(x, torch.Tensor)
        """),
        Valid("""
            import torch
            data = torch.ByteTensor(byte_storage).to(device)
        """),
        Valid("""
            import torch
            cfs = torch.zeros(n, dtype=torch.float64)
            for k in range(1, n):
                cfs[k] = cfs[k - 1] * factor
            cfs = cfs.to(device)
        """),
        Valid("""
            import torch
            perm = torch.tensor(np.array(rows))
            perm = perm.to(device)
        """),
        Valid("""
            import torch
            ids = torch.tensor(tokenizer.encode(text)).unsqueeze(0).to(device)
        """),
        Valid("""
            import torch
            lengths = torch.as_tensor(lengths, dtype=torch.long).to(device)
        """),
    )
    invalid = (
        Invalid("""
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def init_hidden(self, x):  # given the input, it only reads its size
                    return torch.zeros(2, x.size(0), 256), torch.zeros(2, x.size(0), 256)  # expect: TL101 TL101

                def forward(self, x):
                    h, c = self.init_hidden(x)
                    return self.lstm(x, (h.to(x.device), c.to(x.device)))
        """),
        Invalid("""
            import torch
            def one_hot(labels, n, device):
                return torch.eye(n)[labels.cpu()].to(device)  # expect: TL101
        """),
        Invalid("""
            import math
            import torch
            import torch.nn.functional as F

            def sinc(t):
                return torch.where(t == 0, torch.tensor(1.0, device=t.device), torch.sin(t) / t)  # t's device: the host

            def upsample2(x, zeros=56):
                window = torch.hann_window(4 * zeros + 1, periodic=False)[1::2]  # expect: TL101
                t = torch.linspace(-zeros + 0.5, zeros - 0.5, 2 * zeros)  # expect: TL101
                t *= math.pi
                kernel = (sinc(t) * window).view(1, 1, -1).to(x)
                return F.conv1d(x, kernel, padding=zeros)
        """),
        Invalid("""
            import torch

            def discriminator_labels(z):
                return torch.ones(z.shape[0]).type(torch.LongTensor).to(z.device)  # expect: TL101
        """),
        Invalid("""
            import torch
            import torchbearer

            def targets_hot(state, nclasses):
                return torch.zeros(1, nclasses).to(state[torchbearer.DEVICE])  # expect: TL101
        """, fixed="""
            import torch
            import torchbearer

            def targets_hot(state, nclasses):
                return torch.zeros(1, nclasses, device=state[torchbearer.DEVICE])
        """),
        Invalid("""
            import torch
            from torch import nn

            class Detect(nn.Module):
                @staticmethod
                def _make_grid(nx, ny):
                    yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")  # expect: TL101
                    return torch.stack((xv, yv), 2).view((1, ny, nx, 2)).float()

                def forward(self, x):
                    grid = self._make_grid(x.shape[3], x.shape[2]).to(x.device)
                    return x.sigmoid() + grid.permute(0, 3, 1, 2)
        """),
        Invalid("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def pixel_grid(self, h, w, device):
                    y, x = torch.meshgrid(torch.arange(h), torch.arange(w))  # expect: TL101
                    return torch.stack((x, y), dim=-1).reshape(-1, 2).float().to(device) + 0.5

                def forward(self, x):
                    pad = torch.zeros(x.size(0), 1).eq(1).to(x.device)  # expect: TL101
                    bias = nn.Parameter(torch.zeros(1)).to(x.device)  # expect: TL101
                    return pad, bias, self.pixel_grid(*x.shape[-2:], x.device)
        """),
        Invalid("""
            import torch

            class Runner:
                def __init__(self, n_threads, n_agents, device):
                    self.tpdv = dict(dtype=torch.float32, device=device)
                    self.masks = torch.ones(n_threads, n_agents, 1).to(**self.tpdv)  # expect: TL101
        """),
        Invalid("""
            import math

            import torch
            from torch import nn

            class TimestepEmbedding(nn.Module):
                def forward(self, t):
                    freqs = torch.exp(-math.log(10000) * torch.arange(64) / 64).to(t.device)  # expect: TL101
                    return t[:, None] * freqs[None]
        """),
        Invalid("""
            import torch
            from torch import nn

            class ConvLSTM(nn.Module):
                def init_hidden(self, b, h, w):
                    return (torch.zeros(b, self.hidden, h, w),  # expect: TL101
                            torch.zeros(b, self.hidden, h, w))  # expect: TL101

                def forward(self, x):
                    b, _, _, h, w = x.shape
                    hx, cx = self.init_hidden(b, h, w)
                    return self.cell(x, (hx.to(x.device), cx.to(x.device)))
        """),
        Invalid("""
            import torch
            from torch import nn

            class RelativePosition(nn.Module):
                def forward(self, q):
                    n = q.size(-2)
                    causal = torch.ones(n, n).triu(1).bool()  # expect: TL101
                    rel = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).clamp(-self.k, self.k)  # expect: TL101
                    return self.emb(rel.to(q.device) + self.k), causal.to(q.device)
        """),
        Invalid("""
            import torch
            from torch import nn

            def square_subsequent_mask(size):
                return torch.triu(torch.full((size, size), float("-inf")), diagonal=1)  # expect: TL101

            class Decoder(nn.Module):
                def forward(self, tgt, memory):
                    tgt_mask = square_subsequent_mask(tgt.size(0)).to(tgt.device)
                    return self.layers(tgt, memory, tgt_mask)
        """),
        Invalid("""
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def causal_mask(self, size):
                    mask = (torch.triu(torch.ones(size, size)) == 1).transpose(0, 1)  # expect: TL101
                    return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, 0.0)

                def forward(self, src):
                    return self.layers(src, self.causal_mask(len(src)).to(src.device))
        """),
        Invalid("""
            import torch
            from torch.autograd import Variable

            def init_hidden(batch_size, hidden_size):
                return Variable(torch.zeros(1, batch_size, hidden_size)).cuda()  # expect: TL101
        """, fixed="""
            import torch
            from torch.autograd import Variable

            def init_hidden(batch_size, hidden_size):
                return Variable(torch.zeros(1, batch_size, hidden_size, device="cuda"))
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Upsampler(nn.Module):
                def __init__(self, k):
                    super().__init__()
                    eye = torch.eye(k * k).view(k * k, 1, k, k)  # expect: TL101
                    self.expansion = eye.repeat(3, 1, 1, 1)  # a plain attribute, not a buffer: on the CPU

                def forward(self, x):
                    return F.conv2d(x, self.expansion.to(x), groups=3)  # copied to x's device every call
        """),
        Invalid("""
            import torch
            from torch import nn

            class ForwardAttention(nn.Module):
                def init_states(self, inputs):
                    b, t = inputs.shape[0], inputs.shape[1]
                    self.alpha = torch.cat(
                        [torch.ones([b, 1]), torch.zeros([b, t])[:, :-1]], dim=1  # expect: TL101
                    ).to(inputs.device)
        """),  # no fix: the factories are joined first; each would need its own device=
        Invalid("""
            import torch
            import torch.nn as nn

            class Obfuscator(nn.Module):
                def forward(self, x, dtype):
                    mask = torch.bernoulli(self.p * torch.ones(x.shape)).to(x.device)  # expect: TL101
                    keep = torch.ones(1, x.shape[1]).type(dtype).to(x.device)  # expect: TL101
                    h = nn.init.zeros_(torch.Tensor(2, x.shape[0], 8)).to(x.device)  # expect: TL101
                    causal = torch.triu(torch.ones(8, 8, dtype=torch.bool), diagonal=1).to(x.device)  # expect: TL101
                    return self.rnn(x * mask * keep, h), causal
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            from einops import rearrange
            from torch import nn

            class ContrastiveLoss(nn.Module):
                def forward(self, features):
                    n = features.shape[0]
                    labels = F.one_hot(torch.arange(n), 2 * n).to(features.device)  # expect: TL101
                    steps = rearrange(torch.arange(n), "t -> t 1").to(features.device)  # expect: TL101
                    return labels, steps
        """),
        Invalid("""
            import torch

            def dropout_mask(x, p):
                return (torch.rand(x.size()) > p).to(x.device)  # expect: TL101

            def pair_mask(mentions):
                pairs = torch.arange(mentions.shape[0])  # expect: TL101
                pairs = pairs.unsqueeze(1) - pairs.unsqueeze(0)
                pairs = torch.log((pairs > 0).to(torch.float))
                return pairs.to(mentions.device)
        """),  # a comparison and a cast keep the factory's result on the host
        Invalid("""
            import torch

            cuda = torch.cuda.is_available()
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor

            def adversarial_targets(imgs):
                valid = torch.ones(imgs.size(0), 1).type(Tensor)  # expect: TL101
                z = torch.randn(imgs.size(0), 100).type(torch.cuda.FloatTensor)  # expect: TL101
                return valid, z
        """),  # `.type()` of a CUDA tensor type is a move (no fix: `.type` also sets the dtype)
        Invalid("""
            import torch
            from torch import nn

            class RelativeBias(nn.Module):
                def bucket(self, relative, num_buckets=32):
                    buckets = (relative > 0).to(torch.long) * num_buckets
                    return buckets + torch.abs(relative).clamp(max=num_buckets - 1)

                def forward(self, query_length, key_length):
                    context = torch.arange(query_length)[:, None]  # expect: TL101
                    memory = torch.arange(key_length)[None, :]  # expect: TL101
                    buckets = self.bucket(memory - context)
                    return self.embedding(buckets.to(self.embedding.weight.device))
        """),  # a helper of the file that names no device keeps what it computes on the host
        Invalid("""
            import torch

            def strides_of(feats, strides):
                device = feats[0].device
                pieces = []
                for feat, stride in zip(feats, strides):
                    pieces.append(torch.full([feat.shape[2] * feat.shape[3], 1], stride))  # expect: TL101
                return torch.cat(pieces).to(device)
        """),
        Invalid("""
            import pytest
            import torch

            class GanRunner:
                def handle_batch(self, batch):
                    real = torch.ones(batch.shape[0], 1).to(self.device)  # expect: TL101
                    return self.criterion(self.discriminator(batch), real)

            def test_gan(runner, batch):
                assert runner.handle_batch(batch) > 0
        """, fixed="""
            import pytest
            import torch

            class GanRunner:
                def handle_batch(self, batch):
                    real = torch.ones(batch.shape[0], 1, device=self.device)
                    return self.criterion(self.discriminator(batch), real)

            def test_gan(runner, batch):
                assert runner.handle_batch(batch) > 0
        """),
        Invalid("""
            import torch
            def spectrogram(x, n_fft):
                return torch.stft(x, n_fft, window=torch.hann_window(n_fft).to(x.device), return_complex=True)  # expect: TL101
        """, fixed="""
            import torch
            def spectrogram(x, n_fft):
                return torch.stft(x, n_fft, window=torch.hann_window(n_fft, device=x.device), return_complex=True)
        """),
        Invalid("""
            import torch
            class MemoryBank(nn.Module):
                def __init__(self, size):
                    super().__init__()
                    self.register_buffer("bank", torch.empty(size))
                    self._init_bank(size)
                def forward(self, x):
                    self._init_bank(self.bank.shape)  # also runs once the module is on the GPU
                    return x @ self.bank
                def _init_bank(self, size):
                    self.bank = torch.randn(size).type_as(self.bank)  # expect: TL101
        """),
        Invalid("""
            import torch
            def init_state(b, n, device):
                a = torch.Tensor(n, 1)  # expect: TL101
                a.uniform_()
                a = a.cuda()
                h = torch.FloatTensor(b, n).fill_(0).to(device)  # expect: TL101
                return a, h
        """),
        Invalid("""
            import torch
            def noise(x):
                return x.new_tensor(torch.rand(3))  # expect: TL101
        """),
        Invalid("""
            import torch
            def shuffled(n, device, seed):
                g = torch.Generator().manual_seed(seed)
                return torch.randperm(n, generator=g).to(device)  # expect: TL101
        """),
        Invalid("""
            import torch
            def init(b, n, device):
                w = torch.empty(b, n).normal_().to(device)  # expect: TL101
                return w
        """, fixed="""
            import torch
            def init(b, n, device):
                w = torch.empty(b, n, device=device).normal_()
                return w
        """),
        Invalid("""
            import torch
            perm = torch.randperm(n).to(device)  # expect: TL101
        """, fixed="""
            import torch
            perm = torch.randperm(n, device=device)
        """),
        Invalid("""
            import torch as T
            x = T.randn(3, 4).cuda()  # expect: TL101
        """, fixed="""
            import torch as T
            x = T.randn(3, 4, device="cuda")
        """),
        Invalid("""
            from torch import zeros
            x = zeros(n).to('cuda', non_blocking=True)  # expect: TL101
        """, fixed="""
            from torch import zeros
            x = zeros(n, device='cuda')
        """),
        Invalid("""
            import torch
            x = torch.ones(n).cuda(1)  # expect: TL101
        """, fixed="""
            import torch
            x = torch.ones(n, device="cuda:1")
        """),
        Invalid("""
            import torch
            x = torch.zeros(n).to(device, torch.float16)  # expect: TL101
        """, fixed="""
            import torch
            x = torch.zeros(n, device=device, dtype=torch.float16)
        """),
        Invalid("""
            import torch
            x = torch.arange(0, 1, 0.25).to(device, torch.long)  # expect: TL101
            y = torch.randperm(5000).to(device, torch.float16)  # expect: TL101
        """),
        Invalid("""
            import torch
            x = torch.ones(n, dtype=torch.int32).to(device=dev, dtype=torch.int64)  # expect: TL101
        """, fixed="""
            import torch
            x = torch.ones(n, dtype=torch.int64, device=dev)
        """),
        Invalid("""
            import torch
            def loss(x, n, device):
                idx = torch.randperm(n)  # expect: TL101
                idx = idx.to(device)
                return x[idx]
        """),
        Invalid("""
            import torch
            mask = torch.ones(b, t).type_as(x)  # expect: TL101
        """, fixed="""
            import torch
            mask = torch.ones(b, t, device=x.device, dtype=x.dtype)
        """),
        Invalid("""
            import torch
            w = torch.zeros(n, dtype=torch.long).type_as(self.weight)  # expect: TL101
        """, fixed="""
            import torch
            w = torch.zeros(n, dtype=self.weight.dtype, device=self.weight.device)
        """),
        Invalid("""
            import torch
            w = torch.zeros(n).type_as(get_ref())  # expect: TL101
        """),
        Invalid("""
            import torch
            x = torch.FloatTensor(3, 4).to(device)  # expect: TL101
        """),
        Invalid("""
            import torch
            def f(x):
                y = torch.rand(3)  # expect: TL101
                return y.type_as(x)
        """),
        Invalid("""
            import torch
            def f(n, device):
                pos = torch.arange(n).unsqueeze(1)  # expect: TL101
                return pos.to(device)
        """),
        Invalid("""
            import torch
            from torch import nn

            def causal_mask(n, dtype):
                mask = torch.full((n, n), float("-inf"))  # expect: TL101
                mask.masked_fill_(torch.ones(n, n).tril().bool(), 0)
                return mask.to(dtype)[None, None]

            class Decoder(nn.Module):
                def forward(self, x):
                    return self.attend(x, causal_mask(x.shape[1], x.dtype).to(x.device))
        """),
        Invalid("""
            import torch
            def smooth_targets(log_probs, targets):
                zeros = torch.zeros(log_probs.size())  # expect: TL101
                one_hot = zeros.scatter_(1, targets.unsqueeze(1).cpu(), 1)
                return one_hot.cuda()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # A function of the file -> the host factories it returns, or the functions whose result it returns.
        self._returned: Dict[cst.FunctionDef, List[_Built]] = {}
        self._results_moved: Set[cst.FunctionDef] = set()  # functions of the file whose result a caller moves
        # functions of the file returning a tuple -> what built each element; and the elements callers move
        self._returned_elements: Dict[cst.FunctionDef, List[List[_Built]]] = {}
        self._elements_moved: Set[Tuple[cst.FunctionDef, int]] = set()
        self._building: Set[cst.FunctionDef] = set()  # functions that call a factory (so far in the walk)

    def leave_Return(self, node: cst.Return) -> None:  # after its value's factories were visited
        function = self.ctx.scope.function
        if node.value is not None and function.node in self._building:
            if isinstance(node.value, cst.Tuple):  # return (torch.zeros(b, h), torch.zeros(b, h))
                self._returned_elements[function.node] = [self._host_built(element.value) for element in node.value.elements]
                return
            built = self._host_built(node.value)
            if built:
                self._returned[function.node] = built

    def leave_Module(self, node: cst.Module) -> None:
        """``mask = _make_causal_mask(n).to(x.device)``: the helper builds its result on the host
        and returns it (also through helpers it returns the result of), the caller moves it, in
        this file or in another module of the project (``from .utils import make_mask``)."""
        for function, position in self._elements_moved:
            elements = self._returned_elements.get(function, ())
            for built in self._origins(elements[position]) if position < len(elements) else ():
                if isinstance(built, cst.Call):
                    self.report(built)
        module_functions = {statement for statement in node.body if isinstance(statement, cst.FunctionDef)}
        for function, returned in self._returned.items():
            moved = function in self._results_moved
            for built in self._origins(returned):
                if isinstance(built, str) and moved:
                    self.ctx.offer(f"{built}{_RESULT_MOVED}", "yes")
                elif isinstance(built, cst.Call) and (moved or (
                    function in module_functions and self.ctx.module_name
                    and self.ctx.need(f"{self.ctx.module_name}.{function.name.value}{_RESULT_MOVED}") == "yes"
                )):
                    self.report(built)

    def _origins(self, built: List[_Built], depth: int = 0) -> Iterator[_Built]:
        """What built the host tensors ``built`` (factories, or results of functions of the
        file), through the helpers whose result they are."""
        for one in built:
            if not isinstance(one, cst.FunctionDef):
                yield one
            elif depth < MAX_TRAIL:
                yield from self._origins(self._returned.get(one, []), depth + 1)

    def visit_Call(self, node: cst.Call) -> None:
        if host_factory(self.ctx, node) is not None and self.ctx.scope.function.node is not None:
            self._building.add(self.ctx.scope.function.node)
        if method_call(node, "new_tensor") is not None:
            if not self.ctx.in_test_case():
                self._copied_by_new_tensor(node)
            return
        helped = moved_by_helper(self.ctx, node)
        if helped is not None:
            if not self.ctx.in_test_case():
                self._moved_later(helped)  # to_device(torch.zeros(n), ...): no fix through a helper
            return
        move = device_move(self.ctx, node)
        if move is None or self.ctx.in_test_case() or self._matches_own_tensor_in_construction(node):
            return
        moved = node.func.value
        inner = _under_chain(self.ctx, moved)
        factory = host_factory(self.ctx, inner)
        if factory is not None:
            if not _nothing_to_spare(inner, factory):
                fold, level = ((), None) if factory in LEGACY_CONSTRUCTORS else self._fold(inner, moved, node, move)
                self.report(inner, replacements=fold, applicability=level)
        elif not (isinstance(self.ctx.parent, cst.Expr) and isinstance(moved, cst.Attribute)):
            self._moved_later(moved)  # `self.bank.to(device)` alone moves nothing: `.to()` returns a copy

    def _matches_own_tensor_in_construction(self, move_call: cst.Call) -> bool:
        """``.to(weight)``/``.type_as(self.bank)`` of the module's own tensor while it is built
        (in ``__init__`` or a method only ``__init__`` calls): they are still on the CPU, so the
        move only sets the dtype."""
        args = positional(move_call)
        if len(args) != 1 or self.ctx.tensor_kind(args[0].value) not in (TENSOR, HOST):
            return False
        target = args[0].value
        value = self.ctx.value_of(target.value) if isinstance(target, cst.Name) else target
        if value is None or not any(is_name(node, "self") for node in descendants(value)):
            return False
        return constructing(self.ctx.scope.function)

    def _moved_later(self, moved: cst.BaseExpression) -> None:
        """The move of a tensor built earlier on the host: ``idx.to(device)`` of ``idx =
        torch.randperm(n)``, of ``mask = 1.0 - torch.eye(b)`` or of ``self.idx = torch.arange(n)``
        in the class. Reported at the factory, without a fix (the host tensor may be used
        before the move)."""
        for built in self._host_built(moved):
            if isinstance(built, cst.FunctionDef):
                self._results_moved.add(built)  # reported once the file is walked (``leave_Module``)
            elif isinstance(built, tuple):
                self._elements_moved.add(built)  # as are the elements of a returned tuple
            elif isinstance(built, str):
                self.ctx.offer(f"{built}{_RESULT_MOVED}", "yes")  # reported by that module, at its factory
            else:
                self.report(built)

    def _host_built(
        self, node: Optional[cst.BaseExpression], assigned: Optional[cst.BaseExpression] = None,
        elsewhere: Optional[Dict[str, List[cst.BaseExpression]]] = None,
    ) -> List[_Built]:
        """The factory calls a host tensor ``node`` was built from (all of them, where host
        tensors meet: ``sinc(t) * window``, ``torch.cat([torch.ones(b, 1), torch.zeros(b, t)])``),
        following reassignments in this function, ``self`` attributes, steps that keep it on
        the host (views, casts, ``repeat``) and arithmetic with anything that is not a device
        tensor. ``assigned``: the assignment being looked through; ``elsewhere``: in what another
        method assigned to ``self.<name>``, the values its names had there (``dim_t =
        torch.arange(n)`` ... ``self.dim_t = t ** (dim_t / n)``), latest last."""
        for _ in range(MAX_TRAIL):
            if isinstance(node, cst.Name) and elsewhere is not None:
                values = elsewhere.get(node.value)
                node = values.pop() if values else None  # a name met again is its earlier value
            elif isinstance(node, cst.Name):
                if self.ctx.written_into(node.value):
                    return []  # filled element by element on the host, then copied once
                name = node.value
                update = self.ctx.updated_in_place(name, before=assigned)
                if update is not None and self.ctx.tensor_kind(update.value) != TENSOR:
                    assigned = update  # `t *= math.pi`: the same tensor, scaled in place
                node = assigned = self.ctx.value_of(name, before=assigned)
                unpacked = self.ctx.unpacked_at(name) if node is None else None
                if unpacked is not None and isinstance(unpacked[0], cst.Call):
                    source, position = unpacked
                    if self.ctx.qualname(source.func) == "torch.meshgrid":  # y, x = meshgrid(arange(h), arange(w))
                        grids = _grid_axes(source)
                        node = grids[position] if position < len(grids) else None
                        continue
                    function = self._result_of(source)  # h, c = self.init_hidden(b)
                    return [(function, position)] if function is not None else []
            elif isinstance(node, cst.Attribute) and dotted_name(node.value) == "self":
                node = self.ctx.attribute_value(node.attr.value)
                if node is not None:
                    elsewhere = {name: list(values) for name, values in self.ctx.assigned_before(node).items()}
            elif isinstance(node, cst.BinaryOperation) or _single_comparison(node):
                left, right = _operands(node)
                if elsewhere is not None:  # kinds here say nothing of the other method's names
                    node = left if _has_call(left) or isinstance(left, cst.Name) and left.value in elsewhere else right
                    continue
                left_kind, right_kind = self.ctx.tensor_kind(left), self.ctx.tensor_kind(right)
                if TENSOR in (left_kind, right_kind):
                    return []  # combined with a device tensor (TL102's case)
                if left_kind == right_kind == HOST:  # `sinc(t) * window`: both built on the host
                    return self._host_built(left, assigned) + self._host_built(right, assigned)
                node = left if left_kind == HOST or right_kind != HOST and _has_call(left) else right
            elif isinstance(node, cst.UnaryOperation):
                node = node.expression
            elif method_call(node, *_STAYS_ON_HOST) is not None or self._cast(node):
                node = node.func.value
            elif method_call(node, *_ELEMENT_WISE) is not None and self.ctx.qualname(node.func) is None:
                if any(self.ctx.tensor_kind(arg.value) == TENSOR for arg in node.args):
                    return []  # combined with a device tensor (TL102's case)
                node = node.func.value
            elif (wrapped := variable_of(self.ctx, node)) is not None:
                node = wrapped
            elif isinstance(node, cst.Call) and node.args and self.ctx.qualname(node.func) in _WRAPPERS:
                if elsewhere is not None:
                    return []  # `self.scale = nn.Parameter(...)`: the module's, moved with it
                node = node.args[0].value
            elif isinstance(node, cst.Call) and self._host_function(node):
                node = positional(node)[0].value
            elif isinstance(node, cst.Call) and (function := self._result_of(node)) is not None:
                return [function]  # what it returns is followed there (``visit_Return``)
            elif isinstance(node, cst.Call) and (imported := self._imported_result(node)) is not None:
                return [imported]  # what a function of another module returns: that module is told
            elif isinstance(node, cst.Call) and self._keeps_on_host(node):
                node = positional(node)[0].value  # self._relative_position_bucket(relative_position, ...)
            elif isinstance(node, cst.Call) and self._joins_host_tensors(node):  # torch.cat([torch.ones(b, 1), ...])
                return [
                    built for joined in self._joined(positional(node)[0].value)
                    for built in self._host_built(joined, assigned, _copy(elsewhere))
                ]
            elif isinstance(node, cst.Subscript) and self._picked_on_host(node):
                node = node.value  # torch.eye(n)[labels.cpu()]: rows picked on the host
            else:
                factory = host_factory(self.ctx, node) if node is not None else None
                return [] if factory is None or _nothing_to_spare(node, factory) else [node]
        return []

    def _picked_on_host(self, node: cst.Subscript) -> bool:
        """Does ``node`` pick items of a host tensor with host indices: ones no tensor takes part
        in (``t[:k]``), or, of a factory's result itself, ones copied to the host
        (``torch.eye(n)[labels.cpu()]``; a table kept on the host, ``self.u[ids.cpu()]``, is so by design)?"""
        if isinstance(node.value, cst.Call):  # the indices themselves: `labels.cpu()` is on the host
            indices = (element.slice.value for element in node.slice if isinstance(element.slice, cst.Index))
        else:  # no tensor anywhere in them
            indices = (index for element in node.slice for index in descendants(element) if isinstance(index, cst.BaseExpression))
        return not any(self.ctx.tensor_kind(index) == TENSOR for index in indices)

    def _cast(self, node: cst.BaseExpression) -> bool:
        """``t.type(torch.bool)``, ``t.to(torch.float)``, ``t.type(x.dtype)``: a cast, not a move
        (``.type(torch.cuda.FloatTensor)`` is one)."""
        method = method_call(node, "type", "to")
        args = positional(node) if method is not None else []
        if len(args) != 1 or node.args[0].keyword is not None:
            return False
        return is_dtype(args[0].value, self.ctx.qualname)

    def _host_function(self, node: cst.Call) -> bool:
        """A torch function of a tensor that keeps it where it is (``torch.triu(ones, 1)``,
        ``torch.bernoulli(p)``, ``nn.init.zeros_(t)``, ``F.one_hot(t, k)``, einops' ``rearrange(t, ...)``),
        given nothing on the device."""
        name = self.ctx.qualname(node.func) or ""
        if name not in _HOST_KEEPING and not name.startswith("torch.nn.init."):
            return False
        args = positional(node)
        return bool(args) and keyword(node, "device") is None and not any(
            self.ctx.tensor_kind(arg.value) == TENSOR for arg in node.args
        )

    def _result_of(self, node: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file ``node`` calls, given no tensor to transform
        (``_make_causal_mask(shape, dtype)``), or one that only returns new tensors, whatever it
        is given (``init_hidden(x)``: ``return torch.zeros(1, x.size(0), d)``): its result is
        what that function returns."""
        function = self.ctx.function_here(node.func)
        if function is None or not (self._given_no_tensor(node) or self._returns_factories(function)):
            return None
        return function

    def _returns_factories(self, function: cst.FunctionDef) -> bool:
        """Does every ``return`` of ``function`` give host factories' results themselves (also
        a tuple of them): what it is given can only size them?"""
        returned = [node.value for node in descendants(function.body) if isinstance(node, cst.Return)]
        return bool(returned) and all(
            value is not None and all(
                host_factory(self.ctx, part) is not None
                for part in ([element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value])
            )
            for value in returned
        )

    def _imported_result(self, node: cst.Call) -> Optional[str]:
        """The qualified name of the project function of another module ``node`` calls, given no
        tensor (``sample_noise(batch, nz)``): whether it returns a host factory is for that
        module to say."""
        if self.ctx.function_here(node.func) is not None or not self._given_no_tensor(node):
            return None
        return self.ctx.project_callee(node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else None

    def _given_no_tensor(self, node: cst.Call) -> bool:
        return not any(self.ctx.tensor_kind(arg.value) in (TENSOR, HOST) for arg in node.args)

    def _keeps_on_host(self, node: cst.Call) -> bool:
        """A function of this file given no device tensor, whose body names no device
        (``device``, ``.cuda()``, ``.to(...)``) but its inputs' own (``device=t.device`` of its
        parameter ``t``): what it computes from its first argument stays on the host."""
        args = positional(node)
        function = self.ctx.function_here(node.func) if args else None
        if function is None or any(self.ctx.tensor_kind(arg.value) == TENSOR for arg in node.args):
            return False
        parameters = {param.name.value for param in (*function.params.posonly_params, *function.params.params)}
        beside_inputs = {
            id(part) for arg in descendants(function.body) if isinstance(arg, cst.Arg) and arg.keyword is not None
            and arg.keyword.value == "device" and isinstance(arg.value, cst.Attribute)
            and arg.value.attr.value == "device" and isinstance(arg.value.value, cst.Name)
            and arg.value.value.value in parameters
            for part in (arg.keyword, arg.value, arg.value.attr)
        }
        return not any(
            id(inner) not in beside_inputs and isinstance(inner, cst.Name) and "device" in inner.value
            or id(inner) not in beside_inputs and isinstance(inner, cst.Attribute)
            and inner.attr.value in ("cuda", "type_as", "device")
            or isinstance(inner, cst.Call) and method_call(inner, "to") is not None and not self._cast(inner)
            for inner in descendants(function.body)
        )

    def _joins_host_tensors(self, node: cst.Call) -> bool:
        """``torch.cat([torch.ones(b, 1), torch.zeros(b, t)])``, or of a list the function fills
        with ``strides.append(torch.full(...))``: tensors joined, none on the device, so the
        result is on the host too."""
        args = positional(node)
        if self.ctx.qualname(node.func) not in _JOINING or not args or keyword(node, "out") is not None:
            return False
        joined = self._joined(args[0].value)
        if isinstance(args[0].value, cst.Name):  # appended in a loop: each piece must come from a factory that can take device=
            return bool(joined) and all(value is not None and self._made_by_factory(value) for value in joined)
        return bool(joined) and not any(value is None or self.ctx.tensor_kind(value) == TENSOR for value in joined)

    def _made_by_factory(self, value: cst.BaseExpression) -> bool:
        """``torch.full(...)``, a view of one, or a name bound to one."""
        if isinstance(value, cst.Name):
            value = self.ctx.value_of(value.value)
        return value is not None and host_factory(self.ctx, _under_chain(self.ctx, value)) is not None

    def _joined(self, sequence: cst.BaseExpression) -> List[Optional[cst.BaseExpression]]:
        """The tensors a literal list holds, or those appended to a list the name ``sequence``
        is bound to (in this function); None for a starred element."""
        if isinstance(sequence, (cst.List, cst.Tuple)):
            return [None if isinstance(element, cst.StarredElement) else element.value for element in sequence.elements]
        if not isinstance(sequence, cst.Name) or not isinstance(self.ctx.value_of(sequence.value), cst.List) \
                or self.ctx.value_of(sequence.value).elements:
            return []
        return [
            positional(node)[0].value if len(positional(node)) == 1 else None
            for node in descendants(self.ctx.scope.function.node)
            if isinstance(node, cst.Call) and method_call(node, "append") is not None
            and is_name(node.func.value, sequence.value)
        ]

    def _copied_by_new_tensor(self, node: cst.Call) -> None:
        """``x.new_tensor(torch.rand(3))``: built on the host, then copied to ``x``'s device."""
        args = positional(node)
        if args:
            self._moved_later(args[0].value)

    def _fold(self, factory: cst.Call, moved: cst.BaseExpression, move_call: cst.Call, move: Move):
        """Put the move's device (and dtype) into ``factory``; ``moved`` is the factory or views
        of it. Returns the replacements and how safe they are (see ``fix_safety``)."""
        if not move.foldable or move.device is None:
            return (), None
        code_for = self.ctx.module.code_for_node
        if code_for(move_call).count("#") != code_for(moved).count("#"):
            return (), None  # a comment lives in the part the fix would drop
        name = factory_name(self.ctx.qualname(factory.func))
        if keyword(factory, "generator") is not None:
            return (), None  # a generator draws on its own device: a CPU one cannot fill a CUDA tensor
        if move.dtype is not None and name not in _DTYPE_EXACT:
            return (), None  # generating in another dtype gives other values, or fails (randn in long)
        random = name in RANDOM_FACTORIES or method_call(moved, *_RANDOM_INITIALISERS) is not None
        # a window's cosines computed on another device may differ in their last bits
        level = UNSAFE if random or name in WINDOWS or keyword(factory, "requires_grad") is not None else SAFE
        fixed = with_keyword(factory, "device", move.device)
        if move.dtype is not None:
            fixed = with_keyword(fixed, "dtype", move.dtype)
        if moved is not factory:
            fixed = moved.deep_replace(factory, fixed)
        if move_call.lpar:  # `(torch.zeros(n)\n .float()\n .to(device))`: the parentheses are the move's
            fixed = fixed.with_changes(lpar=move_call.lpar, rpar=move_call.rpar)
        return (Replacement(move_call, code_in_block(self.ctx.module, fixed, self.ctx.indentation())),), level
