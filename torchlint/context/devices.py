"""Devices: which expressions name an accelerator, which calls move a tensor to one, and
which factory calls build a tensor in host memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import libcst as cst

from torchlint.context.factories import factory_name
from torchlint.context.keywords import keywords
from torchlint.context.tensors import HOST, TENSOR
from torchlint.rewrite import attribute
from torchlint.syntax import dotted_name, has_star_args, is_name, keyword, method_call, positional

# Words of a name that holds a device (`device`, `self.device`, `local_rank`, `gpu_id`); not
# `ranking` or `development`.
_DEVICE_WORDS = frozenset("device devices dev gpu gpus cuda rank".split())
# Helpers that move their first argument to a device (accelerate's `send_to_device`, ...).
_MOVING_HELPERS = frozenset({"to_device", "move_to_device", "send_to_device", "to_cuda"})


def host_factory(ctx, node: cst.CSTNode) -> Optional[str]:
    """``randn`` for a call of a tensor factory (or legacy constructor) that picks no device."""
    if not isinstance(node, cst.Call):
        return None
    name = factory_name(ctx.qualname(node.func))
    if name is None or keyword(node, "device") or keyword(node, "out") or any(arg.star == "**" for arg in node.args):
        return None
    return name


def _last_identifier(node: cst.BaseExpression) -> Optional[str]:
    """``device`` of ``device``, ``self.device``, ``state[torchbearer.DEVICE]``, ``cfg["device"]``."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            return str(key.evaluated_value)
        node = key
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def is_device(ctx, node: cst.BaseExpression) -> bool:
    """Does ``node`` name an accelerator device (not the CPU, not a dtype)?"""
    if isinstance(node, cst.Integer):
        return True
    if names_cpu(ctx, node):
        return False
    if isinstance(node, (cst.SimpleString, cst.Call)):
        return isinstance(node, cst.SimpleString) or ctx.qualname(node.func) == "torch.device"
    identifier = _last_identifier(node)
    return identifier is not None and (
        "device" in identifier.lower() or not _DEVICE_WORDS.isdisjoint(identifier.lower().split("_"))
    )


def _cuda_tensor_type(ctx, node: cst.BaseExpression, depth: int = 0) -> bool:
    """``torch.cuda.FloatTensor``, or a name bound to one on some path (``Tensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor``): ``x.type(Tensor)`` moves ``x``."""
    if isinstance(node, cst.Name) and depth < 3:
        value = ctx.value_of(node.value) or ctx.global_value(node.value)
        return value is not None and _cuda_tensor_type(ctx, value, depth + 1)
    if isinstance(node, cst.IfExp):
        return _cuda_tensor_type(ctx, node.body, depth) or _cuda_tensor_type(ctx, node.orelse, depth)
    name = ctx.qualname(node) or ""
    return name.startswith("torch.cuda.") and name.endswith("Tensor")


def names_cpu(ctx, node: cst.BaseExpression) -> bool:
    """Does ``node`` name the CPU: ``"cpu"``, ``torch.device("cpu")``, ``cpu_device``?"""
    if isinstance(node, cst.SimpleString):
        return str(node.evaluated_value).startswith("cpu")
    if isinstance(node, cst.Call):
        return ctx.qualname(node.func) == "torch.device" and bool(node.args) and names_cpu(ctx, node.args[0].value)
    identifier = _last_identifier(node)
    return identifier is not None and "cpu" in identifier.lower().split("_")


# Arguments torch APIs take in host memory (name, position; None: keyword only): lengths that
# size the work, and the inputs of `torch.histogram`, which has no CUDA kernel.
_HOST_ARGUMENTS = {
    "torch.nn.utils.rnn.pack_padded_sequence": (("lengths", 1),),
    "torch.nn.functional.ctc_loss": (("input_lengths", 2), ("target_lengths", 3)),
    "torch.histogram": (("input", 0), ("weight", None)),
    "torch.histogramdd": (("input", 0), ("weight", None)),
}


