"""numpy arrays on their way to ``torch.from_numpy``: the memory layout they arrive with.

``torch.from_numpy`` shares the array's memory and keeps its strides. Walking back from its
argument (through reassignments and in-place updates, both sides of conditional expressions
and of arithmetic, ``self`` attributes, and the return values of the project's functions,
which other modules tell by key), the first operations met are the last ones applied:

- a reversal (``a[:, ::-1]``, ``np.flip``) leaves negative strides, which ``from_numpy``
  rejects (``REVERSED``);
- a permutation (``.transpose(2, 0, 1)``, ``np.moveaxis``, ``.T``) leaves a view that is
  not C-contiguous, and so is the tensor (``PERMUTED``);
- ``np.ascontiguousarray`` and ``.copy()`` make a fresh C-contiguous array; ``astype``,
  ``np.array`` and arithmetic make a fresh array that keeps the source's axis order
  (numpy's ``order="K"``): no negative strides, but a permuted layout stays permuted.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import libcst as cst

from torchlint.context.calls import arguments_by_parameter
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
_ORDER_KEEPING_FUNCTIONS = frozenset(
    {"numpy.array", "numpy.copy", "numpy.clip"} | {f"numpy.{dtype}" for dtype in "float16 float32 float64 uint8 int32 int64".split()}
)
_ORDER_KEEPING_METHODS = frozenset({"astype", "clip"})
# Joins of arrays into a fresh one laid out like its members when they all share one layout
# (`np.stack([v.transpose(2, 1, 0) for v in vols])` is not C-contiguous; of mixed layouts, it is).
_JOINING_FUNCTIONS = frozenset({"numpy.stack", "numpy.concatenate", "numpy.vstack", "numpy.hstack", "numpy.dstack"})

Resolve = Callable[[str, Optional[cst.CSTNode]], Optional[cst.BaseExpression]]
_RETURNS = "@returns_"  # the key a module tells how a function of it returns its array by (`@returns_permuted`)
_CALLEE_DEPTH = 2  # how many calls deep the arrays a function returns are followed
_MAX_FORKS = 3  # how many conditional expressions and operations deep both sides are followed


def arriving_layout(ctx, node: cst.BaseExpression) -> Layout:
    """How the array ``node`` arrives (kind None: contiguous, or not known)."""
    branches = []  # whether each reassignment followed was bound in a branch left since
    ends_at = []  # the last name followed, when it holds a parameter

    def resolve(name: str, before: Optional[cst.CSTNode]) -> Optional[cst.BaseExpression]:
        while (update := ctx.updated_in_place(name, before)) is not None:
            before = update  # `x /= 255.0`: the same array, updated in place
        branches.append(ctx.bound_conditionally(name, before))
        value = ctx.value_of(name, before=before)
        if value is None and (unpacked := ctx.unpacked_at(name, before)) is not None:
            value = _element_of(*unpacked)  # `data, props = load_case(path)`: what `load_case` returns first
        ends_at[:] = [name] if value is None and ctx.holds_parameter(name, before) else []
        return value

    kind = _layout(ctx, node, _Walk(resolve))
    return Layout(kind, any(branches), ends_at[0] if ends_at and kind is None else None)


def _element_of(source: cst.BaseExpression, position: int) -> Optional[cst.BaseExpression]:
    """The element at ``position`` of what ``source`` (a call) gives, as ``source[position]``."""
    if not isinstance(source, cst.Call):
        return None
    return cst.Subscript(source, [cst.SubscriptElement(cst.Index(cst.Integer(str(position))))])


@dataclass(frozen=True)
class _Walk:
    """How a trail is being walked: ``resolve`` gives a name's value (before an assignment);
    ``depth``: how many calls deep in the functions returning the array; ``forks``: how many
    sides of conditional expressions, operations and paths around branches deep; ``indexed``:
    an axis was indexed away nearer the end (``wav[:, 0]``: of a 2-D ``.T``, a vector is left)."""

    resolve: Resolve
    depth: int = 0
    forks: int = 0
    indexed: bool = False

    def fork(self, indexed: bool) -> "_Walk":
        return replace(self, forks=self.forks + 1, indexed=indexed)


def _layout(
    ctx, node: Optional[cst.BaseExpression], walk: _Walk,
    assigned: Optional[cst.BaseExpression] = None,  # the assignment being looked through
) -> Optional[str]:
    permuted = False
    fresh = False  # a fresh array was made after anything met further back: no negative strides
    stored_at: Optional[int] = None  # the statement line of the last `results["img"] = ...` followed
    indexed = walk.indexed
    forking = walk.forks < _MAX_FORKS
    for _ in range(MAX_TRAIL):
        if isinstance(node, cst.Name):
            other = ctx.value_on_another_path(node.value, assigned) if walk.depth == 0 and forking else None
            permuted = permuted or other is not None and _layout(ctx, other, walk.fork(indexed), other) == PERMUTED
            node = assigned = walk.resolve(node.value, assigned)
            continue
        if isinstance(node, cst.Subscript) and walk.depth == 0 and (item := _stored_item(ctx, node, stored_at)) is not None:
            node, stored_at = item  # results["img"] of a dict: what was stored under that key
            continue
        if isinstance(node, cst.Attribute):
            if dotted_name(node.value) == "self":
                node = ctx.attribute_value(node.attr.value)
            elif node.attr.value == "T":
                permuted, node = permuted or not indexed, node.value
            else:
                break
            continue
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Call) and (at := _integer_index(node)) is not None:
            returned = _returned_layout(ctx, node.value, replace(walk, indexed=indexed), assigned, at)
            return _merged(permuted or returned == PERMUTED, fresh, returned)
        if isinstance(node, cst.Subscript):
            if _negative_step(node) and not fresh:
                return REVERSED
            indexed = indexed or _drops_an_axis(node)
            node = node.value
            continue
        if isinstance(node, cst.IfExp) and forking:  # `a.transpose(2, 0, 1) if a.ndim == 3 else a[None]`
            sides = {_layout(ctx, side, walk.fork(indexed), assigned) for side in (node.body, node.orelse)}
            return _merged(permuted or PERMUTED in sides, fresh, REVERSED if sides == {REVERSED} else None)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            array = _array_operand(node)  # img / 255.0: a fresh array, same axis order
            if array is None and forking:  # (x - mean[:, None, None]) / std: either side's layout
                permuted = permuted or _layout(ctx, node.right, walk.fork(indexed), assigned) == PERMUTED
                array = node.left
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
        elif method_call(node, *_PERMUTING_METHODS) is not None and _axes(node):
            permuted, node = True, node.func.value
        elif _makes_contiguous(ctx, node, name):
            break
        elif name in _VIEW_FUNCTIONS and args:
            node = args[0].value
        elif (name in _ORDER_KEEPING_FUNCTIONS and args) or method_call(node, *_ORDER_KEEPING_METHODS):
            fresh, node = True, args[0].value if name in _ORDER_KEEPING_FUNCTIONS else node.func.value
        elif name in _JOINING_FUNCTIONS and args:
            members = _members(args[0].value)
            joined = bool(members) and forking and all(
                _layout(ctx, member, walk.fork(indexed), assigned) == PERMUTED for member in members
            )
            return PERMUTED if permuted or joined else None
        else:
            return _merged(permuted, fresh, _returned_layout(ctx, node, replace(walk, indexed=indexed), assigned))
    return PERMUTED if permuted else None


def _members(node: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The arrays a list or tuple display holds, or the one a comprehension makes for each item."""
    if isinstance(node, (cst.List, cst.Tuple)):
        elements = node.elements
        return [element.value for element in elements] if all(isinstance(e, cst.Element) for e in elements) else []
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return [node.elt]
    return []


