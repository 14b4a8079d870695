"""TL102 factory-meets-device-tensor: a tensor built on the host in a hot path, then
combined with a tensor on the model's device.

The freshly built tensor is followed outward from the factory call, through expressions
that keep it a tensor (``m.float()``, ``m[None]``, ``m * 2``, ``torch.triu(m)``), until it
meets a ``TENSOR`` (an operand, a comparison, an index into one, an argument next to one,
the receiver of a method it is passed to, a slice of one it is written into) or reaches
something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, FrozenSet, Optional, Sequence

import libcst as cst

from torchlint.context import TENSOR
from torchlint.context.devices import host_arguments, host_factory
from torchlint.context.factories import (
    DATA_FACTORIES, FACTORIES, builds_empty, constant_data, data_argument, one_dimensional,
)
from torchlint.context.scopes import in_model_code
from torchlint.context.tensors import HOST, IDENTITY_OPS
from torchlint.rewrite import Replacement, attribute, code_in_block, with_keyword
from torchlint.rules.base import Invalid, Rule, Valid
from torchlint.syntax import assigned_name, comprehension_targets, method_call


# Uses of a host tensor that show it is meant for the host, or moved (TL101's case).
_HOST_OR_MOVE = frozenset("cpu numpy tolist item to cuda type_as".split())
# Operations whose output size depends on the data: on the device they wait for it to size their
# output, so computing them from host data on the host and copying the result is the right order.
_SIZED_BY_DATA = frozenset("repeat_interleave nonzero unique unique_consecutive masked_select argwhere".split())
# Tensor methods whose arguments are sizes, dimensions or counts: read as Python ints.
_SIZE_METHODS = frozenset(
    "view reshape expand repeat tile new_zeros new_ones new_empty new_full permute transpose narrow "
    "unflatten flatten unsqueeze squeeze split chunk size resize_".split()
)


@dataclass(frozen=True)
class _Flow:
    meets: Optional[cst.BaseExpression]  # the device tensor it is combined with
    top: cst.CSTNode  # the outermost expression it reached
    parent: Optional[cst.CSTNode]  # what holds ``top`` (e.g. the Assign it is stored by)


def _element(subscript: cst.Subscript, kind: Callable) -> bool:
    """``v[i]``: one integer index, which takes one element of a vector."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    index = subscript.slice[0].slice.value
    return not (isinstance(index, cst.Name) and index.value == "None") and kind(index) not in (TENSOR, HOST) \
        and not isinstance(index, (cst.Ellipsis, cst.Tuple, cst.List))


