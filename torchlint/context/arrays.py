"""numpy arrays on their way to ``torch.from_numpy``: the memory layout they arrive with.

``torch.from_numpy`` shares the array's memory and keeps its strides. Walking back from its
argument (through reassignments, ``self`` attributes and the return values of the file's
own functions), the first operations met are the last ones applied:

- a reversal (``a[:, ::-1]``, ``np.flip``) leaves negative strides, which ``from_numpy``
  rejects (``REVERSED``);
- a permutation (``.transpose(2, 0, 1)``, ``np.moveaxis``, ``.T``) leaves a view that is
  not C-contiguous, and so is the tensor (``PERMUTED``);
- ``np.ascontiguousarray`` and ``.copy()`` make a fresh C-contiguous array; ``astype``,
  ``np.array`` and arithmetic make a fresh array that keeps the source's axis order
  (numpy's ``order="K"``): no negative strides, but a permuted layout stays permuted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterator, Optional, Tuple

import libcst as cst

from torchlint.context.dataflow import MAX_TRAIL
from torchlint.rewrite import Replacement, code_in_block
from torchlint.syntax import dotted_name, keyword, literal_value, method_call, positional, string_key
from torchlint.walker import simple_statements

REVERSED, PERMUTED = "reversed", "permuted"


@dataclass(frozen=True)
class Layout:
    """How an array arrives at ``torch.from_numpy``: ``REVERSED``, ``PERMUTED`` or None, and
    whether that depends on a branch (``if flip: img = img[:, ::-1]``): on the other path the
    array arrives as it was, sharing memory with the caller's. ``parameter``: the parameter of
    the current function the trail ends at, nothing met on the way having decided the layout
    (``def to_tensor(a): return torch.from_numpy(a)``): then what the callers pass does."""

    kind: Optional[str]
    conditional: bool = False
    parameter: Optional[str] = None

# numpy functions and array methods that return a view with the same strides, permuted.
_PERMUTING_FUNCTIONS = frozenset({"numpy.transpose", "numpy.swapaxes", "numpy.moveaxis", "numpy.rollaxis"})
_PERMUTING_METHODS = frozenset({"transpose", "swapaxes"})
# numpy functions that return a view with a negative stride.
_REVERSING_FUNCTIONS = frozenset({"numpy.flip", "numpy.flipud", "numpy.fliplr", "numpy.rot90"})
# Views that keep the layout they are taken from.
_VIEW_FUNCTIONS = frozenset({"numpy.asarray", "numpy.expand_dims", "numpy.squeeze", "numpy.atleast_3d"})
# Fresh arrays in the source's axis order (numpy's order="K"): strides become positive.
_ORDER_KEEPING_FUNCTIONS = frozenset({"numpy.array", "numpy.copy", "numpy.clip"})
_ORDER_KEEPING_METHODS = frozenset({"astype"})

Resolve = Callable[[str, Optional[cst.BaseExpression]], Optional[cst.BaseExpression]]


def arriving_layout(ctx, node: cst.BaseExpression) -> Layout:
    """How the array ``node`` arrives (kind None: contiguous, or not known)."""
    branches = []  # whether each reassignment followed was bound in a branch left since
    ends_at = []  # the last name followed, when it holds a parameter

    def resolve(name: str, before: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
        branches.append(ctx.bound_conditionally(name, before))
        value = ctx.value_of(name, before=before)
        ends_at[:] = [name] if value is None and ctx.holds_parameter(name, before) else []
        return value

    kind = _layout(ctx, node, resolve, depth=0)
    return Layout(kind, any(branches), ends_at[0] if ends_at and kind is None else None)


def _layout(ctx, node: Optional[cst.BaseExpression], resolve: Resolve, depth: int) -> Optional[str]:
    permuted = False
    fresh = False  # a fresh array was made after anything met further back: no negative strides
    assigned: Optional[cst.BaseExpression] = None  # the assignment being looked through
    stored_at: Optional[int] = None  # the statement line of the last `results["img"] = ...` followed
    for _ in range(MAX_TRAIL):
        if isinstance(node, cst.Name):
            node = assigned = resolve(node.value, assigned)
            continue
        if isinstance(node, cst.Subscript) and depth == 0 and (item := _stored_item(ctx, node, stored_at)) is not None:
            node, stored_at = item  # results["img"] of a dict: what was stored under that key
            continue
        if isinstance(node, cst.Attribute):
            if dotted_name(node.value) == "self":
                node = ctx.attribute_value(node.attr.value)
            elif node.attr.value == "T":
                permuted, node = True, node.value
            else:
                break
            continue
        if isinstance(node, cst.Subscript):
            if _negative_step(node) and not fresh:
                return REVERSED
            node = node.value
            continue
        if isinstance(node, cst.BinaryOperation):  # img / 255.0: a fresh array, same axis order
            array = _array_operand(node)
            if array is None:
                break
            fresh, node = True, array
            continue
        if not isinstance(node, cst.Call):
            break
        name = ctx.qualname(node.func) or ""
        args = positional(node)
        if name in _REVERSING_FUNCTIONS:
            if not fresh:
                return REVERSED
            node = args[0].value if args else None
        elif name in _PERMUTING_FUNCTIONS and args:
            permuted, node = True, args[0].value
        elif method_call(node, *_PERMUTING_METHODS) is not None and _axes(args):
            permuted, node = True, node.func.value
        elif _makes_contiguous(ctx, node, name):
            break
        elif name in _VIEW_FUNCTIONS and args:
            node = args[0].value
        elif (name in _ORDER_KEEPING_FUNCTIONS and args) or method_call(node, *_ORDER_KEEPING_METHODS):
            fresh, node = True, args[0].value if name in _ORDER_KEEPING_FUNCTIONS else node.func.value
        else:
            returned = _returned_layout(ctx, node, depth) if depth == 0 else None
            if returned == REVERSED and not fresh:
                return REVERSED
            permuted = permuted or returned == PERMUTED
            break
    return PERMUTED if permuted else None


def _stored_item(ctx, node: cst.Subscript, before: Optional[int]) -> Optional[Tuple[cst.BaseExpression, int]]:
    """``sample["image"]``: the value the current function last stored under that string key of
    that name (``sample["image"] = np.transpose(sample["image"], (2, 0, 1))``) before the
    statement line ``before`` (or the current one), and that line's position."""
    key = string_key(node)
    if not isinstance(key, str) or not isinstance(node.value, cst.Name):
        return None
    lines = list(simple_statements(ctx.scope.function.node or ctx.module))
    if before is None:
        current = next((line for line in reversed(ctx.ancestors) if isinstance(line, cst.SimpleStatementLine)), None)
        before = next((at for at, line in enumerate(lines) if line is current), len(lines))
    for at in range(before - 1, -1, -1):
        for small in lines[at].body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and _same_item(small.targets[0].target, node, key):
                return small.value, at
    return None


