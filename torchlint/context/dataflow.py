"""Simple dataflow: the expressions assigned to each local name, in source order.

Each function keeps, per name, the history of what was assigned to it, so that a chain of
reassignments (``img = img[:, ::-1]`` ... ``img = img.transpose(2, 0, 1)``) can be followed
backwards: the ``img`` inside an assigned expression is the value it had *before* that
assignment. An opaque rebinding (a loop target, ``x += 1``, tuple unpacking) is recorded as
``None`` and stops the trail.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

_CUDA_USE = re.compile(r"\.cuda\(|\bcuda\.|[\"']cuda")
MAX_TRAIL = 20  # a trail of reassignments longer than this is not followed


class Assignments:
    """Assignment histories of one function's local names."""

    def __init__(self) -> None:
        self._history: Dict[str, List[Tuple[int, Optional[cst.BaseExpression]]]] = {}

    def bind(self, name: str, value: Optional[cst.BaseExpression], order: int) -> None:
        self._history.setdefault(name, []).append((order, value))

    def latest(self, name: str, before: Optional[int] = None) -> Optional[cst.BaseExpression]:
        """The value bound last (before the assignment numbered ``before``, if given)."""
        for order, value in reversed(self._history.get(name, ())):
            if before is None or order < before:
                return value
        return None


def self_attributes(cls: cst.ClassDef) -> Dict[str, Optional[cst.BaseExpression]]:
    """``self.name = value`` assignments in a class's methods; None where assigned more than once."""
    found: Dict[str, Optional[cst.BaseExpression]] = {}
    stack = [cls.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.ClassDef):
            continue  # a nested class has its own ``self``
        if isinstance(node, cst.Assign):
            for target in node.targets:
                attr = target.target
                if isinstance(attr, cst.Attribute) and isinstance(attr.value, cst.Name) and attr.value.value == "self":
                    name = attr.attr.value
                    found[name] = None if name in found else node.value
        stack.extend(child for child in node.children if not isinstance(child, cst.BaseExpression))
    return found


def uses_cuda(code: str) -> bool:
    """Does the file's text move anything to, or ask anything of, a CUDA device?"""
    return bool(_CUDA_USE.search(code))
