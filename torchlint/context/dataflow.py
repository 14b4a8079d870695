"""Simple dataflow: what each name of one function holds, in source order, across branches.

Each function (and the module) keeps, per name, its tensor kind now and the history of the
expressions assigned to it, so that a chain of reassignments (``img = img[:, ::-1]`` ...
``img = img.transpose(2, 0, 1)``) can be followed backwards: the ``img`` inside an assigned
expression is the value it had *before* that assignment. An opaque rebinding (a loop
target, ``x += 1``, tuple unpacking) is recorded as ``None`` and stops the trail.

Branches: after an ``if``/``else``, a name's kind is the one every branch that falls
through agrees on (a tensor on every path is a tensor; a list on one path and a tensor on
another is unknown). What a branch that ends in ``return``, ``raise``, ``continue`` or
``break`` binds is forgotten once the walk leaves it: the code after the branch never sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

import libcst as cst

from torchlint.context.tensors import HOST, TENSOR, UNBOUND, merge_kinds
from torchlint.walker import is_expression, iter_children, simple_statements

# `to_device(` also matches move_to_device/send_to_device; `to_cuda(` is matched by `cuda(`.
_CUDA_USE = re.compile(
    r"cuda[.(\"':]|\.to\(\s*(device\s*=\s*)?(\w+\.)*\w*(device|gpu)\w*\s*[,)]|to_device\("
)
# `device = torch.device("cpu")` as a statement of its own (not a parameter's default)
_CPU_DEVICE = re.compile(r"^[ \t]*device\s*=\s*(torch\.device\()?[\"']cpu[\"']\)?[ \t]*(#.*)?$", re.MULTILINE)
MAX_TRAIL = 20  # a trail of reassignments longer than this is not followed


@dataclass
class _Branches:
    """An ``if`` statement being walked: what its names were before it, and after each branch."""

    start: int  # the assignment number when the current branch began
    before: Dict[str, Optional[str]] = field(default_factory=dict)  # kinds before the statement
    bound: Set[str] = field(default_factory=set)  # names the current branch binds
    ends: List[Dict[str, Optional[str]]] = field(default_factory=list)  # kinds after each falling-through branch
    all_terminate: bool = True


_PER_NAME = ("dims", "ambiguous", "parts", "unpacked")  # the dicts of ``Bindings`` keyed by name
_NAME_SETS = ("written", "batch_parts")  # and its sets of names


class _Saved(NamedTuple):
    """What one name held before a comprehension bound it (see ``Bindings.save``)."""

    name: str
    kind: Optional[str]
    history: int  # how many values it had been assigned
    values: Dict[str, object]  # its entries in the per-name dicts
    sets: Set[str]  # the name sets it was in
    in_branch: bool  # bound in the current `if` branch already
    before_branch: bool  # its kind before the current `if` already recorded


class Bindings:
    """What the names of one function (or of the module) hold."""

    def __init__(self) -> None:
        self.kinds: Dict[str, Optional[str]] = {}
        self.dims: Dict[str, Tuple[cst.BaseExpression, int]] = {}  # names unpacked from a shape -> (tensor, dim)
        self.written: Set[str] = set()  # names filled element by element with host values since bound
        # names whose branches disagree on their kind (a list or a tensor) -> the kinds they may have
        self.ambiguous: Dict[str, FrozenSet[Optional[str]]] = {}
        self.parts: Dict[str, cst.BaseExpression] = {}  # names bound to a row or an unpacked part -> of what
        # names unpacked from a call's result or a name -> it, and the name's position among the targets
        self.unpacked: Dict[str, Tuple[cst.BaseExpression, int]] = {}
        self.unpacked_by_order: Dict[int, Tuple[cst.BaseExpression, int]] = {}  # the same, by assignment number
        self.batch_parts: Set[str] = set()  # names unpacked from a batch a loader gave (`x, y = batch`)
        self.updates: Dict[int, cst.AugAssign] = {}  # assignment number -> the augmented assignment (`x /= 255`)
        # name -> (assignment number, value, how many `if` branches deep it was bound, in which branch)
        self._history: Dict[str, List[Tuple[int, Optional[cst.BaseExpression], int, int]]] = {}
        self._branches: List[_Branches] = []
        self._branch = 0  # the number of the branch being walked (each `if` branch gets the next)

    def bind(
        self, name: str, kind: Optional[str], value: Optional[cst.BaseExpression], order: int,
        part_of: Optional[cst.BaseExpression] = None,
    ) -> None:
        self.set_kind(name, kind)
        self.dims.pop(name, None)
        self.written.discard(name)
        self.ambiguous.pop(name, None)
        if part_of is not None:
            self.parts[name] = part_of
        else:
            self.parts.pop(name, None)
        self.unpacked.pop(name, None)
        self.batch_parts.discard(name)
        self._history.setdefault(name, []).append((order, value, len(self._branches), self._branch))

    def set_kind(self, name: str, kind: Optional[str]) -> None:
        if self._branches:
            frame = self._branches[-1]
            frame.before.setdefault(name, self.kinds.get(name, UNBOUND))
            frame.bound.add(name)
        self.kinds[name] = kind

    def save(self, names: Iterable[str]) -> List[_Saved]:
        """What ``names`` hold now, for ``restore`` once a comprehension that binds them ends."""
        frame = self._branches[-1] if self._branches else None
        return [
            _Saved(
                name, self.kinds.get(name, UNBOUND), len(self._history.get(name, ())),
                {store: getattr(self, store)[name] for store in _PER_NAME if name in getattr(self, store)},
                {store for store in _NAME_SETS if name in getattr(self, store)},
                frame is not None and name in frame.bound, frame is not None and name in frame.before,
            )
            for name in names
        ]

    def restore(self, saved: List[_Saved]) -> None:
        """Undo the bindings made since ``save``: a comprehension's variables are its own."""
        frame = self._branches[-1] if self._branches else None
        for entry in saved:
            name = entry.name
            if entry.kind == UNBOUND:
                self.kinds.pop(name, None)
            else:
                self.kinds[name] = entry.kind
            self._history[name] = self._history.get(name, [])[:entry.history]
            for store in _PER_NAME:
                if store in entry.values:
                    getattr(self, store)[name] = entry.values[store]
                else:
                    getattr(self, store).pop(name, None)
            for store in _NAME_SETS:
                (getattr(self, store).add if store in entry.sets else getattr(self, store).discard)(name)
            if frame is not None and not entry.in_branch:
                frame.bound.discard(name)
            if frame is not None and not entry.before_branch:
                frame.before.pop(name, None)

    def known_non_tensor(self, name: str) -> bool:
        """Does ``name`` hold something known not to be a tensor on some path (``pad = [0, 0]``
        in one branch, ``pad = torch.zeros(2)`` in the other)? Then how it is used cannot tell
        which. A path where its value is merely unknown (a parameter) does not count."""
        return not self.ambiguous.get(name, frozenset()) <= {TENSOR, HOST, None, UNBOUND}

    def latest(self, name: str, before: Optional[int] = None) -> Optional[cst.BaseExpression]:
        """The value bound last (before the assignment numbered ``before``, if given)."""
        entry = self._latest(name, before)
        return entry[1] if entry else None

    def binding(self, name: str, before: Optional[int] = None) -> Optional[Tuple[int, Optional[cst.BaseExpression]]]:
        """(assignment number, value) of the binding ``latest`` reads."""
        entry = self._latest(name, before)
        return (entry[0], entry[1]) if entry else None

    def conditional(self, name: str, before: Optional[int] = None) -> bool:
        """Was that value bound in a branch the walk has since left (``if flip: img = img[:, ::-1]``),
        so that the code here runs with it on some paths only?"""
        entry = self._latest(name, before)
        return entry is not None and entry[2] > len(self._branches)

    def on_another_path(self, name: str, before: Optional[int] = None) -> Optional[cst.BaseExpression]:
        """When the value ``latest`` reads was bound in a branch the walk has since left, the
        value ``name`` held on a path around it: bound before that branch (``x = x.T`` ... ``if
        mono: x = x[0]``) or in an earlier sibling branch (``if t: y = a.T`` ``else: y = a``)."""
        entries = [entry for entry in self._history.get(name, ()) if before is None or entry[0] < before]
        if not entries or entries[-1][2] <= len(self._branches):
            return None
        last = entries[-1]
        return next((entry[1] for entry in reversed(entries[:-1]) if entry[3] != last[3] and entry[2] <= last[2]), None)

    def _latest(self, name: str, before: Optional[int]):
        for entry in reversed(self._history.get(name, ())):
            if before is None or entry[0] < before:
                return entry
        return None

    # ---- branches: the traversal calls these around each ``if`` ----------------------------
    def enter_if(self, order: int) -> None:
        self._branches.append(_Branches(order))
        self._branch += 1

    def end_branch(self, terminates: bool, order: int) -> None:
        """The current branch of the innermost ``if`` ends; the next one starts from the same state."""
        frame = self._branches[-1]
        if terminates:
            for name in frame.bound:  # its bindings are dead after it
                self._history[name] = [entry for entry in self._history[name] if not frame.start < entry[0] <= order]
        else:
            frame.all_terminate = False
            frame.ends.append({name: self.kinds.get(name, UNBOUND) for name in frame.bound})
        for name in frame.bound:
            before = frame.before[name]
            if before == UNBOUND:
                self.kinds.pop(name, None)
            else:
                self.kinds[name] = before
        frame.bound = set()
        frame.start = order
        self._branch += 1

    def leave_if(self, has_else: bool) -> bool:
        """Merge the branches of the innermost ``if``; True when every branch terminates."""
        frame = self._branches.pop()
        if not has_else:
            frame.ends.append({})
            frame.all_terminate = False
        if frame.all_terminate:
            return True
        for name, before in frame.before.items():
            kinds = [end.get(name, before) for end in frame.ends]
            if any(name in end for end in frame.ends):
                kind = merge_kinds(kinds)
                self.set_kind(name, kind)
                if kind is None and any(other is not None and other != UNBOUND for other in kinds):
                    self.ambiguous[name] = frozenset(kinds)
        return False