def host_arguments(qualname: Callable, call: cst.Call) -> Tuple[cst.BaseExpression, ...]:
    """The arguments ``call`` passes where the callee takes host values (``pack_padded_sequence``'s
    lengths, ``ctc_loss``'s input and target lengths, what ``torch.histogram`` counts)."""
    passed = []
    args = positional(call)
    for name, position in _HOST_ARGUMENTS.get(qualname(call.func) or "", ()):
        named = keyword(call, name)
        if named is not None:
            passed.append(named.value)
        elif position is not None and len(args) > position:
            passed.append(args[position].value)
    return tuple(passed)


def waiting_copy_to_host(ctx, node: cst.Call) -> Optional[cst.Attribute]:
    """The ``.to`` of ``t.to("cpu")``, ``t.to(torch.device("cpu"))``: a copy to the host that
    waits for ``t`` (not one with ``non_blocking=True``, which does not)."""
    method = method_call(node, "to")
    args = positional(node) if method is not None else ()
    if len(args) != 1 or not names_cpu(ctx, args[0].value):
        return None
    non_blocking = keyword(node, "non_blocking")
    return None if non_blocking is not None and is_name(non_blocking.value, "True") else method


@dataclass(frozen=True)
class Move:
    """A device move: where to, the dtype it also sets, and whether it can be folded."""

    device: Optional[cst.BaseExpression]
    dtype: Optional[cst.BaseExpression]
    foldable: bool


def moved_by_helper(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The value ``to_device(value, ...)`` (or another moving helper) moves, if ``call`` is one."""
    func = call.func
    called = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if called not in _MOVING_HELPERS:
        return None
    args = positional(call)
    return args[0].value if args else None


def device_move(ctx, call: cst.Call) -> Optional[Move]:
    """The move that ``x.to(...)`` / ``x.cuda(...)`` / ``x.type_as(t)`` / ``x.type(t.type())`` /
    ``x.type(torch.cuda.FloatTensor)`` makes, or None if it is no device move. A move to another
    tensor's device (``x.to(t)``) cannot be folded: it also takes ``t``'s dtype."""
    method = method_call(call, "to", "cuda", "type_as", "type")
    if method is None:
        return None
    if has_star_args(call):  # x.to(**self.tpdv), tpdv = dict(dtype=torch.float32, device=device)
        spread = keywords(ctx, call) if method.attr.value == "to" else None
        device = spread.get("device") if spread is not None else None
        return Move(device, spread.get("dtype"), False) if device is not None and is_device(ctx, device) else None
    args = positional(call)
    if method.attr.value == "type":
        # x.type(t.type()): t's type string names its device too (`torch.cuda.FloatTensor`)
        if len(call.args) != 1 or len(args) != 1:
            return None
        typed = method_call(args[0].value, "type") is not None and not args[0].value.args
        return Move(None, None, False) if typed or _cuda_tensor_type(ctx, args[0].value) else None
    if method.attr.value == "type_as":
        if len(call.args) != 1 or len(args) != 1:
            return None
        other = args[0].value
        if ctx.tensor_kind(other) == HOST:
            return None  # x.type_as(host_tensor): a dtype cast, on the host
        # Folding names `other` twice: only for a plain name, which is cheap and stable to re-read.
        return Move(attribute(other, "device"), attribute(other, "dtype"), dotted_name(other) is not None)
    if method.attr.value == "cuda":
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
        if args and ctx.tensor_kind(args[0].value) in (TENSOR, HOST) and len(call.args) == 1:
            return Move(None, None, False)  # x.to(t): t's device and dtype
        if not args or not is_device(ctx, args[0].value):
            return None
        device = args[0].value
        if len(args) > 1:
            dtype = args[1].value
    elif not is_device(ctx, device):
        return None
    foldable = keyword(call, "copy") is None and keyword(call, "memory_format") is None and len(args) <= 2
    return Move(device, dtype, foldable)