def _follow(node: cst.CSTNode, ancestors: Sequence[cst.CSTNode], kind: Callable, qualname: Callable,
            copied_anyway: Callable[[cst.BaseExpression], bool], vector: bool = False) -> _Flow:
    """Where the host tensor ``node`` goes; ``vector``: it is one-dimensional, so an element
    of it is a 0-d tensor, which mixes with device tensors without a copy. ``copied_anyway``
    tells an index that crosses to the device whatever happens to this one."""
    current = node
    i = len(ancestors) - 1
    while i >= 0:
        parent = ancestors[i]
        grand = ancestors[i - 1] if i >= 1 else None
        step = 1
        if isinstance(parent, cst.Attribute) and parent.value is current:
            method = parent.attr.value
            if not (isinstance(grand, cst.Call) and grand.func is parent) or method in _HOST_OR_MOVE:
                return _Flow(None, current, parent)
            if method == "type" and any(method_call(arg.value, "type") is not None for arg in grand.args):
                return _Flow(None, current, parent)  # m.type(x.type()): moved to x's device (TL101's case)
            if method in _SIZED_BY_DATA:
                return _Flow(None, current, parent)
            if method.endswith("_") and not method.startswith("_"):
                return _Flow(None, current, parent)  # buf.copy_(x): written in place, a host buffer
            met = _tensor_among(kind, (arg.value for arg in grand.args))
            if met is not None:
                return _Flow(met, current, parent)
            step = 2
        elif isinstance(parent, cst.Subscript) and parent.value is current:
            if isinstance(grand, (cst.AssignTarget, cst.AugAssign)) and grand.target is parent:
                statement = ancestors[i - 2] if isinstance(grand, cst.AssignTarget) and i >= 2 else grand
                value = getattr(statement, "value", None)  # out[i] = self.head(x[i]): copied to the host per write
                return _Flow(value if value is not None and kind(value) == TENSOR else None, current, parent)
            if vector and _element(parent, kind):
                return _Flow(None, current, parent)
        elif isinstance(parent, cst.Index) and isinstance(grand, cst.SubscriptElement) and i >= 2:
            subscript = ancestors[i - 2]
            if isinstance(subscript, cst.Subscript) and kind(subscript.value) == TENSOR and not any(
                isinstance(element.slice, cst.Index) and copied_anyway(element.slice.value) for element in subscript.slice
            ):  # x[rows, torch.tensor(frame_ids)]: the host's data is copied over anyway
                return _Flow(subscript.value, current, parent)
            return _Flow(None, current, parent)
        elif isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is current else parent.left
            if kind(other) == TENSOR:
                return _Flow(other, current, parent)
        elif isinstance(parent, cst.Comparison):
            if any(isinstance(c.operator, IDENTITY_OPS) for c in parent.comparisons):
                return _Flow(None, current, parent)
            others = [parent.left, *(c.comparator for c in parent.comparisons)]
            met = _tensor_among(kind, (o for o in others if o is not current))
            if met is not None:
                return _Flow(met, current, parent)
        elif isinstance(parent, cst.UnaryOperation) and not isinstance(parent.operator, cst.Not):
            pass
        elif isinstance(parent, cst.Element) and isinstance(grand, (cst.List, cst.Tuple)):
            # torch.cat([x, m]): only a list handed to a torch op combines its tensors.
            holder = ancestors[i - 2] if i >= 2 else None
            call = ancestors[i - 3] if i >= 3 else None
            if not (isinstance(holder, cst.Arg) and isinstance(call, cst.Call)
                    and (qualname(call.func) or "").startswith("torch.")):
                return _Flow(None, current, parent)
            met = _tensor_among(kind, (e.value for e in grand.elements if e is not parent))
            if met is not None:
                return _Flow(met, current, parent)
            step = 2
        elif isinstance(parent, cst.Arg) and parent.value is current and isinstance(grand, cst.Call):
            if any(argument is current for argument in host_arguments(qualname, grand)):
                return _Flow(None, current, parent)  # ctc_loss(..., input_lengths, ...): taken on the host
            met = _tensor_among(kind, (arg.value for arg in grand.args if arg is not parent))
            name = qualname(grand.func) or ""
            if name.startswith("torch.") and name[len("torch."):] in _SIZED_BY_DATA and met is None:
                return _Flow(None, current, parent)
            if name.startswith("torch.") and kind(grand) in (TENSOR, HOST):
                if met is not None:
                    return _Flow(met, current, parent)
                step = 2  # torch.triu(m): still the same host tensor, transformed
            elif isinstance(grand.func, cst.Attribute) and kind(grand.func.value) == TENSOR:
                if grand.func.attr.value in _SIZE_METHODS:
                    return _Flow(None, current, parent)  # x.view(n, m.prod()): a size, read on the host
                return _Flow(grand.func.value, current, parent)  # x.masked_fill(m, 0)
            else:
                return _Flow(None, current, parent)
        elif isinstance(parent, cst.AugAssign) and parent.value is current and kind(parent.target) == TENSOR:
            return _Flow(parent.target, current, parent)
        elif isinstance(parent, cst.Assign) and parent.value is current and len(parent.targets) == 1 and isinstance(
            parent.targets[0].target, cst.Subscript
        ) and kind(parent.targets[0].target.value) == TENSOR:
            return _Flow(parent.targets[0].target.value, current, parent)  # gain[2:6] = host: copied into it
        else:
            return _Flow(None, current, parent)
        current = ancestors[i - step + 1] if step == 2 else parent
        i -= step
    return _Flow(None, current, None)


def _tensor_among(kind: Callable, nodes) -> Optional[cst.BaseExpression]:
    for node in nodes:
        if kind(node) == TENSOR:
            return node
    return None