def self_attributes(cls: cst.ClassDef) -> Dict[str, Optional[cst.BaseExpression]]:
    """``self.name = value`` assignments in a class's methods; None where assigned more than
    once. A ``self.name = None`` placeholder (in ``__init__``, built later) does not count
    beside one real assignment."""
    found: Dict[str, List[cst.BaseExpression]] = {}
    stack: List[cst.CSTNode] = [cls.body]
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type is cst.ClassDef:
            continue  # a nested class has its own ``self``
        if node_type is cst.Assign:
            for target in node.targets:
                attr = target.target
                if type(attr) is cst.Attribute and type(attr.value) is cst.Name and attr.value.value == "self":
                    found.setdefault(attr.attr.value, []).append(node.value)
            continue
        stack.extend(child for child in iter_children(node) if not is_expression(child))
    return {name: _only_value(values) for name, values in found.items()}


def assigned_before(cls: cst.ClassDef, value: cst.BaseExpression) -> Dict[str, List[cst.BaseExpression]]:
    """The values plain names of the method that assigns ``value`` (to a ``self`` attribute)
    were given before that assignment, oldest first: what the names in ``value`` meant there."""
    for method in cls.body.body:
        if type(method) is not cst.FunctionDef:
            continue
        history: Dict[str, List[cst.BaseExpression]] = {}
        for statement in simple_statements(method.body):
            for small in statement.body:
                if type(small) is not cst.Assign:
                    continue
                if small.value is value:
                    return history
                for target in small.targets:
                    if type(target.target) is cst.Name:
                        history.setdefault(target.target.value, []).append(small.value)
    return {}


def _only_value(values: List[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    real = [value for value in values if not (isinstance(value, cst.Name) and value.value == "None")] or values
    return real[0] if len(real) == 1 else None


def uses_cuda(code: str) -> bool:
    """Does the file's text move anything to, or ask anything of, a CUDA device (or a device
    held in a variable named so: ``x.to(device)``, ``x.to(device=device)``), unless the only
    device it names is the CPU (``device = torch.device("cpu")`` and no mention of CUDA)?"""
    return bool(_CUDA_USE.search(code)) and ("cuda" in code or not _CPU_DEVICE.search(code))
