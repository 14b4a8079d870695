"""Where a freshly built tensor goes: the first device tensor it is combined with.

Followed outward from the node being visited, through expressions that keep it a tensor
(``m.float()``, ``m[None]``, ``m * 2``, ``torch.triu(m)``), until it meets a ``TENSOR``
(an operand, a comparison, an index into one, an argument next to one, the receiver of a
method it is passed to) or reaches something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import libcst as cst

from torchlint.context.tensors import HOST, IDENTITY_OPS, TENSOR

# Methods after which the value is no longer a plain host tensor: moves and host exports.
_LEAVES_HOST = frozenset("to cuda type_as cpu numpy tolist item".split())


@dataclass(frozen=True)
class Flow:
    meets: Optional[cst.BaseExpression]  # the device tensor it is combined with
    top: cst.CSTNode  # the outermost expression it reached
    parent: Optional[cst.CSTNode]  # what holds ``top`` (e.g. the Assign it is stored by)


def follow(node: cst.CSTNode, ancestors: Sequence[cst.CSTNode], kind: Callable, qualname: Callable) -> Flow:
    current = node
    i = len(ancestors) - 1
    while i >= 0:
        parent = ancestors[i]
        grand = ancestors[i - 1] if i >= 1 else None
        step = 1
        if isinstance(parent, cst.Attribute) and parent.value is current:
            method = parent.attr.value
            if not (isinstance(grand, cst.Call) and grand.func is parent) or method in _LEAVES_HOST:
                return Flow(None, current, parent)
            if method.endswith("_") and not method.startswith("_"):
                return Flow(None, current, parent)  # buf.copy_(x): written in place, a host buffer
            met = _tensor_among(kind, (arg.value for arg in grand.args))
            if met is not None:
                return Flow(met, current, parent)
            step = 2
        elif isinstance(parent, cst.Subscript) and parent.value is current:
            pass
        elif isinstance(parent, cst.Index) and isinstance(grand, cst.SubscriptElement) and i >= 2:
            subscript = ancestors[i - 2]
            if isinstance(subscript, cst.Subscript) and kind(subscript.value) == TENSOR:
                return Flow(subscript.value, current, parent)
            return Flow(None, current, parent)
        elif isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is current else parent.left
            if kind(other) == TENSOR:
                return Flow(other, current, parent)
        elif isinstance(parent, cst.Comparison):
            if any(isinstance(c.operator, IDENTITY_OPS) for c in parent.comparisons):
                return Flow(None, current, parent)
            others = [parent.left, *(c.comparator for c in parent.comparisons)]
            met = _tensor_among(kind, (o for o in others if o is not current))
            if met is not None:
                return Flow(met, current, parent)
        elif isinstance(parent, cst.UnaryOperation) and not isinstance(parent.operator, cst.Not):
            pass
        elif isinstance(parent, cst.Element) and isinstance(grand, (cst.List, cst.Tuple)):
            # torch.cat([x, m]): only a list handed to a torch op combines its tensors.
            holder = ancestors[i - 2] if i >= 2 else None
            call = ancestors[i - 3] if i >= 3 else None
            if not (isinstance(holder, cst.Arg) and isinstance(call, cst.Call)
                    and (qualname(call.func) or "").startswith("torch.")):
                return Flow(None, current, parent)
            met = _tensor_among(kind, (e.value for e in grand.elements if e is not parent))
            if met is not None:
                return Flow(met, current, parent)
            step = 2
        elif isinstance(parent, cst.Arg) and parent.value is current and isinstance(grand, cst.Call):
            met = _tensor_among(kind, (arg.value for arg in grand.args if arg is not parent))
            name = qualname(grand.func) or ""
            if name.startswith("torch.") and kind(grand) in (TENSOR, HOST):
                if met is not None:
                    return Flow(met, current, parent)
                step = 2  # torch.triu(m): still the same host tensor, transformed
            elif isinstance(grand.func, cst.Attribute) and kind(grand.func.value) == TENSOR:
                return Flow(grand.func.value, current, parent)  # x.masked_fill(m, 0)
            else:
                return Flow(None, current, parent)
        elif isinstance(parent, cst.AugAssign) and parent.value is current and kind(parent.target) == TENSOR:
            return Flow(parent.target, current, parent)
        else:
            return Flow(None, current, parent)
        current = ancestors[i - step + 1] if step == 2 else parent
        i -= step
    return Flow(None, current, None)


def _tensor_among(kind: Callable, nodes) -> Optional[cst.BaseExpression]:
    for node in nodes:
        if kind(node) == TENSOR:
            return node
    return None


def device_name(node: cst.BaseExpression, kind: Callable) -> Optional[cst.Name]:
    """A name of a tensor inside ``node`` whose ``.device`` is the device ``node`` lives on
    (``x`` for ``self.proj(x)[:, 0]``), or None."""
    if isinstance(node, cst.Name):
        return node if kind(node) == TENSOR else None
    if isinstance(node, cst.Attribute):
        return device_name(node.value, kind)
    if isinstance(node, cst.Subscript):
        return device_name(node.value, kind)
    if isinstance(node, cst.Call):
        inner = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        for candidate in (*inner, *(arg.value for arg in node.args)):
            found = device_name(candidate, kind)
            if found is not None:
                return found
        return None
    if isinstance(node, cst.BinaryOperation):
        return device_name(node.left, kind) or device_name(node.right, kind)
    return None