def _same_item(target: cst.BaseExpression, item: cst.Subscript, key: str) -> bool:
    """Is ``target`` ``name["key"]`` for the name and key of ``item``?"""
    return (
        isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
        and target.value.value == item.value.value and string_key(target) == key
    )


def _negative_step(node: cst.Subscript) -> bool:
    """``a[:, :, ::-1]``: a slice with a negative literal step."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice) and isinstance(index.step, cst.UnaryOperation):
            step = index.step
            if isinstance(step.operator, cst.Minus) and isinstance(step.expression, cst.Integer):
                return True
    return False


def _array_operand(node: cst.BinaryOperation) -> Optional[cst.BaseExpression]:
    """The array side of ``array * 2.0`` / ``1 - array`` / ``(vol - vol.mean()) / vol.std()``
    (the other side a number, or a whole-array reduction: a number too)."""
    if _number(node.right):
        return node.left
    if _number(node.left):
        return node.right
    return None


def _number(node: cst.BaseExpression) -> bool:
    """A number literal, or a whole-array reduction (``vol.mean()``, ``vol.std()``: no axis)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float)) or (
        method_call(node, "mean", "std", "max", "min", "sum", "var") is not None and not node.args
    )


def _axes(args) -> bool:
    """numpy's axes (``2, 0, 1``, ``(2, 0, 1)``, a name, or none), not PIL's
    ``Image.FLIP_LEFT_RIGHT``."""
    return all(not isinstance(arg.value, cst.Attribute) for arg in args)


def _makes_contiguous(ctx, call: cst.Call, name: str) -> bool:
    """``np.ascontiguousarray(a)``, ``a.copy()``, or an order-keeping copy told ``order="C"``."""
    if name == "numpy.ascontiguousarray" or method_call(call, "copy") is not None and not _order(call, "K"):
        return True
    return (name in _ORDER_KEEPING_FUNCTIONS or method_call(call, *_ORDER_KEEPING_METHODS) is not None) and _order(
        call, "C"
    )


def _order(call: cst.Call, wanted: str) -> bool:
    order = keyword(call, "order")
    return order is not None and literal_value(order.value) == wanted


def _returned_layout(ctx, call: cst.Call, depth: int) -> Optional[str]:
    """The layout a call of one of the file's own functions (``to_chw(img)``, ``self._load(i)``)
    returns, judged from its ``return`` statements."""
    function = ctx.function_here(call.func)
    if function is None:
        return None
    values = _local_values(function)
    layouts = {
        _layout(ctx, ret.value, lambda name, _before: values.get(name), depth + 1)
        for ret in _returns(function)
        if ret.value is not None
    }
    return REVERSED if REVERSED in layouts else PERMUTED if PERMUTED in layouts else None


def _local_values(function: cst.FunctionDef) -> Dict[str, cst.BaseExpression]:
    """The last expression assigned to each plain name in ``function``."""
    values: Dict[str, cst.BaseExpression] = {}
    for statement in simple_statements(function.body):
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    values[target.value] = small.value
    return values


def _returns(function: cst.FunctionDef) -> Iterator[cst.Return]:
    for statement in simple_statements(function.body):
        yield from (small for small in statement.body if isinstance(small, cst.Return))


def contiguous_fix(ctx, argument: cst.BaseExpression) -> Tuple[Replacement, ...]:
    """Wrap ``argument`` in ``np.ascontiguousarray(...)``, with the module's numpy alias (adding
    ``import numpy as np`` after the last top-level import when there is none)."""
    alias = ctx.imports.alias_of("numpy")
    code = code_in_block(ctx.module, argument, ctx.indentation())
    replacements = [Replacement(argument, f"{alias or 'np'}.ascontiguousarray({code})")]
    if alias is None:
        anchor = _last_import(ctx.module)
        if anchor is None:
            return ()
        text = ctx.module.code_for_node(anchor)
        replacements.append(Replacement(anchor, f"{text}import numpy as np{ctx.module.default_newline}"))
    return tuple(replacements)


def _last_import(module: cst.Module) -> Optional[cst.CSTNode]:
    last = None
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            last = statement
    return last