def _merged(permuted: bool, fresh: bool, further: Optional[str]) -> Optional[str]:
    """The layout of a trail that met ``permuted`` and ``fresh`` before reaching an array that
    arrives as ``further``."""
    if further == REVERSED and not fresh:
        return REVERSED
    return PERMUTED if permuted or further == PERMUTED else None


def _drops_an_axis(node: cst.Subscript) -> bool:
    """``a[:, 0]``, ``a[i]``: an index that is no slice, ``None`` or ``...``."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and not isinstance(index.value, cst.Ellipsis) and dotted_name(index.value) != "None":
            return True
    return False


def _integer_index(node: cst.Subscript) -> Optional[int]:
    """``result[1]``: the one integer index."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
        return int(index.value.value)
    return None


def _stored_item(ctx, node: cst.Subscript, before: Optional[int]) -> Optional[Tuple[cst.BaseExpression, int]]:
    """``sample["image"]`` (or ``results[key]``): the value the current function last stored
    under that key of that name (``sample["image"] = np.transpose(sample["image"], (2, 0, 1))``)
    before the statement line ``before`` (or the current one), and that line's position."""
    key = _item_key(node)
    if key is None or not isinstance(node.value, cst.Name):
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


def _item_key(node: cst.Subscript) -> Optional[str]:
    """The key of ``sample["image"]`` (the string) or of ``results[key]`` (the name, quoted by
    backticks so that it cannot equal a string key)."""
    key = string_key(node)
    if isinstance(key, str):
        return key
    index = node.slice[0].slice if len(node.slice) == 1 else None
    return f"`{index.value.value}`" if isinstance(index, cst.Index) and isinstance(index.value, cst.Name) else None