def _device_name(node: cst.BaseExpression, is_tensor: Callable[[cst.BaseExpression], bool]) -> Optional[cst.Name]:
    """A name of a tensor inside ``node`` whose ``.device`` is the device ``node`` lives on
    (``x`` for ``self.proj(x)[:, 0]``), or None. ``is_tensor`` asks for evidence: a loss
    parameter named ``eps`` may well be a float, and ``eps.device`` would fail."""
    if isinstance(node, cst.Name):
        return node if is_tensor(node) else None
    if isinstance(node, (cst.Attribute, cst.Subscript)):
        return _device_name(node.value, is_tensor)
    if isinstance(node, cst.Call):
        inner = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        for candidate in (*inner, *(arg.value for arg in node.args)):
            found = _device_name(candidate, is_tensor)
            if found is not None:
                return found
        return None
    if isinstance(node, cst.BinaryOperation):
        return _device_name(node.left, is_tensor) or _device_name(node.right, is_tensor)
    return None


def _is_shape(node: cst.BaseExpression) -> bool:
    """``x.shape`` or ``x.size()``."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    return isinstance(node, cst.Call) and not node.args and method_call(node, "size") is not None


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
        "or an argument of its method (`x.masked_fill(mask, 0)`), or a buffer a device tensor is written into "
        "(`out[i] = hidden[i].max(0).values`: a copy to the host per write). The result is followed through "
        "assignments in the same function (`mask = torch.ones(x.shape[0])` ... `x * mask`) and "
        "through tensor-preserving steps (`.bool()`, `[None]`, `torch.triu(...)`), also when such a "
        "step rebinds the name (`idx = idx[..., None]` ... `x[idx, keep]`). As an index into a "
        "device tensor, also in training-loop and step code of a file that uses CUDA "
        "(`queue[torch.randperm(n)]`, `buffer[torch.randint(0, size, (b,))]`): the index is copied "
        "to the device every step."
    )
    why = (
        "Without `device=`, the factory fills a tensor in host memory on every call. Indexing a "
        "CUDA tensor with it makes PyTorch copy the index to the GPU first: a blocking copy from "
        "pageable memory, which waits for every queued kernel. Combined by arithmetic with a CUDA "
        "tensor it fails outright (`Expected all tensors to be on the same device`), so such code "
        "only ever ran on the CPU. Created with `device=x.device`, the values are made by a kernel "
        "on the tensor's own device."
    )
    example = Invalid("""
        import torch
        from torch import nn

        class Masked(nn.Module):
            def forward(self, x, lengths):
                mask = torch.arange(x.shape[1]) < lengths[:, None]  # expect: TL102
                return x * mask[..., None]
    """)
    use_instead = Valid("""
        import torch
        from torch import nn

        class Masked(nn.Module):
            def forward(self, x, lengths):
                mask = torch.arange(x.shape[1], device=lengths.device) < lengths[:, None]
                return x * mask[..., None]
    """)
    fix_safety = (
        "Unsafe: `device=` names the first tensor the result meets (`device=x.device`). That "
        "changes where the tensor lives, which is what the code needs on a GPU, but random "
        "factories then draw from the device's generator, and any other use of the CPU tensor "
        "(printing, numpy) now sees a device tensor. The tensor named must be shown to be one "
        "(used like a tensor, annotated so, or indexed along several axes): a loss parameter "
        "`eps` that is a float has no `.device`, so there is no fix then. Not reported when the tensor is meant for the "
        "host (`.cpu()`, `.numpy()`, `.tolist()`, `.item()` on it, or a size handed to "
        "`x.view(...)`, `x.reshape(...)`, `x.expand(...)` and the like), when only elements of a "
        "vector meet device tensors (`perm[i]` of `perm = torch.randperm(n)` is 0-d, and a 0-d CPU "
        "tensor mixes with CUDA tensors without a copy), when it indexes a device tensor together "
        "with an index of data the host built, or is such an index itself (`x[rows, "
        "torch.tensor(frame_ids)]`: that data crosses to the device anyway), when it feeds an "
        "operation whose output size depends on the data (`torch.repeat_interleave(torch.arange(b), "
        "torch.tensor(counts))`, `nonzero`, `unique`, `masked_select`: on the device it would wait "
        "for the data to size its output), when it is moved "
        "(TL101, also `m.type(x.type())`), for "
        "`*_like`/`new_*` factories (they inherit the device), for an empty placeholder "
        "(`torch.empty([0])`: no data to copy), when `device=` or `**kwargs` is "
        "passed, for `torch.tensor(t)` of a tensor `t` (it keeps `t`'s device), for 0-d "
        "`torch.tensor(1.0)`, `torch.tensor(x.shape[0])` (a CPU scalar mixes with CUDA tensors without a copy), and for "
        "constant literals, which TL103 reports. Legacy constructors get no fix (they cannot take "
        "a CUDA device)."
    )
    valid = (
        Valid("""
            import math
            import torch
            from torch import nn

            def timestep_embedding(timesteps, dim):
                emb = math.log(10000) / (dim // 2 - 1)  # a float: the name holds a tensor only later
                emb = torch.exp(torch.arange(dim // 2, dtype=torch.float32) * -emb)
                emb = emb.to(device=timesteps.device)  # moved before it meets a device tensor: TL101's case
                emb = timesteps.float()[:, None] * emb[None, :]
                return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)

            class Denoiser(nn.Module):
                def forward(self, x, t):
                    return self.net(x + self.proj(timestep_embedding(t, 128)))
        """),
        Valid("""
            import torch
            import torch.nn.functional as F

            def ctc_loss(logits, targets, target_lengths):
                input_lengths = logits.shape[1] * torch.ones(logits.shape[0], dtype=torch.int32)  # lengths stay on the host
                log_probs = F.log_softmax(logits.permute(1, 0, 2), dim=-1)
                return F.ctc_loss(log_probs, targets, input_lengths, target_lengths)
        """),
        Valid("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Attention(nn.Module):
                def forward(self, query, key, value):
                    return F.multi_head_attention_forward(
                        query, key, value, self.embed_dim, self.num_heads,
                        torch.empty([0]),  # no packed weight: an empty placeholder the kernel ignores
                        torch.cat((self.q_proj.bias, self.k_proj.bias, self.v_proj.bias)),
                        None, None, False, 0.0, self.out_proj.weight, self.out_proj.bias,
                    )
        """),
        Valid("""
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def forward(self, x, past):
                    mask = torch.full((x.size(1), x.size(1)), float("-inf")).triu(1)
                    mask = mask.to(x.dtype)  # a cast: the mask stays on the host
                    mask = torch.cat([torch.zeros(x.size(1), past), mask], dim=-1)
                    return self.attend(x, mask.to(x.device))
        """),
        Valid("""
            import torch
            def listwise_loss(logits, docs_per_query: list, max_docs: int):
                matrix = torch.full((len(docs_per_query), max_docs), -1e16, device=logits.device)
                # sized by the data: on the device it would wait for the counts to size its output
                rows = torch.repeat_interleave(torch.arange(len(docs_per_query)), torch.tensor(docs_per_query))
                matrix[rows, torch.cat([torch.arange(n) for n in docs_per_query])] = logits
                return matrix.logsumexp(-1).mean()
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, inputs, samples, cov):
                    frames = torch.tensor([s.frame for s in samples], dtype=torch.int64)
                    rows = torch.arange(len(inputs))
                    keys = inputs[rows, frames]
                    eye = torch.eye(cov.shape[0]).type(cov.type())
                    return keys, cov * eye
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    mask = torch.ones_like(x)
                    return x * mask
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x.view(x.size(0), torch.tensor(x.size()[1:]).prod())
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    perm = torch.randperm(x.shape[-1])
                    for i in range(3):
                        x[:, perm[i]] = x[:, perm[i + 1]]
                    c = torch.randint(1, x.shape[1], (1,))[0]
                    return x * c / torch.tensor(x.shape[0])  # one number: a 0-d tensor
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * x.new_ones(x.shape[0])
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    idx = torch.arange(x.shape[0]).to(x.device)
                    return x[idx]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    counts = torch.zeros(10)
                    counts += x.sum()
                    return counts.numpy()
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return torch.where(x > 0, x, torch.tensor(0.0))
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, **kw):
                    return x * torch.ones(x.shape[0], **kw)
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x[torch.tensor(self.index)]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return x * torch.tensor([0.5, 2.0])
        """),
        Valid("""
            import torch
            def build(x):
                mask = torch.ones(x.shape[0])
                return x * mask
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    mask = torch.ones(3)
                    mask = x > 0
                    return x * mask
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    steps = torch.arange(4)
                    return [self.blocks[i](x) for i in steps.tolist()]
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x, shape=torch.zeros(2)):
                    return x
        """),
        Valid("""
            import torch
            def psnr_loss(preds, target, base: float = 10.0):
                return (preds - target).pow(2).mean().log() * (10 / torch.log(torch.tensor(base)))
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    buf = torch.empty(x.shape)
                    buf.copy_(x)
                    return buf
        """),
        Valid("""
            import torch
            class Net(nn.Module):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    return x * torch.ones(x.shape[0])
        """),
        Valid("""
            import torch
            class M(nn.Module):
                def causal(self, n):
                    mask = torch.triu(torch.ones(n, n), diagonal=1)
                    return mask.masked_fill(mask == 1, float('-inf'))
                def forward(self, x):
                    return x + self.causal(x.shape[1]).to(x.device)
        """),
        Valid("""
            import torch
            class Patchify(nn.Module):
                def forward(self, img):
                    valid = torch.ones(img.shape[0], dtype=torch.bool)
                    return img, valid
        """),
    )
    invalid = (
        Invalid("""
            import torch
            from torch import nn

            class MaxPool(nn.Module):
                def forward(self, hidden, lengths):
                    out = torch.zeros(hidden.shape[0], hidden.shape[-1])  # expect: TL102
                    for i in range(hidden.shape[0]):
                        out[i] = hidden[i, : lengths[i]].max(0).values  # a device-to-host copy per row
                    return out
        """, fixed="""
            import torch
            from torch import nn

            class MaxPool(nn.Module):
                def forward(self, hidden, lengths):
                    out = torch.zeros(hidden.shape[0], hidden.shape[-1], device=hidden.device)
                    for i in range(hidden.shape[0]):
                        out[i] = hidden[i, : lengths[i]].max(0).values  # a device-to-host copy per row
                    return out
        """),
        Invalid("""
            import torch

            def train(model, loader, optimizer, size):
                queue = torch.zeros(size, 3, 64, 64, device="cuda")
                for x in loader:
                    x = x.cuda()
                    idx = torch.randperm(size)  # expect: TL102
                    replayed = queue[idx][: x.size(0)]  # a host index into a device tensor, every step
                    loss = model(torch.cat([x, replayed])).mean()
                    loss.backward()
                    optimizer.step()
                    queue[: x.size(0)] = x.detach()
        """, fixed="""
            import torch

            def train(model, loader, optimizer, size):
                queue = torch.zeros(size, 3, 64, 64, device="cuda")
                for x in loader:
                    x = x.cuda()
                    idx = torch.randperm(size, device=queue.device)
                    replayed = queue[idx][: x.size(0)]  # a host index into a device tensor, every step
                    loss = model(torch.cat([x, replayed])).mean()
                    loss.backward()
                    optimizer.step()
                    queue[: x.size(0)] = x.detach()
        """),
        Invalid("""
            import torch
            from torch import nn
            from torch.autograd import Variable

            class Noisy(nn.Module):
                def forward(self, x):
                    noise = Variable(torch.randn(x.size()))  # expect: TL102
                    return x + noise
        """, fixed="""
            import torch
            from torch import nn
            from torch.autograd import Variable

            class Noisy(nn.Module):
                def forward(self, x):
                    noise = Variable(torch.randn(x.size(), device=x.device))
                    return x + noise
        """),
        Invalid("""
            import torch
            from torch import nn

            class PatchDropout(nn.Module):
                def forward(self, x, keep):
                    batch_indices = torch.arange(x.size(0))  # expect: TL102
                    batch_indices = batch_indices[..., None]  # followed under its new binding
                    return x[batch_indices, keep]
        """, fixed="""
            import torch
            from torch import nn

            class PatchDropout(nn.Module):
                def forward(self, x, keep):
                    batch_indices = torch.arange(x.size(0), device=x.device)
                    batch_indices = batch_indices[..., None]  # followed under its new binding
                    return x[batch_indices, keep]
        """),
        Invalid("""
            import torch
            class YoloLoss:
                def __call__(self, preds, targets):
                    gain = torch.ones(7, device=targets.device)
                    for i in range(3):
                        gain[2:6] = torch.tensor(preds[i].shape)[[3, 2, 3, 2]]  # expect: TL102
                    return targets * gain
        """, fixed="""
            import torch
            class YoloLoss:
                def __call__(self, preds, targets):
                    gain = torch.ones(7, device=targets.device)
                    for i in range(3):
                        gain[2:6] = torch.tensor(preds[i].shape, device=gain.device)[[3, 2, 3, 2]]
                    return targets * gain
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F

            def alignment_loss(log_p, lengths):
                total = 0.0
                for b in range(log_p.shape[0]):
                    target = torch.arange(1, lengths[b] + 1)  # expect: TL102
                    cur = F.log_softmax(log_p[b, :, : lengths[b] + 1], dim=-1)
                    total = total + (cur[:, target] * 1.0).sum()
                return total
        """),  # no fix: `cur` is first bound after the factory, so `cur.device` would fail
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, features, targets):
                    size = min([t.size(1) for t in targets])
                    index = torch.arange(size).float() * self.ratio  # expect: TL102
                    return [t[:, index.long()] for t in targets]
        """),  # no fix: the `t` that meets it is the comprehension's own, unbound where the factory runs
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    mask = torch.ones(x.shape[0])  # expect: TL102
                    return x * mask
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    mask = torch.ones(x.shape[0], device=x.device)
                    return x * mask
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x, lengths):
                    mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]  # expect: TL102
                    return x * mask[..., None]
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, x, lengths):
                    mask = torch.arange(x.shape[1], device=lengths.device)[None, :] < lengths[:, None]
                    return x * mask[..., None]
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    keep = torch.ones(x.shape[1], dtype=torch.bool)  # expect: TL102
                    keep[0] = False
                    return x[:, keep]
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    keep = torch.ones(x.shape[1], dtype=torch.bool, device=x.device)
                    keep[0] = False
                    return x[:, keep]
        """),
        Invalid("""
            import torch
            import torch.nn.functional as F
            def my_loss(pred, target):
                return F.cross_entropy(pred, target, weight=torch.ones(pred.shape[1]))  # expect: TL102
        """, fixed="""
            import torch
            import torch.nn.functional as F
            def my_loss(pred, target):
                return F.cross_entropy(pred, target, weight=torch.ones(pred.shape[1], device=pred.device))
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, scores):
                    causal = torch.triu(torch.ones(scores.shape[-1], scores.shape[-1]), diagonal=1).bool()  # expect: TL102
                    return scores.masked_fill(causal, float('-inf'))
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, scores):
                    causal = torch.triu(torch.ones(scores.shape[-1], scores.shape[-1], device=scores.device), diagonal=1).bool()
                    return scores.masked_fill(causal, float('-inf'))
        """),
        Invalid("""
            import torch
            class Shuffle(nn.Module):
                def forward(self, x):
                    if self.training:
                        B, H, W, C = x.shape
                        r = torch.randperm(H * W)  # expect: TL102
                        x = x.reshape(B, -1, C)
                        x = x[:, r, :].reshape(B, H, W, -1)
                    return x
        """, fixed="""
            import torch
            class Shuffle(nn.Module):
                def forward(self, x):
                    if self.training:
                        B, H, W, C = x.shape
                        r = torch.randperm(H * W, device=x.device)
                        x = x.reshape(B, -1, C)
                        x = x[:, r, :].reshape(B, H, W, -1)
                    return x
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return self.head(x[torch.randperm(x.shape[0])])  # expect: TL102
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    return self.head(x[torch.randperm(x.shape[0], device=x.device)])
        """),
        Invalid("""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    size = torch.tensor(x.shape[2:])  # expect: TL102
                    return self.proj(x) / size.prod()
        """, fixed="""
            import torch
            class M(nn.Module):
                def forward(self, x):
                    size = torch.tensor(x.shape[2:], device=x.device)
                    return self.proj(x) / size.prod()
        """),
    )

    def __init__(self, ctx, sink) -> None:
        super().__init__(ctx, sink)
        # (function, name) -> (factory call, the expression the name was assigned, its indentation,
        # the names bound when the factory ran, whether the name holds a vector)
        self._stored = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not self._builds_on_host(node):
            return
        vector = one_dimensional(host_factory(self.ctx, node), node)
        flow = _follow(node, self.ctx.ancestors, self.ctx.tensor_kind, self.ctx.qualname, self._copied_anyway, vector)
        if flow.meets is not None:
            self._flag(node, flow, self.ctx.indentation(), self.ctx.bound_names())
            return
        target = assigned_name(flow.parent, flow.top)
        if target is not None:
            self._stored[(self.ctx.scope.function, target)] = (
                node, flow.top, self.ctx.indentation(), self.ctx.bound_names(), vector and flow.top is node)

    def visit_Name(self, node: cst.Name) -> None:
        if not self._stored:
            return
        stored = self._stored.get((self.ctx.scope.function, node.value))
        if stored is None or self.ctx.value_of(node.value) is not stored[1]:
            return
        if self.ctx.uses_member(node.value, _HOST_OR_MOVE):
            return
        flow = _follow(
            node, self.ctx.ancestors, self.ctx.tensor_kind, self.ctx.qualname, self._copied_anyway, stored[4]
        )
        if flow.meets is not None:  # a comprehension's own names do not exist where the factory runs
            self._flag(stored[0], flow, stored[2], stored[3] - comprehension_targets(self.ctx.ancestors))
            return
        target = assigned_name(flow.parent, flow.top)
        if target is not None and flow.top is not node:  # `idx = idx[..., None]`: followed under its new binding
            self._stored[(self.ctx.scope.function, target)] = (stored[0], flow.top, stored[2], stored[3], False)

    def _copied_anyway(self, index: cst.BaseExpression) -> bool:
        """A host index of data the host built (``torch.tensor(frame_ids)``): it crosses to the
        device whatever the factory next to it does."""
        value = self.ctx.value_of(index.value) if isinstance(index, cst.Name) else index
        return self.ctx.tensor_kind(index) == HOST and host_factory(self.ctx, value) in DATA_FACTORIES

    def _builds_on_host(self, node: cst.Call) -> bool:
        factory = host_factory(self.ctx, node)
        if factory not in FACTORIES or self.ctx.in_definition() or self.ctx.in_rare_path():
            return False
        if builds_empty(factory, node):
            return False  # torch.empty([0]): a placeholder with no data to copy
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
        if isinstance(data, cst.Subscript):  # x.shape[2:], not x.shape[0] (one number: a 0-d tensor)
            if all(isinstance(element.slice, cst.Index) for element in data.slice):
                return False
            data = data.value
        return _is_shape(data) and self.ctx.tensor_kind(data) != TENSOR  # x.shape of whatever x is

    def _flag(self, factory: cst.Call, flow: "_Flow", indentation, bound: FrozenSet[str]) -> None:
        """Report ``factory``; the fix names a tensor's device only if that name was bound
        where the factory runs (``bound``), not first assigned after it. In model code, or, as
        an index into a device tensor (``buffer[torch.randint(0, n, (b,))]``) in a file that uses
        CUDA, in any code that runs every step: the index is copied to the device each time."""
        name = _device_name(flow.meets, self.ctx.array_like)
        fix = ()
        if name is not None and name.value in bound:
            fixed = with_keyword(factory, "device", attribute(cst.Name(name.value), "device"))
            fix = (Replacement(factory, code_in_block(self.ctx.module, fixed, indentation)),)
        indexes_on_device = isinstance(flow.parent, cst.Index) and self.ctx.uses_cuda
        self.report(factory, replacements=fix, hot_when=None if indexes_on_device else in_model_code)
