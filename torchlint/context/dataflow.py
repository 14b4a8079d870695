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


def uses_cuda(code: str) -> bool:
    """Does the file's text move anything to, or ask anything of, a CUDA device?"""
    return bool(_CUDA_USE.search(code))