def _same_item(target: cst.BaseExpression, item: cst.Subscript, key: str) -> bool:
    """Is ``target`` ``name[key]`` for the name and key of ``item``?"""
    return (
        isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
        and target.value.value == item.value.value and _item_key(target) == key
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


def _axes(call: cst.Call) -> bool:
    """Given numpy's axes (``2, 0, 1``, ``(2, 0, 1)``, a name, or none), not PIL's
    ``Image.FLIP_LEFT_RIGHT`` or ``method=...``."""
    return all(arg.keyword is None and not isinstance(arg.value, cst.Attribute) for arg in call.args)


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


def _returned_layout(
    ctx, call: cst.Call, walk: _Walk, assigned: Optional[cst.BaseExpression], position: Optional[int] = None,
) -> Optional[str]:
    """The layout a call of a function of the project (``to_chw(img)``, ``self._load(i)``,
    ``utils.hwc_to_chw(img)``) returns, judged from its ``return`` statements (their element at
    ``position``, for a tuple), following what the call passes for a parameter it returns
    (``def normalize(data): data -= data.mean(); return data``). A function of another module
    is for that module to tell."""
    if walk.depth >= _CALLEE_DEPTH:
        return None
    function = ctx.function_here(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if function is None:
        callee = ctx.project_callee(call.func) if walk.depth == 0 and position is None else None
        if callee is None:
            return None
        told = [ctx.need(f"{callee}{_RETURNS}{kind}") for kind in (REVERSED, PERMUTED)]  # ask for both keys
        return REVERSED if told[0] else PERMUTED if told[1] else None
    values = _local_values(function)
    passed = arguments_by_parameter(call, function)
    layouts = set()
    for returned in _returned_values(function, position):
        ends_at = []

        def local(name: str, before: Optional[cst.CSTNode]) -> Optional[cst.BaseExpression]:
            value = _value_before(values.get(name, []), before)
            ends_at[:] = [name] if value is None else []
            return value

        kind = _layout(ctx, returned, _Walk(local, walk.depth + 1, indexed=walk.indexed))
        if kind is None and ends_at and ends_at[0] in passed:
            kind = _layout(ctx, passed[ends_at[0]], replace(walk, depth=walk.depth + 1), assigned)
        layouts.add(kind)
    return REVERSED if REVERSED in layouts else PERMUTED if PERMUTED in layouts else None


def offer_returned_layouts(ctx) -> None:
    """Tell the other modules of the project which module-level functions of this one return an
    array permuted or reversed (``def hwc_to_chw(img): return img.transpose(2, 0, 1)``); once
    per file, whichever of the rules that follow arrays asks."""
    if ctx in _OFFERED:
        return
    _OFFERED.add(ctx)
    for scope in ctx.module_scope.methods.values():
        key = ctx.function_key(scope) if scope.kind == "function" else None
        layout = _returned_layout(ctx, cst.Call(cst.Name(scope.name)), _Walk(_nothing), None) if key else None
        if layout is not None:
            ctx.offer(f"{key}{_RETURNS}{layout}", "yes")


_OFFERED: "weakref.WeakSet[object]" = weakref.WeakSet()  # the file contexts whose layouts are offered


def _nothing(_name: str, _before: Optional[cst.CSTNode]) -> None:
    return None


def _local_values(function: cst.FunctionDef) -> Dict[str, List[cst.BaseExpression]]:
    """The expressions assigned to each plain name in ``function``, in order."""
    values: Dict[str, List[cst.BaseExpression]] = {}
    for statement in simple_statements(function.body):
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    values.setdefault(target.value, []).append(small.value)
    return values


def _value_before(values: List[cst.BaseExpression], before: Optional[cst.CSTNode]) -> Optional[cst.BaseExpression]:
    """The value a name holds where ``before`` (one of its assigned ``values``, or None: after
    them all) is evaluated: ``img`` in ``img = img.astype("float32") / 255`` is the one before."""
    for index, value in enumerate(values):
        if value is before:
            return values[index - 1] if index else None
    return values[-1] if values else None


def _returned_values(function: cst.FunctionDef, position: Optional[int]) -> Iterator[cst.BaseExpression]:
    """What ``function`` returns (the element at ``position`` of the tuples it returns)."""
    for statement in simple_statements(function.body):
        for small in statement.body:
            value = small.value if isinstance(small, cst.Return) else None
            if position is None and value is not None:
                yield value
            elif isinstance(value, cst.Tuple) and position < len(value.elements):
                element = value.elements[position]
                if not isinstance(element, cst.StarredElement):
                    yield element.value


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
